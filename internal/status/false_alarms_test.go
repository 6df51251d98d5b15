package status

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// conditionsOf computes the status of a MyApp named web at generation 1 from obs at now.
func conditionsOf(obs Observed, now metav1.Time, previous ...metav1.Condition) map[string]metav1.Condition {
	app := &examplev1.MyApp{Spec: examplev1.MyAppSpec{Image: "registry.example/web:1"}}
	app.Name, app.Generation = "web", 1
	app.Status.Conditions = previous
	out := map[string]metav1.Condition{}
	for _, c := range Compute(app, obs, now).Conditions {
		out[c.Type] = c
	}
	return out
}

func isTrue(c metav1.Condition) bool { return c.Status == metav1.ConditionTrue }

// TestPodProblemIsStalledOnlyWhenItBlocks: a pod that cannot start makes the MyApp Stalled
// only while the pods of the current template cannot become available; beside a rolled-out,
// available Deployment (a registry's 429 on one node while 9 of 10 pods serve) it is
// Degraded, with the same reason and message, and Ready is what the Deployment says.
func TestPodProblemIsStalledOnlyWhenItBlocks(t *testing.T) {
	pull := []ContainerWaiting{{Pod: "web-x", Container: "app", Reason: "ImagePullBackOff", Message: "429 Too Many Requests"}}
	cases := map[string]struct {
		d                    *appsv1.Deployment
		templateChanged      bool
		stalled, ready, busy bool
	}{
		"9 of 10 serve, rolled out and available": {d: deployment(1, 1, 10, 10, 10, 9, 9, true), ready: true, busy: true},
		"all serve, one surplus pod stuck":        {d: deployment(1, 1, 2, 2, 2, 2, 2, true), ready: true},
		"a new template rolling out":              {d: deployment(2, 2, 3, 4, 1, 3, 3, true), stalled: true},
		"a new template not yet observed":         {d: deployment(2, 1, 3, 3, 3, 3, 3, true), templateChanged: true, stalled: true},
		"not available":                           {d: deployment(1, 1, 3, 3, 3, 1, 1, false), stalled: true},
		"no Deployment yet":                       {d: nil, stalled: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := conditionsOf(Observed{Deployment: tc.d, Pods: pull, TemplateChanged: tc.templateChanged}, t0)
			g.Expect(isTrue(c[examplev1.ConditionStalled])).To(Equal(tc.stalled), c[examplev1.ConditionStalled].Message)
			g.Expect(isTrue(c[examplev1.ConditionDegraded])).To(BeTrue(), "a pod problem is always Degraded")
			g.Expect(c[examplev1.ConditionDegraded].Reason).To(Equal(examplev1.ReasonImagePullBackOff))
			g.Expect(c[examplev1.ConditionDegraded].Message).To(ContainSubstring(`cannot pull image "registry.example/web:1"`))
			g.Expect(isTrue(c[examplev1.ConditionReady])).To(Equal(tc.ready))
			if !tc.stalled {
				g.Expect(isTrue(c[examplev1.ConditionReconciling])).To(Equal(tc.busy))
				g.Expect(c[examplev1.ConditionReady].Reason).To(Equal(examplev1.ReasonAvailable))
			}
		})
	}
}

