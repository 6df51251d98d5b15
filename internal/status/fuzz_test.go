package status

import (
	"encoding/json"
	"regexp"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// FuzzSeeds are observations, as JSON, that reach every branch of the decision: rollouts,
// scales, deadlines, refused pods, stuck autoscalers, terminal and retried failures, waits.
// config/argocd's fuzz target starts from them too.
var fuzzSeeds = []string{
	`{}`,
	`{"Deployment":{"metadata":{"name":"web","generation":1},"spec":{"replicas":3},"status":{"observedGeneration":1,"replicas":3,"updatedReplicas":3,"readyReplicas":3,"availableReplicas":3,"conditions":[{"type":"Available","status":"True"}]}}}`,
	`{"Deployment":{"metadata":{"name":"web","generation":2},"spec":{"replicas":3},"status":{"observedGeneration":1,"replicas":3,"updatedReplicas":3,"availableReplicas":3}}}`,
	`{"Deployment":{"metadata":{"name":"web","generation":1},"spec":{"replicas":3},"status":{"observedGeneration":1,"replicas":4,"updatedReplicas":1,"availableReplicas":3,"conditions":[{"type":"Available","status":"True"},{"type":"Progressing","status":"False","reason":"ProgressDeadlineExceeded"}]}}}`,
	`{"Deployment":{"metadata":{"name":"web","generation":1},"spec":{"replicas":2},"status":{"observedGeneration":1,"conditions":[{"type":"ReplicaFailure","status":"True","message":"pods \"web-1\" is forbidden: violates PodSecurity"}]}}}`,
	`{"Deployment":{"metadata":{"name":"web","generation":1},"spec":{"replicas":0},"status":{"observedGeneration":1,"conditions":[{"type":"Available","status":"True"}]}}}`,
	`{"Deployment":{"metadata":{"name":"web","generation":1},"status":{"observedGeneration":1,"replicas":5,"updatedReplicas":5,"availableReplicas":-1}},"Autoscaler":{"metadata":{"name":"web"},"status":{"conditions":[{"type":"ScalingActive","status":"False","reason":"FailedGetResourceMetric","message":"missing request for cpu"}]}}}`,
	`{"Failures":[{"Reason":"ApplyFailed","Message":"m"},{"Reason":"ChildNotOwned","Message":"n","Terminal":true}]}`,
	`{"Failures":[{"Reason":"InvalidSpec","Message":"spec.image","Terminal":true}],"Waiting":{"Reason":"SelectorMigration","Message":"w"}}`,
	`{"Waiting":{"Reason":"WaitingForPredecessor","Message":"w"},"ReconcileRequest":"1700000000","Selector":"myapp.example.com/name=web"}`,
	`{"Unreachable":{"Reason":"WaitingForGateway","Message":"w"},"URL":"https://shop.example.com/"}`,
	`{"DeploymentStale":true,"Deployment":{"metadata":{"name":"web","generation":1},"spec":{"replicas":3},"status":{"observedGeneration":1,"replicas":3,"updatedReplicas":3,"availableReplicas":3}},"Canary":{"Steps":4,"Status":{"template":"t","phase":"Progressing","step":1,"weight":25,"size":25,"stepStarted":"2026-12-01T00:00:00Z"}}}`,
	`{"Canary":{"Steps":2,"Inconclusive":"check \"a\" cannot be evaluated","Status":{"template":"t","phase":"Paused","step":1,"weight":5,"size":5,"stepStarted":"2026-12-01T00:00:00Z"}}}`,
	`{"Canary":{"Steps":2,"Status":{"template":"t","phase":"Aborted","step":0,"weight":0,"size":5,"reason":"CrashLoopBackOff","message":"step 1 of 2: the canary's pods fail","stepStarted":"2026-12-01T00:00:00Z"}}}`,
	`{"Canary":{"Steps":2,"Unavailable":true,"Held":true}}`,
	`{"Deployment":{"metadata":{"name":"web","generation":3},"spec":{"replicas":4},"status":{"observedGeneration":2,"replicas":5,"updatedReplicas":1,"availableReplicas":4}},"Canary":{"Steps":2,"Status":{"template":"t","phase":"Aborted","step":2,"weight":100,"size":100,"stableMoved":true,"reason":"CanaryAbortedByUser","message":"step 2 of 2: aborted by the user","stepStarted":"2026-12-01T00:00:00Z"}}}`,
}

// conditionReason is the pattern the API server validates a condition reason against
// (metav1.Condition).
var conditionReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// FuzzCompute computes the status from arbitrary observations (any Deployment and autoscaler
// status, any failures) on top of an arbitrary earlier status, and checks what every reader
// relies on: no panic; the five conditions, once each, for this generation, each with a
// reason the API server accepts (when the failures' reasons are) and a message; the
// conditions agree with each other; computing again from the same observation changes
// nothing (no status churn); and kstatus reads the result without error, as Current only
// when Ready is True and nothing is under way or stalled.
func FuzzCompute(f *testing.F) {
	for i, seed := range fuzzSeeds {
		f.Add([]byte(seed), int64(1+i%3), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, generation int64, wasReady bool) {
		var obs Observed
		if err := json.Unmarshal(data, &obs); err != nil {
			return
		}
		if generation < 1 {
			generation = 1
		}
		app := &examplev1.MyApp{}
		app.APIVersion, app.Kind = examplev1.GroupVersion.String(), "MyApp"
		app.Name, app.Namespace, app.Generation = "web", "shop", generation
		earlier := metav1.ConditionFalse
		if wasReady {
			earlier = metav1.ConditionTrue
		}
		app.Status.Conditions = []metav1.Condition{{Type: examplev1.ConditionReady, Status: earlier,
			Reason: examplev1.ReasonAvailable, Message: "earlier", LastTransitionTime: t0}}

		app.Status = Compute(app, obs, t0)
		checkConditions(t, app, obs)

		// Computed again at the same time: an autoscaler's metrics grace may legitimately end
		// between two times (TestComputeCountsAndTimes covers times).
		if again := Compute(app, obs, t0); !equality.Semantic.DeepEqual(again, app.Status) {
			t.Fatalf("computing again from the same observation changed the status:\n%+v\nto\n%+v", app.Status, again)
		}

		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(app)
		if err != nil {
			t.Fatal(err)
		}
		res, err := kstatus.Compute(&unstructured.Unstructured{Object: raw})
		if err != nil {
			t.Fatalf("kstatus: %v", err)
		}
		is := func(typ string) bool { return meta.IsStatusConditionTrue(app.Status.Conditions, typ) }
		current := is(examplev1.ConditionReady) && !is(examplev1.ConditionReconciling) && !is(examplev1.ConditionStalled)
		if (res.Status == kstatus.CurrentStatus) != current {
			t.Fatalf("kstatus says %s for conditions %+v", res.Status, app.Status.Conditions)
		}
		if (res.Status == kstatus.FailedStatus) != is(examplev1.ConditionStalled) {
			t.Fatalf("kstatus says %s for conditions %+v", res.Status, app.Status.Conditions)
		}
	})
}

func checkConditions(t *testing.T, app *examplev1.MyApp, obs Observed) {
	t.Helper()
	validReasons := true
	for _, f := range obs.Failures {
		validReasons = validReasons && conditionReason.MatchString(f.Reason)
	}
	if obs.Waiting != nil {
		validReasons = validReasons && conditionReason.MatchString(obs.Waiting.Reason)
	}
	if obs.Unreachable != nil {
		validReasons = validReasons && conditionReason.MatchString(obs.Unreachable.Reason)
	}
	seen := map[string]bool{}
	for _, c := range app.Status.Conditions {
		if seen[c.Type] {
			t.Fatalf("condition %s twice: %+v", c.Type, app.Status.Conditions)
		}
		seen[c.Type] = true
		if c.ObservedGeneration != app.Generation {
			t.Fatalf("condition %s is for generation %d, not %d", c.Type, c.ObservedGeneration, app.Generation)
		}
		if c.Status != metav1.ConditionTrue && c.Status != metav1.ConditionFalse {
			t.Fatalf("condition %s is %q", c.Type, c.Status)
		}
		if validReasons && !conditionReason.MatchString(c.Reason) {
			t.Fatalf("condition %s has reason %q, which the API server refuses", c.Type, c.Reason)
		}
		if c.Message == "" && validReasons && obsMessagesSet(obs) {
			t.Fatalf("condition %s has no message", c.Type)
		}
	}
	for _, typ := range []string{examplev1.ConditionReady, examplev1.ConditionReconciling, examplev1.ConditionStalled,
		examplev1.ConditionProgressing, examplev1.ConditionDegraded} {
		if !seen[typ] {
			t.Fatalf("condition %s missing: %+v", typ, app.Status.Conditions)
		}
	}
	get := func(typ string) metav1.Condition { return *meta.FindStatusCondition(app.Status.Conditions, typ) }
	ready, reconciling, stalled := get(examplev1.ConditionReady), get(examplev1.ConditionReconciling), get(examplev1.ConditionStalled)
	progressing, degraded := get(examplev1.ConditionProgressing), get(examplev1.ConditionDegraded)
	if reconciling.Status != progressing.Status || reconciling.Reason != progressing.Reason {
		t.Fatalf("Reconciling %s/%s and Progressing %s/%s disagree", reconciling.Status, reconciling.Reason, progressing.Status, progressing.Reason)
	}
	if stalled.Status == metav1.ConditionTrue {
		if ready.Status == metav1.ConditionTrue || reconciling.Status == metav1.ConditionTrue || degraded.Status != metav1.ConditionTrue {
			t.Fatalf("Stalled, yet Ready %s, Reconciling %s, Degraded %s", ready.Status, reconciling.Status, degraded.Status)
		}
	}
	if stalled.Status == metav1.ConditionFalse && stalled.Reason != examplev1.ReasonAsExpected {
		t.Fatalf("Stalled False with reason %s", stalled.Reason)
	}
}

// obsMessagesSet: every failure handed in has a message (the operator's always do).
func obsMessagesSet(obs Observed) bool {
	for _, f := range obs.Failures {
		if f.Message == "" {
			return false
		}
	}
	return (obs.Waiting == nil || obs.Waiting.Message != "") && (obs.Unreachable == nil || obs.Unreachable.Message != "")
}
