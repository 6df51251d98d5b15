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
// only while it keeps the current template from becoming available: while a template rolls
// out, or while no pod is available. Beside a Deployment that runs only its current template
// with pods available (a registry's 429 on one node while 9 of 10 pods serve) it is Degraded,
// with the same reason and message, and Ready is what `kubectl rollout status` says.
func TestPodProblemIsStalledOnlyWhenItBlocks(t *testing.T) {
	pull := []ContainerWaiting{{Pod: "web-x", Container: "app", Image: "registry.example/web:1", Reason: "ImagePullBackOff", Message: "429 Too Many Requests"}}
	cases := map[string]struct {
		d                    *appsv1.Deployment
		stale                bool
		stalled, ready, busy bool
	}{
		"9 of 10 serve, rolled out and available":            {d: deployment(1, 1, 10, 10, 10, 9, 9, true), busy: true},
		"all serve, one surplus pod stuck":                   {d: deployment(1, 1, 2, 2, 2, 2, 2, true), ready: true},
		"a new template rolling out":                         {d: deployment(2, 2, 3, 4, 1, 3, 3, true), stalled: true},
		"a new template not yet observed":                    {d: deployment(2, 1, 3, 3, 3, 3, 3, true), stalled: true},
		"a new template not yet applied":                     {d: deployment(2, 2, 3, 3, 3, 3, 3, true), stale: true, stalled: true},
		"1 of 3 serves, the Deployment short of its minimum": {d: deployment(1, 1, 3, 3, 3, 1, 1, false), busy: true},
		"none available":                                     {d: deployment(1, 1, 1, 1, 1, 0, 0, true), stalled: true},
		"no Deployment yet":                                  {d: nil, stalled: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := conditionsOf(Observed{Deployment: tc.d, Pods: pull, DeploymentStale: tc.stale}, t0)
			g.Expect(isTrue(c[examplev1.ConditionStalled])).To(Equal(tc.stalled), c[examplev1.ConditionStalled].Message)
			g.Expect(isTrue(c[examplev1.ConditionDegraded])).To(BeTrue(), "a pod problem is always Degraded")
			g.Expect(c[examplev1.ConditionDegraded].Reason).To(Equal(examplev1.ReasonImagePullBackOff))
			g.Expect(c[examplev1.ConditionDegraded].Message).To(ContainSubstring(`cannot pull image "registry.example/web:1"`))
			g.Expect(isTrue(c[examplev1.ConditionReady])).To(Equal(tc.ready))
			if !tc.stalled {
				g.Expect(isTrue(c[examplev1.ConditionReconciling])).To(Equal(tc.busy))
			}
		})
	}
}

// TestPodProblemNamesTheImageThePodRuns: the message names the image the failing container
// runs, which after a fix of spec.image is not the MyApp's.
func TestPodProblemNamesTheImageThePodRuns(t *testing.T) {
	g := NewWithT(t)
	pull := []ContainerWaiting{{Pod: "web-x", Container: "app", Image: "registry.example/web:0-typo", Reason: "ErrImagePull"}}
	c := conditionsOf(Observed{Deployment: deployment(1, 1, 2, 2, 2, 0, 0, false), Pods: pull}, t0)
	g.Expect(c[examplev1.ConditionStalled].Message).To(ContainSubstring(`"registry.example/web:0-typo"`))
	g.Expect(c[examplev1.ConditionStalled].Message).NotTo(ContainSubstring(`"registry.example/web:1"`))
}

