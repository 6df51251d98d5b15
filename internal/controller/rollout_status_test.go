package controller

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Ready tells a rollout from a scale. envtest runs no deployment controller, so a
// Deployment's status stays where the story leaves it: the window between the operator's
// apply and the deployment controller observing it lasts as long as the story wants.
var _ = Describe("Readiness through rollouts and scales", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	conditions := func(g Gomega) (ready, reconciling metav1.Condition, generation int64) {
		a := getMyApp(ns, "web")(g)
		g.Expect(a.Status.ObservedGeneration).To(Equal(a.Generation))
		return condition(g, a, examplev1.ConditionReady), condition(g, a, examplev1.ConditionReconciling), a.Generation
	}

	It("is not Ready right after its image changes, before the deployment controller has looked, until the new pods run", func() {
		app := createMyApp(ns, "web", nil)
		rollOut(ns, "web")
		Eventually(func(g Gomega) metav1.ConditionStatus { r, _, _ := conditions(g); return r.Status }).Should(Equal(metav1.ConditionTrue))

		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
		Eventually(func(g Gomega) {
			ready, reconciling, generation := conditions(g)
			g.Expect(generation).To(Equal(app.Generation))
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(examplev1.ReasonRollingOut))
			g.Expect(reconciling.Status).To(Equal(metav1.ConditionTrue))
			d := getDeployment(ns, "web")(g)
			g.Expect(d.Status.ObservedGeneration).To(BeNumerically("<", d.Generation), "the deployment controller has not looked yet")
		}).Should(Succeed())
		Consistently(func(g Gomega) metav1.ConditionStatus { r, _, _ := conditions(g); return r.Status }, "2s").Should(Equal(metav1.ConditionFalse))

		rollOut(ns, "web")
		Eventually(func(g Gomega) metav1.ConditionStatus { r, _, _ := conditions(g); return r.Status }).Should(Equal(metav1.ConditionTrue))
	})

	It("is Ready again after a scale-down once the deployment controller has observed it, never before", func() {
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(3)) })
		rollOut(ns, "web")
		Eventually(func(g Gomega) metav1.ConditionStatus { r, _, _ := conditions(g); return r.Status }).Should(Equal(metav1.ConditionTrue))

		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(2)) })
		Eventually(func(g Gomega) *int32 { return getDeployment(ns, "web")(g).Spec.Replicas }).Should(HaveValue(Equal(int32(2))))
		Eventually(func(g Gomega) {
			ready, reconciling, _ := conditions(g)
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse), "kubectl rollout status waits for the spec to be observed")
			g.Expect(reconciling.Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
		rollOut(ns, "web")
		Eventually(func(g Gomega) metav1.ConditionStatus { r, _, _ := conditions(g); return r.Status }).Should(Equal(metav1.ConditionTrue))
	})

	It("is not Ready while no pod is available, though the Deployment says Available (no surge, maxUnavailable = replicas)", func() {
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Spec.Replicas = ptrTo(int32(1))
			a.Spec.RollingUpdate = &examplev1.RollingUpdate{MaxSurge: ptrTo(intstr.FromInt32(0)), MaxUnavailable: ptrTo(intstr.FromInt32(1))}
		})
		rollOut(ns, "web")
		Eventually(func(g Gomega) metav1.ConditionStatus { r, _, _ := conditions(g); return r.Status }).Should(Equal(metav1.ConditionTrue))

		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
		Eventually(func(g Gomega) string { return container(g, getDeployment(ns, "web")(g)).Image }).Should(Equal("nginx:1.28"))
		By("the deployment controller replacing the one pod: the new one is not ready yet, and Available stays True (0 >= 1 - 1)")
		reportDeployment(ns, "web", 1, 1, 0)
		Eventually(func(g Gomega) {
			ready, reconciling, _ := conditions(g)
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(reconciling.Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
		Consistently(func(g Gomega) metav1.ConditionStatus { r, _, _ := conditions(g); return r.Status }, "2s").Should(Equal(metav1.ConditionFalse))

		reportDeployment(ns, "web", 1, 1, 1)
		Eventually(func(g Gomega) metav1.ConditionStatus { r, _, _ := conditions(g); return r.Status }).Should(Equal(metav1.ConditionTrue))
	})

	It("is not Ready for a template that was never applied: a webhook outage fails the Deployment's apply", func() {
		app := createMyApp(ns, "web", nil)
		rollOut(ns, "web")
		Eventually(func(g Gomega) metav1.ConditionStatus { r, _, _ := conditions(g); return r.Status }).Should(Equal(metav1.ConditionTrue))

		By("a fail-closed webhook on the namespace's Deployments whose server is down")
		hook := unreachableDeploymentWebhook(ns)
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
		Eventually(func(g Gomega) {
			ready, reconciling, generation := conditions(g)
			g.Expect(generation).To(Equal(app.Generation))
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse), ready.Message)
			g.Expect(ready.Reason).To(Equal(examplev1.ReasonApplyFailed))
			g.Expect(reconciling.Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
		Expect(container(Default, getDeployment(ns, "web")(Default)).Image).NotTo(Equal("nginx:1.28"), "the apply failed")

		By("the webhook back: the template is applied, and Ready waits for its pods")
		Expect(k8s.Delete(suiteCtx, hook)).To(Succeed())
		Eventually(func(g Gomega) string { return container(g, getDeployment(ns, "web")(g)).Image }).WithTimeout(time.Minute).Should(Equal("nginx:1.28"))
		rollOut(ns, "web")
		Eventually(func(g Gomega) metav1.ConditionStatus { r, _, _ := conditions(g); return r.Status }).Should(Equal(metav1.ConditionTrue))
	})

	It("reaches the same Ready after a restart whose predecessor's status write was lost: not Ready on the old pods", func() {
		stop := startQuietManager()
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Labels = map[string]string{unwatchedLabel: "quiet"} })
		rollOut(ns, "web")
		Eventually(func(g Gomega) metav1.ConditionStatus { r, _, _ := conditions(g); return r.Status }).Should(Equal(metav1.ConditionTrue))
		wasReady := getMyApp(ns, "web")(Default).Status

		By("a new template applied, then the manager stopped before the deployment controller looked")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
		Eventually(func(g Gomega) string { return container(g, getDeployment(ns, "web")(g)).Image }).Should(Equal("nginx:1.28"))
		stop()

		By("the status as if the last write had been lost: Ready True, for the old pods")
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			a.Status = *wasReady.DeepCopy()
			g.Expect(k8s.Status().Update(suiteCtx, a)).To(Succeed())
		}).Should(Succeed())

		By("a new manager: it finds the template not yet observed, and says not Ready for the new generation")
		startQuietManager()
		Eventually(func(g Gomega) {
			ready, _, generation := conditions(g)
			g.Expect(generation).To(Equal(getMyApp(ns, "web")(g).Generation))
			g.Expect(ready.ObservedGeneration).To(Equal(generation))
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())
	})
})

// reportDeployment plays the deployment controller with the given counts (every pod of the
// current template) and Available True, as it reports for maxUnavailable = replicas.
func reportDeployment(ns, name string, replicas, updated, available int32) {
	reportDeploymentStatus(ns, name, func(int32) (int32, int32, int32) { return replicas, updated, available })
}

// unreachableDeploymentWebhook registers a fail-closed validating webhook for the Deployments
// of the namespace whose server does not answer: every write of such a Deployment fails with
// an internal error, as during a webhook outage. The story deletes it to end the outage.
func unreachableDeploymentWebhook(ns string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	url := "https://127.0.0.1:1/validate"
	hook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "outage-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "outage.example.com",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptrTo(int32(1)),
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"},
					Resources: []string{"deployments"}},
			}},
		}},
	}
	Expect(k8s.Create(suiteCtx, hook)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(suiteCtx, hook) })
	return hook
}
