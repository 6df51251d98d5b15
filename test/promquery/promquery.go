// Package promquery reads the PromQL the project ships, in the Grafana dashboard and the alert
// rules, and parses it with Prometheus's own parser, so that tests can check what it selects.
package promquery

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

// grafanaVariables are the dashboard's variables with a value that makes each query a valid
// PromQL expression.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "5m", "$namespace", ".*")

// Dashboard is what the tests read of a Grafana dashboard.
type Dashboard struct {
	Panels []Panel `json:"panels"`
}

// Panel is one panel of a dashboard and its queries.
type Panel struct {
	Title      string     `json:"title"`
	Datasource Datasource `json:"datasource"`
	Targets    []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// Datasource names a panel's data source.
type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// ReadDashboard reads a Grafana dashboard's JSON.
func ReadDashboard(path string) (Dashboard, error) {
	var d Dashboard
	raw, err := os.ReadFile(path)
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return d, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// RuleExpressions reads the expression of every rule of a Prometheus rule file, by rule name.
func RuleExpressions(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert  string `json:"alert"`
				Record string `json:"record"`
				Expr   string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]string{}
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			out[r.Alert+r.Record] = r.Expr
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no rules", path)
	}
	return out, nil
}

// MetricNames parses a query (Grafana's variables given a value) and lists, sorted, the
// metric names its selectors name. A selector without a metric name is an error: the tests
// must be able to tell which metric every query reads.
func MetricNames(query string) ([]string, error) {
	expr, err := parser.ParseExpr(grafanaVariables.Replace(query))
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	var problem error
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			if vs.Name == "" {
				problem = fmt.Errorf("%q selects no metric by name", vs.String())
			}
			names[vs.Name] = true
		}
		return nil
	})
	if problem != nil {
		return nil, problem
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}
