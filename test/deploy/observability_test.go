package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/example/myapp-operator/internal/metrics"
	"github.com/example/myapp-operator/test/promquery"
)

var (
	dashboardPath = filepath.Join("..", "..", "config", "grafana", "myapp-operator.json")
	rulesPath     = filepath.Join("..", "..", "config", "prometheus", "rules", "myapp-operator.rules.yaml")
	alertsDoc     = filepath.Join("..", "..", "docs", "operations", "alerts.md")
	metricsDoc    = filepath.Join("..", "..", "docs", "operations", "metrics.md")
)

// operatorMetric tells the metrics the operator serves beside its own per-MyApp ones: those of
// controller-runtime (reconciles, work queue, leader election). An end-to-end test checks each
// name the dashboard and rules use against a live scrape; this one keeps typos out at once.
var operatorMetric = regexp.MustCompile(`^(controller_runtime_|workqueue_|leader_election_)`)

// TestDashboardQueries parses every query of the Grafana dashboard with Prometheus's parser and
// checks each names a metric the operator serves, through the dashboard's data source variable.
func TestDashboardQueries(t *testing.T) {
	d, err := promquery.ReadDashboard(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Panels) == 0 {
		t.Fatal("the dashboard has no panel")
	}
	ours := map[string]bool{metrics.ConditionName: true, metrics.ReplicasName: true, metrics.InfoName: true, metrics.RollbacksName: true}
	for _, p := range d.Panels {
		if p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q queries data source %q, not the dashboard's ${datasource}", p.Title, p.Datasource.UID)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			names, err := promquery.MetricNames(q.Expr)
			if err != nil {
				t.Errorf("panel %q: %v", p.Title, err)
				continue
			}
			for _, n := range names {
				if !ours[n] && !operatorMetric.MatchString(n) {
					t.Errorf("panel %q reads %s, which the operator does not serve", p.Title, n)
				}
			}
		}
	}
}

// TestAlertsAreDocumented checks that every alert rule reads metrics the operator or Prometheus
// (up) serves, links its runbook, and that the runbook and every metric have a section in the
// docs.
func TestAlertsAreDocumented(t *testing.T) {
	rules, err := promquery.RuleExpressions(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	alerts, err := os.ReadFile(alertsDoc)
	if err != nil {
		t.Fatal(err)
	}
	rulesFile, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]bool{metrics.ConditionName: true, metrics.ReplicasName: true, metrics.InfoName: true, metrics.RollbacksName: true,
		metrics.CanaryWeightName: true, metrics.CanaryStepName: true, metrics.CanaryPhaseName: true, metrics.CanaryAnalysisName: true, "up": true}
	for name, expr := range rules {
		if !strings.Contains(string(alerts), "\n## "+name+"\n") {
			t.Errorf("docs/operations/alerts.md has no section ## %s", name)
		}
		if !strings.Contains(string(rulesFile), "alerts.md#"+strings.ToLower(name)+"\n") {
			t.Errorf("%s has no runbook_url to its section of alerts.md", name)
		}
		names, err := promquery.MetricNames(expr)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, n := range names {
			if !ours[n] && !operatorMetric.MatchString(n) {
				t.Errorf("%s reads %s, which the operator does not serve", name, n)
			}
		}
	}
	doc, err := os.ReadFile(metricsDoc)
	if err != nil {
		t.Fatal(err)
	}
	for n := range ours {
		if n != "up" && !strings.Contains(string(doc), "`"+n+"`") {
			t.Errorf("docs/operations/metrics.md does not document %s", n)
		}
	}
}
