package desired

import (
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestPodMonitor(t *testing.T) {
	cases := map[string]struct {
		metrics            examplev1.AppMetrics
		port, path, period string
	}{
		"the defaults: the app's port and /metrics": {port: "http", path: "/metrics"},
		"a named port, a path and an interval": {metrics: examplev1.AppMetrics{PortName: "admin", Path: "/stats", Interval: "30s"},
			port: "admin", path: "/stats", period: "30s"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: "u1"},
				Spec: examplev1.MyAppSpec{Image: "nginx", Metrics: &tc.metrics}}
			pm := PodMonitor(app)
			if *pm.Name != "web" || *pm.Namespace != "team" || *pm.Kind != "PodMonitor" || *pm.APIVersion != "monitoring.coreos.com/v1" {
				t.Fatalf("named %s/%s, kind %s %s", *pm.Namespace, *pm.Name, *pm.APIVersion, *pm.Kind)
			}
			if len(pm.OwnerReferences) != 1 || *pm.OwnerReferences[0].UID != "u1" || !*pm.OwnerReferences[0].Controller {
				t.Errorf("owner references %+v: want the MyApp as controller", pm.OwnerReferences)
			}
			if got := pm.Spec.Selector.MatchLabels; len(got) != 1 || got[LabelSelector] != "web" {
				t.Errorf("selector %v, want the Deployment's selector", got)
			}
			eps := pm.Spec.PodMetricsEndpoints
			if len(eps) != 1 {
				t.Fatalf("%d endpoints, want 1", len(eps))
			}
			ep := eps[0]
			if deref(ep.Port) != tc.port || deref(ep.Path) != tc.path {
				t.Errorf("endpoint port %v path %v, want %s %s", ep.Port, ep.Path, tc.port, tc.path)
			}
			if (tc.period == "") != (ep.Interval == nil) || (ep.Interval != nil && *ep.Interval != monitoringv1.Duration(tc.period)) {
				t.Errorf("interval %v, want %q", ep.Interval, tc.period)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
