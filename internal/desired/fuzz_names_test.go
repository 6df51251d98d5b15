package desired

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzBuildersForAnyName feeds the builders arbitrary MyApp names and namespaces (made DNS
// labels, as the API server accepts) with arbitrary specs, and checks what FuzzBuilders, with its
// one name, cannot: the same MyApp always gives the same intents (server-side apply sees no
// change at steady state); every child is named after the MyApp, in its namespace; every
// label the operator sets is a valid label, and the pods carry it over the user's podLabels; and the Service, outside a migration,
// selects the pods of the Deployment's template, whatever podLabels the user set.
func FuzzBuildersForAnyName(f *testing.F) {
	f.Add("web", "shop", []byte(`{"image":"nginx:1.27","podLabels":{"myapp.example.com/name":"evil","team":"a"}}`))
	f.Add("a", "default", []byte(`{"image":"x","autoScaling":{"enabled":true,"maxReplicas":3},"podDisruptionBudget":{"maxUnavailable":1}}`))
	f.Add("a-very-long-name-of-sixty-three-characters-which-is-the-maximum", "ns-2", []byte(`{"image":"x","serviceType":"NodePort"}`))
	f.Fuzz(func(t *testing.T, name, namespace string, spec []byte) {
		name, namespace = dnsLabel(name), dnsLabel(namespace)
		if len(validation.IsDNS1123Label(name)) > 0 || len(validation.IsDNS1123Label(namespace)) > 0 {
			t.Fatalf("dnsLabel made %q, %q", name, namespace)
		}
		app := newApp(nil)
		app.Name, app.Namespace = name, namespace
		if err := json.Unmarshal(spec, &app.Spec); err != nil {
			return
		}

		d, err := Deployment(app, false)
		if err == nil {
			again, _ := Deployment(app, false)
			if mustJSON(t, d) != mustJSON(t, again) {
				t.Fatal("the Deployment intent differs between two calls")
			}
			if *d.Name != name || *d.Namespace != namespace {
				t.Fatalf("Deployment %s/%s for MyApp %s/%s", *d.Namespace, *d.Name, namespace, name)
			}
			checkLabels(t, "Deployment", d.Labels)
			// The pods carry the user's podLabels as given (admission validates them) and ours.
			for k, v := range Labels(app) {
				if d.Spec.Template.Labels[k] != v {
					t.Fatalf("the pod template carries %s=%q, want %q", k, d.Spec.Template.Labels[k], v)
				}
			}
			checkLabels(t, "operator's", Labels(app))
			for k, v := range Service(app, false).Spec.Selector {
				if d.Spec.Template.Labels[k] != v {
					t.Fatalf("the Service selects %s=%s, which the pods carry as %q", k, v, d.Spec.Template.Labels[k])
				}
			}
		}
		svc := Service(app, false)
		if mustJSON(t, svc) != mustJSON(t, Service(app, false)) {
			t.Fatal("the Service intent differs between two calls")
		}
		if *svc.Name != name || *svc.Namespace != namespace {
			t.Fatalf("Service %s/%s for MyApp %s/%s", *svc.Namespace, *svc.Name, namespace, name)
		}
		checkLabels(t, "Service", svc.Labels)
		checkLabels(t, "Service selector", svc.Spec.Selector)
		checkLabels(t, "migrating Service selector", Service(app, true).Spec.Selector)
		if h := HorizontalPodAutoscaler(app); h != nil {
			if *h.Name != name || *h.Spec.ScaleTargetRef.Name != name {
				t.Fatalf("autoscaler %s scales %s, for MyApp %s", *h.Name, *h.Spec.ScaleTargetRef.Name, name)
			}
			checkLabels(t, "autoscaler", h.Labels)
		}
		if p, err := PodDisruptionBudget(app, false); err == nil && p != nil {
			if *p.Name != name {
				t.Fatalf("budget %s for MyApp %s", *p.Name, name)
			}
			checkLabels(t, "budget", p.Labels)
			checkLabels(t, "budget selector", p.Spec.Selector.MatchLabels)
		}
	})
}

// dnsLabel maps any string to a DNS label (what the API server accepts as a MyApp's name
// and namespace), keeping the fuzzer's input mostly useful: lower-case letters, digits and
// '-', at most 63 characters, starting and ending with a letter or digit.
func dnsLabel(s string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-"
	b := make([]byte, 0, min(len(s), 63))
	for i := 0; i < len(s) && len(b) < 63; i++ {
		b = append(b, alphabet[int(s[i])%len(alphabet)])
	}
	for len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	for len(b) > 0 && b[len(b)-1] == '-' {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return "a"
	}
	return string(b)
}

func checkLabels(t *testing.T, what string, labels map[string]string) {
	t.Helper()
	for k, v := range labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			t.Fatalf("%s label key %q: %v", what, k, errs)
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Fatalf("%s label %s=%q: %v", what, k, v, errs)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
