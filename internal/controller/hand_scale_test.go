package controller

import (
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/ssa"
)

// A hand scale of the Deployment is put back whoever wrote the MyApp and however; the count
// the autoscaler left is kept only during the hand-over after autoscaling is turned off. Each
// story runs a manager without resync, so the put-back comes from the watches alone.
var _ = Describe("Hand scaling of a MyApp's Deployment", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("is put back for a MyApp created without replicas", func() {
		startQuietManager()
		createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Labels = quiet(); a.Spec.Replicas = nil })
		Eventually(replicasOf(ns, "web")).Should(HaveValue(Equal(int32(1))))

		scaleByHand(ns, "web", 0)
		Eventually(replicasOf(ns, "web")).WithTimeout(10 * time.Second).Should(HaveValue(Equal(int32(1))))
	})

	It("is put back for a MyApp applied server-side", func() {
		startQuietManager()
		applyMyApp(ns, "web", map[string]any{"image": "nginx:1.27", "replicas": 1})
		Eventually(replicasOf(ns, "web")).Should(HaveValue(Equal(int32(1))))

		scaleByHand(ns, "web", 0)
		Eventually(replicasOf(ns, "web")).WithTimeout(10 * time.Second).Should(HaveValue(Equal(int32(1))))
	})

	It("is put back to the autoscaler's count during the hand-over, and to spec.replicas after it", func() {
		startQuietManager()
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Labels = quiet()
			a.Spec.Replicas = nil
			a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptrTo(int32(2)), MaxReplicas: ptrTo(int32(9))}
		})
		Eventually(getHPA(ns, "web")).Should(Not(BeNil()))
		scaleAsAutoscaler(ns, "web", 7)

		By("turning autoscaling off: the count the autoscaler left stays")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.AutoScaling.Enabled = false })
		expectKept(ns, "web", 7)

		By("a hand scale during the hand-over goes back to that count")
		scaleByHand(ns, "web", 0)
		Eventually(replicasOf(ns, "web")).WithTimeout(10 * time.Second).Should(HaveValue(Equal(int32(7))))

		By("changing spec.replicas ends the hand-over")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(3)) })
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			g.Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(3))))
			g.Expect(d.Annotations).To(HaveKeyWithValue(desired.AnnotationReplicas, "spec"))
		}).WithTimeout(10 * time.Second).Should(Succeed())

		By("and back at 1 the MyApp's count holds: a hand scale is put back to it")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(1)) })
		Eventually(replicasOf(ns, "web")).WithTimeout(10 * time.Second).Should(HaveValue(Equal(int32(1))))
		scaleByHand(ns, "web", 0)
		Eventually(replicasOf(ns, "web")).WithTimeout(10 * time.Second).Should(HaveValue(Equal(int32(1))))
	})

	It("reaches the same decisions across restarts of the operator", func() {
		stop := startQuietManager()
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Labels = quiet()
			a.Spec.Replicas = nil
			a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptrTo(int32(2)), MaxReplicas: ptrTo(int32(9))}
		})
		Eventually(getHPA(ns, "web")).Should(Not(BeNil()))
		scaleAsAutoscaler(ns, "web", 6)
		stop()

		By("autoscaling turned off while no operator runs")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.AutoScaling.Enabled = false })
		stop = startQuietManager()
		expectKept(ns, "web", 6)
		stop()

		By("a hand scale while no operator runs, mid-hand-over")
		scaleByHand(ns, "web", 0)
		stop = startQuietManager()
		Eventually(replicasOf(ns, "web")).WithTimeout(10 * time.Second).Should(HaveValue(Equal(int32(6))))
		stop()

		By("spec.replicas changed while no operator runs")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(2)) })
		startQuietManager()
		Eventually(replicasOf(ns, "web")).WithTimeout(10 * time.Second).Should(HaveValue(Equal(int32(2))))
	})

	It("keeps the autoscaler's count of a Deployment an earlier release left to it", func() {
		startQuietManager()
		app := createMyApp(ns, "api", func(a *examplev1.MyApp) {
			a.Labels = map[string]string{unwatchedLabel: "asleep"}
			a.Spec.Replicas = nil
		})

		By("a Deployment as 0.3.1 leaves it once autoscaling is off: its count held by the autoscaler")
		intent, err := desired.Deployment(app, false)
		Expect(err).NotTo(HaveOccurred())
		intent.Spec.Replicas = nil
		Expect(ssa.Apply(suiteCtx, k8s, intent, &appsv1.Deployment{}, FieldOwner, true)).To(Succeed())
		scaleAsAutoscaler(ns, "api", 5)

		By("the upgraded operator taking the MyApp over")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Labels = quiet() })
		expectKept(ns, "api", 5)
		scaleByHand(ns, "api", 2)
		Eventually(replicasOf(ns, "api")).WithTimeout(10 * time.Second).Should(HaveValue(Equal(int32(5))))
	})
})

// quiet labels a MyApp for the story's own manager (startQuietManager).
func quiet() map[string]string { return map[string]string{unwatchedLabel: "quiet"} }

// applyMyApp server-side applies a quiet MyApp with the given spec, as a GitOps tool would.
func applyMyApp(ns, name string, spec map[string]any) {
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "example.com/v1", "kind": "MyApp",
		"metadata": map[string]any{"namespace": ns, "name": name, "labels": quiet()},
		"spec":     spec,
	})
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{}
	Expect(json.Unmarshal(raw, &u.Object)).To(Succeed())
	Expect(k8s.Patch(suiteCtx, u, client.RawPatch(types.ApplyPatchType, raw),
		client.FieldOwner("gitops"), client.ForceOwnership)).To(Succeed())
}

// replicasOf polls the Deployment's spec.replicas.
func replicasOf(ns, name string) func(Gomega) *int32 {
	return func(g Gomega) *int32 { return getDeployment(ns, name)(g).Spec.Replicas }
}

// scaleByHand scales the Deployment through its scale subresource, as `kubectl scale` does.
func scaleByHand(ns, name string, replicas int32) {
	Eventually(func(g Gomega) {
		d := getDeployment(ns, name)(g)
		scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
		g.Expect(k8s.SubResource("scale").Update(suiteCtx, d, client.WithSubResourceBody(scale),
			client.FieldOwner("kubectl-scale"))).To(Succeed())
	}).Should(Succeed())
}

// expectKept waits until the operator holds the Deployment at the count of the hand-over, and
// checks that it stays there.
func expectKept(ns, name string, count int32) {
	Eventually(func(g Gomega) {
		d := getDeployment(ns, name)(g)
		g.Expect(d.Annotations).To(HaveKeyWithValue(desired.AnnotationReplicas, fmt.Sprintf("kept=%d", count)))
		g.Expect(ownsReplicas(d)).To(BeTrue())
	}).WithTimeout(10 * time.Second).Should(Succeed())
	Consistently(replicasOf(ns, name), "2s").Should(HaveValue(Equal(count)))
}
