package controller

import (
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// A child the API server refuses is the user's to fix: the MyApp says which child and which
// field, is Stalled with ChildRejected, and looks again at the slow retry rather than in a
// backoff loop.
var _ = Describe("A child the API server refuses", func() {
	const refusedLabel = "stories.example.com/refused"

	// startCountingManager runs a manager of the story's own, without resyncs, that counts
	// its requests: only a retry the reconciler asks for can send a request again.
	startCountingManager := func() *requestCounter {
		requests := &requestCounter{}
		sel, err := labels.Parse(unwatchedLabel + "=counted")
		Expect(err).NotTo(HaveOccurred())
		startManager(managerOptions{myApps: sel, syncPeriod: 10 * time.Hour, requests: requests})
		return requests
	}
	inCountingManager := func(a *examplev1.MyApp) { a.Labels = map[string]string{unwatchedLabel: "counted"} }

	// deploymentApplies counts the requests that apply the named Deployment after the first n.
	deploymentApplies := func(requests *requestCounter, n int, ns, name string) int {
		count := 0
		for _, r := range requests.since(n, ns) {
			if strings.HasPrefix(r, "PATCH /apis/apps/v1/namespaces/"+ns+"/deployments/"+name+"?") {
				count++
			}
		}
		return count
	}

	// expectRejectedWithoutLoop waits for the MyApp to be Stalled with ChildRejected and a
	// message containing each of parts; then, once the reconciles its creation queued (the
	// Service's creation among them) have sent their applies, checks that the refused apply
	// is not sent again for a few seconds. A transient error is retried with backoff from
	// 5 ms, doubling: no gap between its retries is long enough for the settling to end before
	// a retry falls into the window. A refusal waits for the slow retry (a minute).
	expectRejectedWithoutLoop := func(requests *requestCounter, ns, name string, parts ...string) {
		Eventually(func(g Gomega) {
			a := getMyApp(ns, name)(g)
			stalled := condition(g, a, examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonChildRejected))
			for _, p := range parts {
				g.Expect(stalled.Message).To(ContainSubstring(p))
			}
			ready := condition(g, a, examplev1.ConditionReady)
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(examplev1.ReasonChildRejected))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		n0 := requests.count()
		seen, last := 0, time.Now()
		Eventually(func() time.Duration {
			if c := deploymentApplies(requests, n0, ns, name); c != seen {
				seen, last = c, time.Now()
			}
			return time.Since(last)
		}).WithTimeout(20 * time.Second).WithPolling(50 * time.Millisecond).Should(BeNumerically(">=", time.Second))
		n := requests.count()
		Consistently(func() int { return deploymentApplies(requests, n, ns, name) }).
			WithTimeout(4*time.Second).WithPolling(200*time.Millisecond).Should(BeZero(),
			func() string {
				return "the refused Deployment is applied again and again before the slow retry: " +
					strings.Join(requests.since(max(n-20, 0), ns), "\n")
			})
		Expect(slowRetry).To(BeNumerically(">=", time.Minute))
	}

	It("refused by an admission policy: Stalled with ChildRejected naming the Deployment, no retry loop, and recovers once the MyApp is fixed", func() {
		requests := startCountingManager()
		ns := newNamespace()

		By("a ValidatingAdmissionPolicy of the namespace refusing Deployments whose pods carry a label")
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "refuse-labelled-pods-" + ns},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptrTo(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{
					ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
						RuleWithOperations: admissionregistrationv1.RuleWithOperations{
							Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
							Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"},
								Resources: []string{"deployments"}},
						},
					}},
				},
				Validations: []admissionregistrationv1.Validation{{
					Expression: "!has(object.spec.template.metadata.labels) || !('" + refusedLabel + "' in object.spec.template.metadata.labels)",
					Message:    "pods labelled " + refusedLabel + " are not allowed here",
				}},
			},
		}
		Expect(k8s.Create(suiteCtx, policy)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(suiteCtx, policy))).To(Succeed()) })
		binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        policy.Name,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
				MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}},
			},
		}
		Expect(k8s.Create(suiteCtx, binding)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(suiteCtx, binding))).To(Succeed()) })
		By("waiting until the API server enforces the policy (it loads policies asynchronously)")
		Eventually(func() error {
			probe := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "probe"}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "probe", refusedLabel: "yes"}},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
					},
				},
			}
			return k8s.Create(suiteCtx, probe, client.DryRunAll)
		}).WithTimeout(20 * time.Second).Should(Satisfy(apierrors.IsInvalid))

		By("a MyApp whose pods carry that label: its Deployment is refused")
		createMyApp(ns, "web", func(a *examplev1.MyApp) {
			inCountingManager(a)
			a.Spec.PodLabels = map[string]examplev1.LabelValue{refusedLabel: "yes"}
		})
		expectRejectedWithoutLoop(requests, ns, "web", "The API server rejected Deployment web: a validation or an admission policy refused it")
		Expect(apierrors.IsNotFound(k8s.Get(suiteCtx, key(ns, "web"), &appsv1.Deployment{}))).To(BeTrue())
		By("the Warning event carrying the API server's own message, which the status leaves out")
		Eventually(func(g Gomega) {
			var messages []string
			for _, e := range eventsOf(g, getMyApp(ns, "web")(g)) {
				if e.Reason == examplev1.ReasonChildRejected {
					messages = append(messages, e.Message)
				}
			}
			g.Expect(messages).To(ConsistOf(And(ContainSubstring("The API server rejected Deployment web"),
				ContainSubstring("The API server said: "), ContainSubstring("are not allowed here"))))
		}).Should(Succeed())

		By("the label removed from the MyApp: the Deployment is made and the MyApp is no longer Stalled")
		updateMyApp(getMyApp(ns, "web")(Default), func(a *examplev1.MyApp) { a.Spec.PodLabels = nil })
		Eventually(getDeployment(ns, "web")).Should(Not(BeNil()))
		rollOut(ns, "web")
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			g.Expect(condition(g, a, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
	})

	// Refusals of the API server's own validation, for MyApps admission may accept: the
	// answer to the apply as the operator sends it is classified as a refusal with its
	// fields, and, when admission lets such a MyApp through, the MyApp is Stalled with it.
	DescribeTable("refused by the API server's own validation",
		func(spec func(*examplev1.MyAppSpec), template map[string]any, parts ...string) {
			requests := startCountingManager()
			ns := newNamespace()

			By("the API server's answer to such an apply, as the operator sends it, is a refusal")
			deployment := map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"namespace": ns, "name": "web"},
				"spec": map[string]any{
					"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
					"template": map[string]any{
						"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
						"spec":     template,
					},
				},
			}
			body, err := json.Marshal(deployment)
			Expect(err).NotTo(HaveOccurred())
			err = k8s.Patch(suiteCtx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}},
				client.RawPatch(types.ApplyPatchType, body), client.FieldOwner("myapp-operator"), client.ForceOwnership, client.DryRunAll)
			Expect(err).To(HaveOccurred())
			f := classify(&applyError{kind: kindDeployment, name: "web", err: err})
			Expect(f.Reason).To(Equal(examplev1.ReasonChildRejected), "the API server answered %v", err)
			Expect(f.transient).To(BeFalse())
			Expect(f.Terminal).To(BeTrue())
			Expect(f.retryAfter).To(Equal(slowRetry))
			for _, p := range parts {
				Expect(f.Message).To(ContainSubstring(p))
			}

			By("a MyApp that makes such a Deployment, when admission lets it through")
			app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
				Spec: examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptrTo(int32(1))}}
			spec(&app.Spec)
			inCountingManager(app)
			if err := k8s.Create(suiteCtx, app); apierrors.IsInvalid(err) {
				// Admission refuses the MyApp itself: nothing stored can make this apply.
				By("admission refuses the MyApp: " + err.Error())
				return
			} else {
				Expect(err).NotTo(HaveOccurred())
			}
			expectRejectedWithoutLoop(requests, ns, "web", parts...)
		},
		Entry("two topology spread constraints on one key: the apply cannot be made, not ApplyFailed for good",
			func(s *examplev1.MyAppSpec) {
				s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{
					{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway},
					{MaxSkew: 2, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway}}
			},
			map[string]any{
				"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27"}},
				"topologySpreadConstraints": []any{
					map[string]any{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"},
					map[string]any{"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}},
			},
			"The API server rejected Deployment web", "cannot process the request"),
		Entry("a topology spread constraint with maxSkew 0: the field is named, with the MyApp's",
			func(s *examplev1.MyAppSpec) {
				s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{
					{MaxSkew: 0, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway}}
			},
			map[string]any{
				"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27"}},
				"topologySpreadConstraints": []any{
					map[string]any{"maxSkew": 0, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}},
			},
			"The API server rejected Deployment web",
			"spec.template.spec.topologySpreadConstraints[0].maxSkew (from the MyApp's spec.topologySpreadConstraints[0].maxSkew) has an invalid value"),
	)
})
