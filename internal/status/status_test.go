package status

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
)

// deployment is a Deployment of the given generations, wanting replicas, with the status
// counts total, updated, ready and available, and Available true or not.
func deployment(generation, observed int64, replicas, total, updated, ready, available int32, isAvailable bool) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Name, d.Generation = "web", generation
	d.Spec.Replicas = &replicas
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: observed, Replicas: total, UpdatedReplicas: updated,
		ReadyReplicas: ready, AvailableReplicas: available,
	}
	avail := corev1.ConditionFalse
	if isAvailable {
		avail = corev1.ConditionTrue
	}
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: avail}}
	return d
}

func withCondition(d *appsv1.Deployment, c appsv1.DeploymentCondition) *appsv1.Deployment {
	d.Status.Conditions = append(d.Status.Conditions, c)
	return d
}

func autoscaler(conds ...autoscalingv2.HorizontalPodAutoscalerCondition) *autoscalingv2.HorizontalPodAutoscaler {
	h := &autoscalingv2.HorizontalPodAutoscaler{}
	h.Name = "web"
	h.Status.Conditions = conds
	return h
}

// want is the status of each condition and the reason of Ready, Reconciling and Stalled.
type want struct {
	ready, reconciling, stalled, degraded bool
	readyReason, reconcilingReason        string
	stalledReason, degradedReason         string
}

