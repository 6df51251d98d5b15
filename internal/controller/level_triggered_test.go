package controller

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Reconciles are level-triggered: whatever events arrive, in whatever order, and however
// fast the spec changes, the children end as the last spec says, without waiting for a resync.
var _ = Describe("Level-triggered reconciles", func() {
	It("end as the last spec says after 30 changes of the Service type in quick succession, with no resync to help", func() {
		By("running a manager of its own, without resyncs")
		startQuietManager()
		ns := newNamespace()
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Labels = map[string]string{unwatchedLabel: "quiet"} })
		Eventually(getService(ns, "web")).Should(Not(BeNil()))

		By("changing the type back and forth while the operator's applies and their watch events are in flight")
		types := []examplev1.ServiceType{examplev1.ServiceTypeNodePort, examplev1.ServiceTypeClusterIP}
		started := time.Now()
		for i := range 30 {
			updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.ServiceType = types[i%2] })
		}
		last := types[29%2]
		AddReportEntry("30 spec changes took", time.Since(started).Round(time.Millisecond).String())
		// How long the changes take depends on the machine's load; what matters is that no
		// resync came between them and the end below.
		Expect(time.Since(started)).To(BeNumerically("<", quietSyncPeriod), "the changes came faster than any resync")

		// An earlier spec of the same type matches too: first wait until the operator has
		// written the status of the last spec, which follows that spec's applies.
		Eventually(func(g Gomega) int64 { return getMyApp(ns, "web")(g).Status.ObservedGeneration }).
			WithTimeout(10 * time.Second).Should(Equal(app.Generation))
		Expect(getService(ns, "web")(Default).Spec.Type).To(Equal(corev1.ServiceType(last)))
		Consistently(func(g Gomega) corev1.ServiceType { return getService(ns, "web")(g).Spec.Type }, "2s").
			Should(Equal(corev1.ServiceType(last)))
	})

	It("learn from the children's watch events alone: a rollout finished and a hand edit, with no resync to help", func() {
		startQuietManager()
		ns := newNamespace()
		createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Labels = map[string]string{unwatchedLabel: "quiet"} })
		readyStatus := func(g Gomega) metav1.ConditionStatus {
			return condition(g, getMyApp(ns, "web")(g), examplev1.ConditionReady).Status
		}
		Eventually(readyStatus).Should(Equal(metav1.ConditionFalse))
		Consistently(readyStatus, "1s").Should(Equal(metav1.ConditionFalse), "settled: nothing more to do")

		By("the deployment controller reporting the rollout done")
		rollOut(ns, "web")
		Eventually(readyStatus).WithTimeout(10 * time.Second).Should(Equal(metav1.ConditionTrue))

		By("someone changing the image by hand")
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			d.Spec.Template.Spec.Containers[0].Image = "nginx:hacked"
			g.Expect(k8s.Update(suiteCtx, d, client.FieldOwner("someone"))).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) string { return container(g, getDeployment(ns, "web")(g)).Image }).
			WithTimeout(10 * time.Second).Should(Equal("nginx:1.27"))
	})
})