// TestReadyAfterATemplateChangeWaitsForTheNewPods: from the moment a new template is
// applied until every pod runs it and is available, Ready is False, whatever Ready said
// before and whichever reconcile looks: the status depends on stored state only.
func TestReadyAfterATemplateChangeWaitsForTheNewPods(t *testing.T) {
	wasReady := metav1.Condition{Type: examplev1.ConditionReady, Status: metav1.ConditionTrue, Reason: examplev1.ReasonAvailable, Message: "m"}
	for name, obs := range map[string]Observed{
		"applied, not yet observed":                  {Deployment: deployment(2, 1, 3, 3, 3, 3, 3, true)},
		"not applied yet (the apply failed)":         {Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true), DeploymentStale: true},
		"observed, old pods remain":                  {Deployment: deployment(2, 2, 3, 4, 1, 3, 3, true)},
		"observed, every pod new, one not yet ready": {Deployment: deployment(2, 2, 3, 3, 3, 2, 2, true)},
		"no surge, the one pod replaced, not ready":  {Deployment: deployment(2, 2, 1, 1, 1, 0, 0, true)},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := conditionsOf(obs, t0, wasReady)
			g.Expect(isTrue(c[examplev1.ConditionReady])).To(BeFalse())
			g.Expect(isTrue(c[examplev1.ConditionReconciling])).To(BeTrue())
			g.Expect(isTrue(c[examplev1.ConditionStalled])).To(BeFalse())
		})
	}
}

// TestScaleIsNotARollout: a change of the number of replicas is reported as a scale, never
// as a rollout; a scale-down whose pods are there is done, a scale-up is under way until its
// pods are available, as `kubectl rollout status` waits for them.
func TestScaleIsNotARollout(t *testing.T) {
	cases := map[string]struct {
		d     *appsv1.Deployment
		ready bool
	}{
		"scale-down observed, pods leaving": {d: deployment(3, 3, 3, 5, 5, 5, 5, true), ready: true},
		"scale-up, new pods not yet ready":  {d: deployment(3, 3, 5, 5, 5, 3, 3, true)},
		"scale-up, pods not yet created":    {d: deployment(3, 3, 5, 3, 3, 3, 3, true)},
		"scale-up done":                     {d: deployment(3, 3, 5, 5, 5, 5, 5, true), ready: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := conditionsOf(Observed{Deployment: tc.d}, t0)
			g.Expect(isTrue(c[examplev1.ConditionReady])).To(Equal(tc.ready))
			g.Expect(isTrue(c[examplev1.ConditionReconciling])).To(Equal(!tc.ready))
			if !tc.ready {
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

// TestReplicaFailureMessageIsBuiltFromStructuredFields: the status says why the Deployment
// cannot create pods from its condition's reason and what kind of admission refused them; the
// API server's own text (the refused pod's name, the quota's live usage, its wording) stays
// out, so neither other pods of the namespace coming and going nor a reworded message in a
// future Kubernetes rewrite the status.
func TestReplicaFailureMessageIsBuiltFromStructuredFields(t *testing.T) {
	g := NewWithT(t)
	refused := func(message string) metav1.Condition {
		d := withCondition(deployment(1, 1, 2, 0, 0, 0, 0, false), appsv1.DeploymentCondition{
			Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: message})
		return conditionsOf(Observed{Deployment: d}, t0)[examplev1.ConditionStalled]
	}
	a := refused(`pods "web-5d4b8-x7k2p" is forbidden: exceeded quota: compute, requested: limits.cpu=1,requests.cpu=500m, used: limits.cpu=2,requests.cpu=1, limited: limits.cpu=2,requests.cpu=1`)
	b := refused(`pods "web-5d4b8-q9z8r" is forbidden: exceeded quota: compute, requested: limits.cpu=1,requests.cpu=500m, used: limits.cpu=1500m,requests.cpu=750m, limited: limits.cpu=2,requests.cpu=1`)
	g.Expect(a.Reason).To(Equal(examplev1.ReasonReplicaFailure))
	g.Expect(a.Message).To(Equal(b.Message))
	g.Expect(a.Message).To(ContainSubstring("(FailedCreate)"))
	g.Expect(a.Message).To(ContainSubstring("raise the quota"))
	for _, raw := range []string{"used:", "limits.cpu=2", "5d4b8", "compute"} {
		g.Expect(a.Message).NotTo(ContainSubstring(raw), "no text of the API server's")
	}

	g.Expect(refused(`pods "web-1" is forbidden: violates PodSecurity "restricted:latest": privileged`).Message).
		To(ContainSubstring("Pod Security level"))
	reworded := refused(`admission webhook "policy.example.com" denied the request: pods must carry a cost centre`)
	g.Expect(reworded.Reason).To(Equal(examplev1.ReasonReplicaFailure))
	g.Expect(reworded.Message).NotTo(ContainSubstring("cost centre"))
}
