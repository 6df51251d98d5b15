package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

	It("stays Ready, with nothing under way, through a scale-down the deployment controller has not observed yet", func() {
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(3)) })
		rollOut(ns, "web")
		Eventually(func(g Gomega) metav1.ConditionStatus { r, _, _ := conditions(g); return r.Status }).Should(Equal(metav1.ConditionTrue))

		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(2)) })
		Eventually(func(g Gomega) *int32 { return getDeployment(ns, "web")(g).Spec.Replicas }).Should(HaveValue(Equal(int32(2))))
		// The status of the new generation follows the Deployment's apply.
		Eventually(func(g Gomega) { conditions(g) }).Should(Succeed())
		Consistently(func(g Gomega) {
			ready, reconciling, _ := conditions(g)
			g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(reconciling.Status).To(Equal(metav1.ConditionFalse))
		}, "2s").Should(Succeed())
	})
})
