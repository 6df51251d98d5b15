package argocd

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/status"
)

// TestHealthAgreesWithTheOperatorAndFlux runs the health check on statuses the operator's own
// status computation wrote, not on hand-written fixtures, and checks that Argo CD would say
// what kstatus (Flux) says: Current is Healthy, InProgress is Progressing, Failed is Degraded.
func TestHealthAgreesWithTheOperatorAndFlux(t *testing.T) {
	script, err := compileHealth(readFile(t, filepath.Join(shipped, "example.com", "MyApp", "health.lua")))
	if err != nil {
		t.Fatal(err)
	}
	deployment := func(replicas, total, updated, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		d.Name, d.Generation = "web", 1
		d.Spec.Replicas = &replicas
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: total, UpdatedReplicas: updated,
			ReadyReplicas: available, AvailableReplicas: available}
		avail := corev1.ConditionFalse
		if available >= replicas {
			avail = corev1.ConditionTrue
		}
		d.Status.Conditions = append([]appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: avail}}, conds...)
		return d
	}
	cases := map[string]struct {
		obs  status.Observed
		want kstatus.Status
	}{
		"rolled out":     {status.Observed{Deployment: deployment(3, 3, 3, 3)}, kstatus.CurrentStatus},
		"scaled to zero": {status.Observed{Deployment: deployment(0, 0, 0, 0)}, kstatus.CurrentStatus},
		"rolling out":    {status.Observed{Deployment: deployment(3, 4, 1, 3)}, kstatus.InProgressStatus},
		"scaling up":     {status.Observed{Deployment: deployment(5, 3, 3, 3)}, kstatus.InProgressStatus},
		"no Deployment":  {status.Observed{}, kstatus.InProgressStatus},
		"deadline exceeded": {status.Observed{Deployment: deployment(3, 4, 1, 3, appsv1.DeploymentCondition{
			Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"})}, kstatus.FailedStatus},
		"pods refused": {status.Observed{Deployment: deployment(2, 0, 0, 0, appsv1.DeploymentCondition{
			Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Message: "forbidden"})}, kstatus.FailedStatus},
		"child not owned": {status.Observed{Deployment: deployment(3, 3, 3, 3),
			Failures: []status.Failure{{Reason: examplev1.ReasonChildNotOwned, Message: "m", Terminal: true}}}, kstatus.FailedStatus},
		"rolled back: the last Ready template serves, the spec's failed": {status.Observed{Deployment: deployment(3, 3, 3, 3), DeploymentStale: true,
			RolledBack: &examplev1.RollbackStatus{Reason: examplev1.ReasonImagePullBackOff, Message: "Rolled back"}}, kstatus.FailedStatus},
		"a transient failure being retried": {status.Observed{Deployment: deployment(3, 3, 3, 3),
			Failures: []status.Failure{{Reason: examplev1.ReasonApplyFailed, Message: "m"}}}, kstatus.InProgressStatus},
		"one pod cannot pull beside a rolled-out, available Deployment": {status.Observed{Deployment: deployment(2, 2, 2, 2),
			Pods: []status.ContainerWaiting{{Pod: "web-x", Container: "app", Reason: "ImagePullBackOff"}}}, kstatus.CurrentStatus},
		"pods cannot pull while nothing is available": {status.Observed{Deployment: deployment(2, 2, 2, 0),
			Pods: []status.ContainerWaiting{{Pod: "web-x", Container: "app", Reason: "ImagePullBackOff"}}}, kstatus.FailedStatus},
		"autoscaler without metrics past the grace": {status.Observed{Deployment: deployment(2, 2, 2, 2),
			Autoscaler: noMetricsSince(time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC))}, kstatus.CurrentStatus},
		"autoscaler that cannot scale":         {status.Observed{Deployment: deployment(2, 2, 2, 2), Autoscaler: cannotScale()}, kstatus.CurrentStatus},
		"a new spec applied, not yet observed": {status.Observed{Deployment: notObserved(deployment(3, 3, 3, 3))}, kstatus.InProgressStatus},
		"a new template whose apply failed": {status.Observed{Deployment: deployment(3, 3, 3, 3), DeploymentStale: true,
			Failures: []status.Failure{{Reason: examplev1.ReasonApplyFailed, Message: "m"}}}, kstatus.InProgressStatus},
		"no surge: the one pod replaced, the new one not yet available": {status.Observed{Deployment: deployment(1, 1, 1, 0,
			appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue})}, kstatus.InProgressStatus},
		"the extra pods of a scale-up refused by a quota": {status.Observed{Deployment: deployment(5, 2, 2, 2,
			appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate"})}, kstatus.CurrentStatus},
		"an autoscaler refused while the app serves": {status.Observed{Deployment: deployment(2, 2, 2, 2),
			Failures: []status.Failure{{Reason: examplev1.ReasonChildRejected, Message: "m", Terminal: true, ServedWithout: true}}}, kstatus.CurrentStatus},

		"a canary release under way beside the stable pods": {status.Observed{Deployment: deployment(3, 3, 3, 3), DeploymentStale: true,
			Canary: canaryIn("Progressing")}, kstatus.InProgressStatus},
		"a canary release paused for the user": {status.Observed{Deployment: deployment(3, 3, 3, 3), DeploymentStale: true,
			Canary: canaryIn("Paused")}, kstatus.InProgressStatus},
		"a canary release promoted, the stable pods moving": {status.Observed{Deployment: deployment(3, 4, 1, 3),
			Canary: canaryIn("Promoting")}, kstatus.InProgressStatus},
		"a canary release aborted": {status.Observed{Deployment: deployment(3, 3, 3, 3), DeploymentStale: true,
			Canary: canaryIn("Aborted")}, kstatus.FailedStatus},
		"a release held: metric checks and no Prometheus": {status.Observed{Deployment: deployment(3, 3, 3, 3), DeploymentStale: true,
			Canary: &status.Canary{Steps: 2, Unavailable: true, Held: true}}, kstatus.FailedStatus},
	}
	argo := map[kstatus.Status]string{kstatus.CurrentStatus: "Healthy", kstatus.InProgressStatus: "Progressing", kstatus.FailedStatus: "Degraded"}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			app := &examplev1.MyApp{}
			app.APIVersion, app.Kind = examplev1.GroupVersion.String(), "MyApp"
			app.Name, app.Namespace, app.Generation = "web", "shop", 1
			app.Status = status.Compute(app, tc.obs, metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
			raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(app)
			if err != nil {
				t.Fatal(err)
			}
			flux, err := kstatus.Compute(&unstructured.Unstructured{Object: raw})
			if err != nil {
				t.Fatal(err)
			}
			if flux.Status != tc.want {
				t.Fatalf("kstatus says %s, want %s", flux.Status, tc.want)
			}
			// Through JSON, as Argo CD sees the object.
			health, err := runHealth(script, parseObject(t, mustJSON(t, raw)), sandboxLibs)
			if err != nil {
				t.Fatal(err)
			}
			if health.Status != argo[tc.want] {
				t.Fatalf("Argo CD would say %s (%s) where kstatus says %s", health.Status, health.Message, flux.Status)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// notObserved is d with a spec the deployment controller has not observed yet.
func notObserved(d *appsv1.Deployment) *appsv1.Deployment {
	d.Generation = 2
	return d
}

// noMetricsSince is an autoscaler that has had no metrics since the given time.
func noMetricsSince(since time.Time) *autoscalingv2.HorizontalPodAutoscaler {
	h := &autoscalingv2.HorizontalPodAutoscaler{}
	h.Name = "web"
	h.Status.Conditions = []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.ScalingActive,
		Status: corev1.ConditionFalse, Reason: "FailedGetResourceMetric", LastTransitionTime: metav1.NewTime(since)}}
	return h
}

// cannotScale is an autoscaler that cannot change its target's scale.
func cannotScale() *autoscalingv2.HorizontalPodAutoscaler {
	h := &autoscalingv2.HorizontalPodAutoscaler{}
	h.Name = "web"
	h.Status.Conditions = []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale,
		Status: corev1.ConditionFalse, Reason: "FailedUpdateScale"}}
	return h
}

// canaryIn is a canary release recorded in phase, at its second step of four.
func canaryIn(phase string) *status.Canary {
	return &status.Canary{Steps: 4, Status: &examplev1.CanaryStatus{Template: "t", Phase: phase, Step: 1, Weight: 25, Size: 25,
		Reason: "CrashLoopBackOff", Message: "step 2 of 4: the canary's pods fail"}}
}
