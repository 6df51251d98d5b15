package argocd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/status"
)

// FuzzHealthOnAnyObject runs the MyApp health check on arbitrary JSON objects (seeded with
// its fixtures), in Argo CD's sandbox and with the open libraries: it never errors (an
// erroring script is Unknown to Argo CD, which never converges) and returns a status Argo CD
// knows. runHealth checks the returned table.
func FuzzHealthOnAnyObject(f *testing.F) {
	fixtures, _ := filepath.Glob(filepath.Join(shipped, "example.com", "MyApp", "testdata", "*.yaml"))
	for _, path := range fixtures {
		doc, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(js)
	}
	f.Add([]byte(`{"status":{}}`))
	f.Add([]byte(`{"metadata":{"generation":1},"status":{"observedGeneration":1,"conditions":{"type":"Ready"}}}`))
	f.Add([]byte(`{"metadata":{"generation":"2"},"status":{"observedGeneration":{},"conditions":[null,1,{"type":5},{"type":"Ready","status":"True","message":[]}]}}`))
	script := mustCompile(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		var obj map[string]any
		if json.Unmarshal(doc, &obj) != nil {
			return
		}
		for _, l := range []libs{sandboxLibs, openLibs} {
			if _, err := runHealth(script, obj, l); err != nil {
				t.Fatalf("%s: %v on %s", l, err, doc)
			}
		}
	})
}

// FuzzHealthAgreesWithKstatus computes statuses with the operator's own status computation
// from arbitrary observations, and runs kstatus (Flux) and the health check on them. Where
// TestHealthAgreesWithTheOperatorAndFlux states agreement (no problem being retried: Degraded
// is False, or the MyApp is Stalled), Argo CD says what kstatus says: Current is Healthy,
// InProgress is Progressing, Failed is Degraded. Everywhere, Argo CD's Healthy is Flux's
// Current and Flux's Failed is Argo CD's Degraded; Argo CD alone also shows a retried
// problem (Degraded True) as Degraded, by design (see health.lua).
func FuzzHealthAgreesWithKstatus(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"Deployment":{"metadata":{"name":"web","generation":1},"spec":{"replicas":3},"status":{"observedGeneration":1,"replicas":3,"updatedReplicas":3,"readyReplicas":3,"availableReplicas":3,"conditions":[{"type":"Available","status":"True"}]}}}`,
		`{"Deployment":{"metadata":{"name":"web","generation":1},"spec":{"replicas":3},"status":{"observedGeneration":1,"replicas":4,"updatedReplicas":1,"availableReplicas":3,"conditions":[{"type":"Available","status":"True"},{"type":"Progressing","status":"False","reason":"ProgressDeadlineExceeded"}]}}}`,
		`{"Deployment":{"metadata":{"name":"web","generation":1},"spec":{"replicas":2},"status":{"observedGeneration":1,"conditions":[{"type":"ReplicaFailure","status":"True","message":"forbidden"}]}}}`,
		`{"Deployment":{"metadata":{"name":"web","generation":1},"status":{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"availableReplicas":1,"conditions":[{"type":"Available","status":"True"}]}},"Autoscaler":{"metadata":{"name":"web"},"status":{"conditions":[{"type":"AbleToScale","status":"False","reason":"FailedGetScale"}]}}}`,
		`{"Failures":[{"Reason":"ApplyFailed","Message":"m"}]}`,
		`{"Failures":[{"Reason":"ChildNotOwned","Message":"n","Terminal":true}]}`,
		`{"Waiting":{"Reason":"WaitingForPredecessor","Message":"w"}}`,
		`{"Deployment":{"metadata":{"name":"web","generation":2},"spec":{"replicas":2},"status":{"observedGeneration":2,"replicas":2,"updatedReplicas":2,"readyReplicas":2,"availableReplicas":2}},"DeploymentStale":true,"RolledBack":{"generation":1,"failedTemplate":"b","template":"a","reason":"ImagePullBackOff","message":"Rolled back","time":"2026-01-01T00:00:00Z"}}`,
	} {
		f.Add([]byte(seed), int64(1), int64(0))
		f.Add([]byte(seed), int64(3), int64(1))
	}
	script := mustCompile(f)
	argo := map[kstatus.Status]string{kstatus.CurrentStatus: "Healthy", kstatus.InProgressStatus: "Progressing", kstatus.FailedStatus: "Degraded"}
	f.Fuzz(func(t *testing.T, data []byte, generation, newer int64) {
		var obs status.Observed
		if json.Unmarshal(data, &obs) != nil {
			return
		}
		generation = max(generation, 1)
		app := &examplev1.MyApp{}
		app.APIVersion, app.Kind = examplev1.GroupVersion.String(), "MyApp"
		app.Name, app.Namespace, app.Generation = "web", "shop", generation
		app.Status = status.Compute(app, obs, metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
		// A spec change the operator has not seen yet, when newer > 0.
		if newer > 0 && app.Generation < 1<<40 {
			app.Generation += min(newer, 1<<20)
		}
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(app)
		if err != nil {
			t.Fatal(err)
		}
		flux, err := kstatus.Compute(&unstructured.Unstructured{Object: raw})
		if err != nil {
			t.Fatalf("kstatus: %v", err)
		}
		// Through JSON, as Argo CD sees the object.
		js, err := json.Marshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(js, &obj); err != nil {
			t.Fatal(err)
		}
		health, err := runHealth(script, obj, sandboxLibs)
		if err != nil {
			t.Fatal(err)
		}
		degraded := meta.IsStatusConditionTrue(app.Status.Conditions, examplev1.ConditionDegraded)
		stalled := meta.IsStatusConditionTrue(app.Status.Conditions, examplev1.ConditionStalled)
		switch {
		case !degraded || stalled || app.Generation != app.Status.ObservedGeneration:
			if health.Status != argo[flux.Status] {
				t.Fatalf("Argo CD would say %s (%s) where kstatus says %s (%s); conditions %+v",
					health.Status, health.Message, flux.Status, flux.Message, app.Status.Conditions)
			}
		case health.Status == "Healthy" && flux.Status != kstatus.CurrentStatus,
			flux.Status == kstatus.FailedStatus && health.Status != "Degraded":
			t.Fatalf("Argo CD says %s where kstatus says %s", health.Status, flux.Status)
		}
	})
}

func mustCompile(f *testing.F) *lua.FunctionProto {
	script, err := os.ReadFile(filepath.Join(shipped, "example.com", "MyApp", "health.lua"))
	if err != nil {
		f.Fatal(err)
	}
	proto, err := compileHealth(string(script))
	if err != nil {
		f.Fatal(err)
	}
	return proto
}