func TestConditions(t *testing.T) {
	cases := map[string]struct {
		obs      Observed
		previous []metav1.Condition
		want     want
	}{
		"no deployment yet": {
			obs:  Observed{},
			want: want{readyReason: examplev1.ReasonRollingOut, reconciling: true, reconcilingReason: examplev1.ReasonRollingOut},
		},
		"new deployment, no pod available yet": {
			obs:  Observed{Deployment: deployment(1, 1, 3, 0, 0, 0, 0, false)},
			want: want{readyReason: examplev1.ReasonScaling, reconciling: true, reconcilingReason: examplev1.ReasonScaling},
		},
		"rolled out and available": {
			obs:  Observed{Deployment: deployment(2, 2, 3, 3, 3, 3, 3, true)},
			want: want{ready: true, readyReason: examplev1.ReasonAvailable, reconcilingReason: examplev1.ReasonRolloutComplete},
		},
		"scaled to zero": {
			obs:  Observed{Deployment: deployment(2, 2, 0, 0, 0, 0, 0, true)},
			want: want{ready: true, readyReason: examplev1.ReasonAvailable, reconcilingReason: examplev1.ReasonRolloutComplete},
		},
		"old pods being replaced": {
			obs:  Observed{Deployment: deployment(2, 2, 3, 4, 1, 3, 3, true)},
			want: want{readyReason: examplev1.ReasonRollingOut, reconciling: true, reconcilingReason: examplev1.ReasonRollingOut},
		},
		"a scale-up is not Ready until its pods are there, as kubectl rollout status waits": {
			obs:  Observed{Deployment: deployment(3, 3, 5, 3, 3, 3, 3, true)},
			want: want{readyReason: examplev1.ReasonScaling, reconciling: true, reconcilingReason: examplev1.ReasonScaling},
		},
		"a spec not yet observed is not Ready, whatever Ready said before": {
			obs:      Observed{Deployment: deployment(3, 2, 3, 3, 3, 3, 3, true)},
			previous: []metav1.Condition{{Type: examplev1.ConditionReady, Status: metav1.ConditionTrue, Reason: examplev1.ReasonAvailable, Message: "m"}},
			want:     want{readyReason: examplev1.ReasonRollingOut, reconciling: true, reconcilingReason: examplev1.ReasonRollingOut},
		},
		"a Deployment that does not take the current spec is not Ready, however well it serves the old one": {
			obs: Observed{Deployment: deployment(2, 2, 3, 3, 3, 3, 3, true), DeploymentStale: true,
				Failures: []Failure{{Reason: examplev1.ReasonApplyFailed, Message: "m"}}},
			want: want{readyReason: examplev1.ReasonApplyFailed, reconciling: true, reconcilingReason: examplev1.ReasonApplyFailed,
				degraded: true, degradedReason: examplev1.ReasonApplyFailed},
		},
		"every pod of the current template created, none available, though the Deployment says Available": {
			obs:  Observed{Deployment: deployment(2, 2, 1, 1, 1, 0, 0, true)},
			want: want{readyReason: examplev1.ReasonScaling, reconciling: true, reconcilingReason: examplev1.ReasonScaling},
		},
		"the extra pods of a scale-up refused while the current template serves": {
			obs: Observed{Deployment: withCondition(deployment(2, 2, 5, 2, 2, 2, 2, true), appsv1.DeploymentCondition{
				Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "exceeded quota: compute"})},
			want: want{ready: true, readyReason: examplev1.ReasonAvailable, reconcilingReason: examplev1.ReasonRolloutComplete,
				degraded: true, degradedReason: examplev1.ReasonReplicaFailure},
		},
		"a scale-up past its progress deadline while the current template serves": {
			obs: Observed{Deployment: withCondition(deployment(2, 2, 5, 5, 5, 2, 2, true), appsv1.DeploymentCondition{
				Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"})},
			want: want{readyReason: examplev1.ReasonScaling, reconciling: true, reconcilingReason: examplev1.ReasonScaling,
				degraded: true, degradedReason: examplev1.ReasonProgressDeadlineExceeded},
		},
		"an autoscaler the API server refuses while the app serves": {
			obs: Observed{Deployment: deployment(2, 2, 3, 3, 3, 3, 3, true),
				Failures: []Failure{{Reason: examplev1.ReasonChildRejected, Message: "m", Terminal: true, ServedWithout: true}}},
			want: want{ready: true, readyReason: examplev1.ReasonAvailable, reconcilingReason: examplev1.ReasonRolloutComplete,
				degraded: true, degradedReason: examplev1.ReasonChildRejected},
		},
		"an autoscaler the API server refuses during a rollout: the rollout goes on, Degraded": {
			obs: Observed{Deployment: deployment(2, 2, 3, 4, 1, 3, 3, true),
				Failures: []Failure{{Reason: examplev1.ReasonChildRejected, Message: "m", Terminal: true, ServedWithout: true}}},
			want: want{readyReason: examplev1.ReasonRollingOut, reconciling: true, reconcilingReason: examplev1.ReasonRollingOut,
				degraded: true, degradedReason: examplev1.ReasonChildRejected},
		},
		"all pods there and available: the counts decide, not the Available condition": {
			obs:  Observed{Deployment: deployment(2, 2, 3, 3, 3, 3, 3, false)},
			want: want{ready: true, readyReason: examplev1.ReasonAvailable, reconcilingReason: examplev1.ReasonRolloutComplete},
		},
		"rolled out but pods no longer available": {
			obs:  Observed{Deployment: deployment(2, 2, 3, 3, 3, 1, 1, false)},
			want: want{readyReason: examplev1.ReasonUnavailable, reconciling: true, reconcilingReason: examplev1.ReasonUnavailable},
		},
		"progress deadline exceeded": {
			obs: Observed{Deployment: withCondition(deployment(2, 2, 3, 4, 1, 3, 3, true), appsv1.DeploymentCondition{
				Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"})},
			want: want{readyReason: examplev1.ReasonProgressDeadlineExceeded, reconcilingReason: examplev1.ReasonProgressDeadlineExceeded,
				stalled: true, stalledReason: examplev1.ReasonProgressDeadlineExceeded, degraded: true, degradedReason: examplev1.ReasonProgressDeadlineExceeded},
		},
		"pods refused (ReplicaFailure)": {
			obs: Observed{Deployment: withCondition(deployment(1, 1, 2, 0, 0, 0, 0, false), appsv1.DeploymentCondition{
				Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
				Message: `pods "web-x" is forbidden: violates PodSecurity "restricted:latest"`})},
			want: want{readyReason: examplev1.ReasonReplicaFailure, reconcilingReason: examplev1.ReasonReplicaFailure,
				stalled: true, stalledReason: examplev1.ReasonReplicaFailure, degraded: true, degradedReason: examplev1.ReasonReplicaFailure},
		},
		"child not owned": {
			obs: Observed{Deployment: deployment(2, 2, 3, 3, 3, 3, 3, true),
				Failures: []Failure{{Reason: examplev1.ReasonChildNotOwned, Message: "m", Terminal: true}}},
			want: want{readyReason: examplev1.ReasonChildNotOwned, reconcilingReason: examplev1.ReasonChildNotOwned,
				stalled: true, stalledReason: examplev1.ReasonChildNotOwned, degraded: true, degradedReason: examplev1.ReasonChildNotOwned},
		},
		"a transient failure keeps Ready from the Deployment and reconciles on": {
			obs: Observed{Deployment: deployment(2, 2, 3, 3, 3, 3, 3, true),
				Failures: []Failure{{Reason: examplev1.ReasonApplyFailed, Message: "m"}}},
			want: want{ready: true, readyReason: examplev1.ReasonAvailable, reconciling: true, reconcilingReason: examplev1.ReasonApplyFailed,
				degraded: true, degradedReason: examplev1.ReasonApplyFailed},
		},
		"the terminal failure is Stalled even after a transient one": {
			obs: Observed{Deployment: deployment(2, 2, 3, 3, 3, 3, 3, true), Failures: []Failure{
				{Reason: examplev1.ReasonApplyFailed, Message: "m"}, {Reason: examplev1.ReasonChildRejected, Message: "m", Terminal: true}}},
			want: want{readyReason: examplev1.ReasonChildRejected, reconcilingReason: examplev1.ReasonChildRejected,
				stalled: true, stalledReason: examplev1.ReasonChildRejected, degraded: true, degradedReason: examplev1.ReasonChildRejected},
		},
		"autoscaler cannot scale": {
			obs: Observed{Deployment: deployment(2, 2, 3, 3, 3, 3, 3, true), Autoscaler: autoscaler(
				autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue},
				autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse,
					Reason: "FailedGetScale", Message: "deployments.apps \"web\" not found"})},
			want: want{ready: true, readyReason: examplev1.ReasonAvailable, reconcilingReason: examplev1.ReasonRolloutComplete,
				degraded: true, degradedReason: examplev1.ReasonAutoscalerUnableToScale},
		},
		"waiting for a predecessor's children": {
			obs:  Observed{Waiting: &Failure{Reason: examplev1.ReasonWaitingForPredecessor, Message: "m"}},
			want: want{readyReason: examplev1.ReasonRollingOut, reconciling: true, reconcilingReason: examplev1.ReasonWaitingForPredecessor},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := &examplev1.MyApp{}
			app.Generation = 4
			app.Status.Conditions = tc.previous
			s := Compute(app, tc.obs, t0)
			g.Expect(s.Conditions).To(HaveLen(5))
			check := func(typ string, status bool, reason string) {
				c := meta.FindStatusCondition(s.Conditions, typ)
				g.Expect(c).NotTo(BeNil(), typ)
				want := metav1.ConditionFalse
				if status {
					want = metav1.ConditionTrue
				}
				g.Expect(c.Status).To(Equal(want), "%s status", typ)
				if reason != "" {
					g.Expect(c.Reason).To(Equal(reason), "%s reason", typ)
				}
				g.Expect(c.Message).NotTo(BeEmpty(), "%s message", typ)
				g.Expect(c.ObservedGeneration).To(Equal(int64(4)))
			}
			check(examplev1.ConditionReady, tc.want.ready, tc.want.readyReason)
			check(examplev1.ConditionReconciling, tc.want.reconciling, tc.want.reconcilingReason)
			check(examplev1.ConditionProgressing, tc.want.reconciling, tc.want.reconcilingReason)
			check(examplev1.ConditionStalled, tc.want.stalled, tc.want.stalledReason)
			check(examplev1.ConditionDegraded, tc.want.degraded, tc.want.degradedReason)
		})
	}
}

func TestComputeCountsAndTimes(t *testing.T) {
	g := NewWithT(t)
	app := &examplev1.MyApp{}
	app.Generation = 2
	app.Annotations = map[string]string{examplev1.ReconcileRequestAnnotation: "now"}
	obs := Observed{Deployment: deployment(2, 2, 3, 4, 2, 3, 1, true), Selector: "myapp.example.com/name=web", ReconcileRequest: "now"}

	first := Compute(app, obs, t0)
	g.Expect(first.ObservedGeneration).To(Equal(int64(2)))
	g.Expect([]int32{first.Replicas, first.UpdatedReplicas, first.ReadyReplicas, first.AvailableReplicas}).To(Equal([]int32{4, 2, 3, 1}))
	g.Expect(first.Selector).To(Equal("myapp.example.com/name=web"))
	g.Expect(first.LastHandledReconcileAt).To(Equal("now"))
	g.Expect(first.LastUpdateTime).To(HaveValue(Equal(t0)))

	By := func(string) {}
	By("computing again from the same observation changes nothing, times included")
	app.Status = first
	again := Compute(app, obs, t1)
	g.Expect(again).To(Equal(first))

	By("a pod becoming ready moves the counts and lastUpdateTime, but no condition message")
	obs.Deployment = deployment(2, 2, 3, 4, 2, 4, 1, true)
	next := Compute(app, obs, t1)
	g.Expect(next.ReadyReplicas).To(Equal(int32(4)))
	g.Expect(next.LastUpdateTime).To(HaveValue(Equal(t1)))
	for i := range next.Conditions {
		g.Expect(next.Conditions[i]).To(Equal(first.Conditions[i]), "conditions carry no pod counts")
	}
}

// TestNothingNewBeforeTheDeploymentControllerLooks checks that the reconciles after the one
// that applied a pod template (each child's event brings one) compute the status that one
// wrote, while the deployment controller has not observed the template: nothing new is known,
// so nothing is written again. The status depends on nothing but stored state: no reconcile
// needs to know that an earlier one applied the template.
func TestNothingNewBeforeTheDeploymentControllerLooks(t *testing.T) {
	for name, d := range map[string]*appsv1.Deployment{
		"a new Deployment":                deployment(1, 0, 2, 0, 0, 0, 0, false),
		"a new template on a running one": deployment(4, 3, 2, 2, 2, 2, 2, true),
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := &examplev1.MyApp{}
			app.Generation = 1
			applied := Compute(app, Observed{Deployment: d}, t0)
			g.Expect(meta.IsStatusConditionTrue(applied.Conditions, examplev1.ConditionReady)).To(BeFalse())
			app.Status = applied
			g.Expect(Compute(app, Observed{Deployment: d}, t1)).To(Equal(applied))
		})
	}
}

func TestFullyAvailable(t *testing.T) {
	g := NewWithT(t)
	g.Expect(FullyAvailable(nil)).To(BeFalse())
	g.Expect(FullyAvailable(deployment(1, 1, 3, 3, 3, 3, 3, true))).To(BeTrue())
	g.Expect(FullyAvailable(deployment(1, 1, 3, 3, 3, 3, 2, true))).To(BeFalse(), "one pod not yet available")
	g.Expect(FullyAvailable(deployment(2, 1, 3, 3, 3, 3, 3, true))).To(BeFalse(), "new spec not observed")
	g.Expect(FullyAvailable(deployment(1, 1, 3, 4, 3, 3, 3, true))).To(BeFalse(), "an old pod remains")
}

func BenchmarkCompute(b *testing.B) {
	app := &examplev1.MyApp{}
	app.Generation = 2
	obs := Observed{Deployment: deployment(2, 2, 3, 3, 3, 3, 3, true)}
	app.Status = Compute(app, obs, t0)
	for b.Loop() {
		_ = Compute(app, obs, t1)
	}
}
