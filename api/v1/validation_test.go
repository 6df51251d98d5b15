package v1_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// The API server, not the operator, enforces the MyApp schema: these tests install the
// generated CRD into a real kube-apiserver and send it MyApps as a user's kubectl would.

var k8s client.Client

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		println("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
		os.Exit(1)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	code := 1
	if err == nil {
		scheme := runtime.NewScheme()
		_ = examplev1.AddToScheme(scheme)
		if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err == nil {
			code = m.Run()
		}
	}
	if err != nil {
		println("setting up the API server:", err.Error())
	}
	// Stop also cleans up after a Start that failed half-way.
	_ = env.Stop()
	os.Exit(code)
}

// create sends a MyApp written as JSON, so that tests can send what Go types cannot hold.
func create(t *testing.T, name, spec string) error {
	t.Helper()
	obj := &unstructured.Unstructured{}
	doc := `{"apiVersion":"example.com/v1","kind":"MyApp","metadata":{"namespace":"default","name":"` + name + `"},"spec":` + spec + `}`
	if err := json.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatalf("bad test JSON %s: %v", doc, err)
	}
	// kubectl asks for strict field validation by default; so do we.
	return k8s.Create(context.Background(), obj, client.FieldValidation("Strict"))
}

func TestAdmissionRejects(t *testing.T) {
	cases := []struct {
		name, spec string
		field      string // must appear in the error
		message    string // and this too, when set
	}{
		{"no-image", `{}`, "spec.image", "Required"},
		{"empty-image", `{"image":""}`, "spec.image", ""},
		{"upper-case-image", `{"image":"NGINX:1.27"}`, "spec.image", "valid image reference"},
		{"image-with-space", `{"image":"nginx 1.27"}`, "spec.image", "valid image reference"},
		{"image-bad-tag", `{"image":"nginx:-1"}`, "spec.image", "valid image reference"},
		{"image-bad-digest", `{"image":"nginx@sha256:abc"}`, "spec.image", "valid image reference"},
		{"zero-replicas", `{"image":"nginx","replicas":0}`, "spec.replicas", "greater than or equal to 1"},
		{"too-many-replicas", `{"image":"nginx","replicas":101}`, "spec.replicas", "less than or equal to 100"},
		{"string-replicas", `{"image":"nginx","replicas":"3"}`, "spec.replicas", ""},
		{"zero-port", `{"image":"nginx","port":0}`, "spec.port", ""},
		{"port-too-high", `{"image":"nginx","port":65536}`, "spec.port", ""},
		{"bad-service-type", `{"image":"nginx","serviceType":"ExternalName"}`, "spec.serviceType", "Unsupported value"},
		{"bad-cpu", `{"image":"nginx","resources":{"limits":{"cpu":"lots"}}}`, "spec.resources.limits.cpu", "quantity"},
		{"bad-memory", `{"image":"nginx","resources":{"requests":{"memory":"1 GB"}}}`, "spec.resources.requests.memory", "quantity"},
		{"negative-cpu", `{"image":"nginx","resources":{"requests":{"cpu":"-1"}}}`, "spec.resources.requests.cpu", "non-negative"},
		{"cpu-request-over-limit", `{"image":"nginx","resources":{"limits":{"cpu":"500m"},"requests":{"cpu":"1"}}}`, "spec.resources.requests.cpu", "must not exceed limits.cpu"},
		{"memory-request-over-limit", `{"image":"nginx","resources":{"limits":{"memory":"1Gi"},"requests":{"memory":"2Gi"}}}`, "spec.resources.requests.memory", "must not exceed limits.memory"},
		{"env-bad-name", `{"image":"nginx","env":[{"name":"1ABC","value":"x"}]}`, "spec.env[0].name", "valid environment variable name"},
		{"env-name-with-equals", `{"image":"nginx","env":[{"name":"A=B"}]}`, "spec.env[0].name", "valid environment variable name"},
		{"env-duplicate-name", `{"image":"nginx","env":[{"name":"A","value":"1"},{"name":"A","value":"2"}]}`, "spec.env[1]", "Duplicate value"},
		{"env-value-and-from", `{"image":"nginx","env":[{"name":"A","value":"1","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}}]}`, "spec.env[0]", "mutually exclusive"},
		{"env-from-both", `{"image":"nginx","env":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"s","key":"k"},"configMapKeyRef":{"name":"c","key":"k"}}}]}`, "spec.env[0].valueFrom", "exactly one"},
		{"env-from-neither", `{"image":"nginx","env":[{"name":"A","valueFrom":{}}]}`, "spec.env[0].valueFrom", "exactly one"},
		{"env-secret-bad-name", `{"image":"nginx","env":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"Bad_Name","key":"k"}}}]}`, "spec.env[0].valueFrom.secretKeyRef.name", ""},
		{"env-configmap-no-key", `{"image":"nginx","env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"c"}}}]}`, "spec.env[0].valueFrom.configMapKeyRef.key", "Required"},
		{"autoscaling-without-max", `{"image":"nginx","autoScaling":{"enabled":true}}`, "spec.autoScaling.maxReplicas", "required when autoscaling is enabled"},
		{"autoscaling-min-over-max", `{"image":"nginx","autoScaling":{"enabled":true,"minReplicas":5,"maxReplicas":2}}`, "spec.autoScaling.minReplicas", "must not exceed maxReplicas"},
		{"autoscaling-zero-min", `{"image":"nginx","autoScaling":{"enabled":true,"minReplicas":0,"maxReplicas":2}}`, "spec.autoScaling.minReplicas", ""},
		{"autoscaling-max-too-high", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":101}}`, "spec.autoScaling.maxReplicas", ""},
		{"autoscaling-target-zero", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"targetCPUUtilizationPercentage":0}}`, "spec.autoScaling.targetCPUUtilizationPercentage", ""},
		{"autoscaling-target-over-100", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"targetCPUUtilizationPercentage":101}}`, "spec.autoScaling.targetCPUUtilizationPercentage", ""},
		{"unknown-field", `{"image":"nginx","replica":3}`, "spec.replica", "unknown field"},
		{"name.with.dots", `{"image":"nginx"}`, "metadata.name", "names the MyApp's Service"},
		{strings.Repeat("a", 64), `{"image":"nginx"}`, "metadata.name", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := create(t, tc.name, tc.spec)
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				t.Fatalf("want the MyApp rejected as invalid, got %v", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error does not name %s: %v", tc.field, err)
			}
			if tc.message != "" && !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error does not say %q: %v", tc.message, err)
			}
		})
	}
}

