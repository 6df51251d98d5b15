package deploy

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// TestMonitoringOverlay builds config/monitoring, what `make deploy
// DEPLOY_CONFIG=config/monitoring` installs: config/default plus a ServiceMonitor that scrapes
// the manager's metrics Service by the name of its HTTPS port, in the operator's namespace, with
// the job name the alerts select on, and a PrometheusRule holding exactly the groups promtool
// checks and tests (config/prometheus/rules).
func TestMonitoringOverlay(t *testing.T) {
	b := build(t, "../../config/monitoring")
	var monitor, rule *unstructured.Unstructured
	for _, u := range b.others {
		switch u.GetKind() {
		case "ServiceMonitor":
			monitor = u
		case "PrometheusRule":
			rule = u
		}
	}
	if monitor == nil || rule == nil {
		t.Fatalf("config/monitoring lacks a ServiceMonitor or a PrometheusRule; kinds: %v", b.kinds)
	}
	ns := b.deployment.Namespace
	for _, u := range []*unstructured.Unstructured{monitor, rule} {
		if u.GetNamespace() != ns {
			t.Errorf("%s %s is in namespace %q, not the operator's %q", u.GetKind(), u.GetName(), u.GetNamespace(), ns)
		}
	}

	// The ServiceMonitor selects the metrics Service and names its HTTPS port.
	sel, _, _ := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	if len(sel) == 0 || len(endpoints) != 1 {
		t.Fatalf("the ServiceMonitor has selector %v and %d endpoints", sel, len(endpoints))
	}
	endpoint, _ := endpoints[0].(map[string]any)
	const job = "myapp-operator-controller-manager-metrics-service" // the alerts' job label
	found := false
	for _, svc := range b.services {
		if !labels.SelectorFromSet(sel).Matches(labels.Set(svc.Labels)) {
			continue
		}
		if svc.Name != job {
			t.Errorf("the ServiceMonitor selects Service %s; the alert rules expect the job %s", svc.Name, job)
		}
		for _, p := range svc.Spec.Ports {
			if p.Name == endpoint["port"] && p.Port == 8443 {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no Service the ServiceMonitor selects (%v) has the HTTPS port %v", sel, endpoint["port"])
	}
	if endpoint["scheme"] != "https" || endpoint["bearerTokenFile"] == nil {
		t.Errorf("the ServiceMonitor must scrape over HTTPS with its token: %v", endpoint)
	}

	// The PrometheusRule holds the groups of the rule file, unchanged.
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "prometheus", "rules", "myapp-operator.rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []any `json:"groups"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	if len(groups) == 0 || !reflect.DeepEqual(groups, file.Groups) {
		t.Errorf("the PrometheusRule's groups differ from config/prometheus/rules: run make prometheus-rules")
	}
}
