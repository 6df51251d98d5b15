package controller

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/testutil"
)

// The replica count changes hands between the MyApp and its HorizontalPodAutoscaler
// (replicas.go). envtest runs no autoscaler: scaleAsAutoscaler plays it.
var _ = Describe("Replicas changing hands with an autoscaler", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("starts the autoscaler of a MyApp scaled to zero at minReplicas, not at 0 where it never scales", func() {
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(0)) })
		Eventually(func(g Gomega) *int32 { return getDeployment(ns, "web")(g).Spec.Replicas }).Should(HaveValue(BeZero()))

		updateMyApp(app, func(a *examplev1.MyApp) {
			a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptrTo(int32(2)), MaxReplicas: ptrTo(int32(5))}
		})
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			g.Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(2))))
			g.Expect(testutil.OwnsField(d, FieldOwner, "f:spec", "f:replicas")).To(BeFalse(), "the autoscaler's to take over")
		}).Should(Succeed())
	})

	It("keeps the autoscaler's count when autoscaling is turned off and spec.replicas was never set", func() {
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Spec.Replicas = nil // the API server stores its default, 1
			a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptrTo(int32(2)), MaxReplicas: ptrTo(int32(9))}
		})
		Expect(app.Spec.Replicas).To(HaveValue(Equal(int32(1))), "defaulted by the API server")
		Eventually(getHPA(ns, "web")).Should(Not(BeNil()))
		scaleAsAutoscaler(ns, "web", 7)

		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.AutoScaling.Enabled = false })
		Eventually(func(g Gomega) error {
			return k8s.Get(suiteCtx, key(ns, "web"), &autoscalingv1.HorizontalPodAutoscaler{})
		}).
			Should(MatchError(ContainSubstring("not found")))
		Consistently(func(g Gomega) *int32 { return getDeployment(ns, "web")(g).Spec.Replicas }, "2s").Should(HaveValue(Equal(int32(7))))

		By("setting spec.replicas afterwards gives the count back to the MyApp")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(3)) })
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			g.Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(3))))
			g.Expect(testutil.OwnsField(d, FieldOwner, "f:spec", "f:replicas")).To(BeTrue())
		}).Should(Succeed())
	})

	It("treats a 1 applied server-side as any other 1, and goes to a 1 written with the turn-off", func() {
		manifest := func(autoscaling bool, replicas int32) []byte {
			raw, err := json.Marshal(map[string]any{
				"apiVersion": "example.com/v1", "kind": "MyApp",
				"metadata": map[string]any{"namespace": ns, "name": "web"},
				"spec": map[string]any{"image": "nginx:1.27", "replicas": replicas,
					"autoScaling": map[string]any{"enabled": autoscaling, "minReplicas": 2, "maxReplicas": 9}},
			})
			Expect(err).NotTo(HaveOccurred())
			return raw
		}
		apply := func(autoscaling bool, replicas int32) {
			u := &unstructured.Unstructured{}
			Expect(json.Unmarshal(manifest(autoscaling, replicas), &u.Object)).To(Succeed())
			Expect(k8s.Patch(suiteCtx, u, client.RawPatch(types.ApplyPatchType, manifest(autoscaling, replicas)),
				client.FieldOwner("gitops"), client.ForceOwnership)).To(Succeed())
		}
		apply(true, 1)
		Eventually(getHPA(ns, "web")).Should(Not(BeNil()))
		scaleAsAutoscaler(ns, "web", 6)

		By("turning autoscaling off with spec.replicas still 1 keeps the autoscaler's count")
		apply(false, 1)
		Eventually(func(g Gomega) map[string]string { return getDeployment(ns, "web")(g).Annotations }).
			Should(HaveKeyWithValue(desired.AnnotationReplicas, "kept=6"))
		Consistently(func(g Gomega) *int32 { return getDeployment(ns, "web")(g).Spec.Replicas }, "2s").Should(HaveValue(Equal(int32(6))))

		By("turning it off in the edit that sets replicas from 3 to 1 goes to 1")
		apply(true, 3)
		Eventually(getHPA(ns, "web")).Should(Not(BeNil()))
		scaleAsAutoscaler(ns, "web", 5)
		apply(false, 1)
		Eventually(func(g Gomega) *int32 { return getDeployment(ns, "web")(g).Spec.Replicas }).Should(HaveValue(Equal(int32(1))))
	})
})

// scaleAsAutoscaler scales the Deployment through its scale subresource, as the
// HorizontalPodAutoscaler controller does, and waits for the operator to let it stand.
func scaleAsAutoscaler(ns, name string, replicas int32) {
	Eventually(func(g Gomega) {
		d := getDeployment(ns, name)(g)
		scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
		g.Expect(k8s.SubResource("scale").Update(suiteCtx, d, client.WithSubResourceBody(scale),
			client.FieldOwner("kube-controller-manager"))).To(Succeed())
	}).Should(Succeed())
	Consistently(func(g Gomega) *int32 { return getDeployment(ns, name)(g).Spec.Replicas }, "1s").Should(HaveValue(Equal(replicas)))
}