func TestAdmissionAcceptsAndDefaults(t *testing.T) {
	cases := []struct{ name, spec string }{
		{"minimal", `{"image":"nginx"}`},
		{"full", `{"image":"registry.example.com:5000/team/app:1.2.3","replicas":3,"port":9000,"serviceType":"NodePort",
			"resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"1000m","memory":"512Mi"}},
			"env":[{"name":"A","value":"1"},{"name":"B"},{"name":"my.var-x","valueFrom":{"configMapKeyRef":{"name":"cfg","key":"k.1"}}}],
			"autoScaling":{"enabled":true,"minReplicas":2,"maxReplicas":2,"targetCPUUtilizationPercentage":50}}`},
		{"digest", `{"image":"ghcr.io/org/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}`},
		{"autoscaling-off-without-max", `{"image":"nginx","autoScaling":{"enabled":false}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := create(t, tc.name, tc.spec); err != nil {
				t.Fatalf("want accepted, got %v", err)
			}
		})
	}

	app := &examplev1.MyApp{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "minimal"}, app); err != nil {
		t.Fatal(err)
	}
	if *app.Spec.Replicas != 1 || *app.Spec.Port != 8080 || app.Spec.ServiceType != examplev1.ServiceTypeClusterIP {
		t.Errorf("defaults not applied: %+v", app.Spec)
	}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "autoscaling-off-without-max"}, app); err != nil {
		t.Fatal(err)
	}
	if *app.Spec.AutoScaling.MinReplicas != 1 || *app.Spec.AutoScaling.TargetCPUUtilizationPercentage != 80 {
		t.Errorf("autoscaling defaults not applied: %+v", app.Spec.AutoScaling)
	}
}