// TestTemplateChangeIsNotReadyUntilRolledOut: right after the operator applies a new pod
// template, Ready is False although the Deployment's status still describes the old pods, so
// `kubectl wait --for=condition=Ready` does not return on them; a scale (by the user or the
// autoscaler) that the deployment controller has not observed yet keeps Ready True.
func TestTemplateChangeIsNotReadyUntilRolledOut(t *testing.T) {
	g := NewWithT(t)
	wasReady := metav1.Condition{Type: examplev1.ConditionReady, Status: metav1.ConditionTrue, Reason: examplev1.ReasonAvailable, Message: "m"}
	notObserved := deployment(2, 1, 3, 3, 3, 3, 3, true)

	c := conditionsOf(Observed{Deployment: notObserved, TemplateChanged: true}, t0, wasReady)
	g.Expect(isTrue(c[examplev1.ConditionReady])).To(BeFalse())
	g.Expect(c[examplev1.ConditionReady].Reason).To(Equal(examplev1.ReasonRollingOut))
	g.Expect(isTrue(c[examplev1.ConditionReconciling])).To(BeTrue())

	c = conditionsOf(Observed{Deployment: notObserved}, t0, wasReady)
	g.Expect(isTrue(c[examplev1.ConditionReady])).To(BeTrue(), "a scale not yet observed is no rollout")

	By := func(string) {}
	By("once observed, the old pods that remain keep Ready False")
	c = conditionsOf(Observed{Deployment: deployment(2, 2, 3, 4, 1, 3, 3, true)}, t0, wasReady)
	g.Expect(isTrue(c[examplev1.ConditionReady])).To(BeFalse())
	g.Expect(c[examplev1.ConditionReady].Reason).To(Equal(examplev1.ReasonRollingOut))
}

// TestScaleIsNotARollout: while only the number of replicas changes and the pods it asks for
// are there, nothing is under way; a scale-up is under way until its pods are available.
func TestScaleIsNotARollout(t *testing.T) {
	cases := map[string]struct {
		d    *appsv1.Deployment
		busy bool
	}{
		"scale-down not yet observed":       {d: deployment(3, 2, 3, 5, 5, 5, 5, true)},
		"scale-down observed, pods leaving": {d: deployment(3, 3, 3, 5, 5, 5, 5, true)},
		"scale-up not yet observed":         {d: deployment(3, 2, 5, 3, 3, 3, 3, true), busy: true},
		"scale-up, new pods not yet ready":  {d: deployment(3, 3, 5, 5, 5, 3, 3, true), busy: true},
		"scale-up done":                     {d: deployment(3, 3, 5, 5, 5, 5, 5, true)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := conditionsOf(Observed{Deployment: tc.d}, t0)
			g.Expect(isTrue(c[examplev1.ConditionReady])).To(BeTrue())
			g.Expect(isTrue(c[examplev1.ConditionReconciling])).To(Equal(tc.busy))
			if tc.busy {
				g.Expect(c[examplev1.ConditionReconciling].Reason).To(Equal(examplev1.ReasonScaling))
			}
		})
	}
}

// TestAutoscalerWithoutMetrics: a new autoscaler has no metrics for its first minute or so;
// that is Degraded only once it has lasted AutoscalerMetricsGrace, and the message is the
// same whatever the autoscaler's own message (which names a pod) says.
func TestAutoscalerWithoutMetrics(t *testing.T) {
	g := NewWithT(t)
	noMetrics := func(since metav1.Time, message string) *autoscalingv2.HorizontalPodAutoscaler {
		return autoscaler(
			autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue},
			autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse,
				Reason: "FailedGetResourceMetric", Message: message, LastTransitionTime: since})
	}
	rolledOut := deployment(1, 1, 2, 2, 2, 2, 2, true)
	h := noMetrics(t0, `failed to get cpu utilization: missing request for cpu in container app of Pod web-1`)

	one := metav1.NewTime(t0.Add(time.Minute))
	c := conditionsOf(Observed{Deployment: rolledOut, Autoscaler: h}, one)
	g.Expect(isTrue(c[examplev1.ConditionDegraded])).To(BeFalse(), "a minute without metrics is normal for a new autoscaler")
	g.Expect(RecheckAfter(Observed{Autoscaler: h}, one)).To(Equal(AutoscalerMetricsGrace - time.Minute))

	later := metav1.NewTime(t0.Add(AutoscalerMetricsGrace))
	c = conditionsOf(Observed{Deployment: rolledOut, Autoscaler: h}, later)
	g.Expect(isTrue(c[examplev1.ConditionDegraded])).To(BeTrue())
	g.Expect(c[examplev1.ConditionDegraded].Reason).To(Equal(examplev1.ReasonAutoscalerUnableToScale))
	g.Expect(c[examplev1.ConditionDegraded].Message).To(ContainSubstring("FailedGetResourceMetric"))
	g.Expect(c[examplev1.ConditionDegraded].Message).NotTo(ContainSubstring("web-1"), "no pod name")
	g.Expect(isTrue(c[examplev1.ConditionReady])).To(BeTrue())
	g.Expect(isTrue(c[examplev1.ConditionStalled])).To(BeFalse())
	g.Expect(RecheckAfter(Observed{Autoscaler: h}, later)).To(BeZero())

	other := conditionsOf(Observed{Deployment: rolledOut, Autoscaler: noMetrics(t0, "missing request for cpu in container app of Pod web-2")}, later)
	g.Expect(other[examplev1.ConditionDegraded].Message).To(Equal(c[examplev1.ConditionDegraded].Message), "a replaced pod changes no message")

	By := func(string) {}
	By("an autoscaler that cannot scale for another reason is Degraded at once")
	cannot := autoscaler(autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionFalse,
		Reason: "FailedGetScale", Message: "deployments.apps \"web\" not found", LastTransitionTime: one})
	c = conditionsOf(Observed{Deployment: rolledOut, Autoscaler: cannot}, one)
	g.Expect(isTrue(c[examplev1.ConditionDegraded])).To(BeTrue())
	g.Expect(c[examplev1.ConditionDegraded].Message).To(ContainSubstring("FailedGetScale"))
	g.Expect(RecheckAfter(Observed{Autoscaler: cannot}, one)).To(BeZero())
}

// TestQuotaMessageHasNoLiveFigures: the quota's live usage is left out of the status, so that
// a namespace's other pods coming and going rewrite neither the status nor the event; the
// quota's name and what to change stay.
func TestQuotaMessageHasNoLiveFigures(t *testing.T) {
	g := NewWithT(t)
	refused := func(used string) *appsv1.Deployment {
		return withCondition(deployment(1, 1, 2, 1, 1, 1, 1, false), appsv1.DeploymentCondition{
			Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
			Message: `pods "web-5d4b8-" is forbidden: exceeded quota: compute, requested: limits.cpu=1,requests.cpu=500m, used: ` +
				used + `, limited: limits.cpu=2,requests.cpu=1`})
	}
	a := conditionsOf(Observed{Deployment: refused("limits.cpu=2,requests.cpu=1")}, t0)[examplev1.ConditionStalled]
	g.Expect(a.Message).To(ContainSubstring("(limits.cpu, requests.cpu)"), "the resources to raise")
	b := conditionsOf(Observed{Deployment: refused("limits.cpu=1500m,requests.cpu=750m")}, t0)[examplev1.ConditionStalled]
	g.Expect(a.Reason).To(Equal(examplev1.ReasonReplicaFailure))
	g.Expect(a.Message).To(Equal(b.Message))
	g.Expect(a.Message).To(ContainSubstring("exceeded quota: compute"))
	g.Expect(a.Message).To(ContainSubstring("raise the quota"))
	g.Expect(a.Message).NotTo(ContainSubstring("used:"))
	g.Expect(a.Message).NotTo(ContainSubstring("limits.cpu=2"))
	g.Expect(a.Message).NotTo(ContainSubstring("5d4b8"), "no pod name")

	g.Expect(StableAdmissionMessage(`services "web" is forbidden: exceeded quota: q, requested: services.nodeports=1, used: services.nodeports=0, limited: services.nodeports=0`)).
		To(Equal(`services "web" is forbidden: exceeded quota: q (services.nodeports)`))
	g.Expect(StableAdmissionMessage(`pods "web-5d4b8-x7k2p" is forbidden: exceeded quota: compute, requested: limits.cpu=1,requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1`)).
		To(Equal(`pods are forbidden: exceeded quota: compute (limits.cpu, requests.cpu)`), "no pod name, which changes at every attempt")
	g.Expect(StableAdmissionMessage("pods \"x\" is forbidden: failed quota: compute: must specify limits.cpu for: app")).
		To(ContainSubstring("must specify limits.cpu"), "a message without usage is kept whole")
}
