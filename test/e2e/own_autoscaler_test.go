package e2e

import (
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/example/myapp-operator/internal/controller"
	"github.com/example/myapp-operator/internal/testutil"
)

// ownAutoscaler is the HPA a user writes for a MyApp with autoScaling off (KEDA makes the same
// from a ScaledObject): it targets the MyApp, not its Deployment, through the MyApp's scale
// subresource.
const ownAutoscaler = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: example.com/v1, kind: MyApp, name: web}
  minReplicas: 4
  maxReplicas: 6
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
`

var _ = Describe("A MyApp scaled by the user's own autoscaler", Ordered, Serial, func() {
	BeforeAll(func() {
		op := startOperator("own-autoscaler")
		Eventually(op.isLeader).Should(BeTrue())
	})

	// The local cluster runs no metrics server; the HPA controller (kube-controller-manager,
	// a 5 s sync) still brings its target within [minReplicas, maxReplicas] before it reads
	// any metric, and leaves it there.
	It("follows an HPA whose scaleTargetRef is the MyApp, and nothing fights", func() {
		ns := newNamespace()
		newMyApp(ns, "web", "nginx:1.27", 2)
		expectReady(ns, "web", 2)

		By("kubectl apply of the user's HPA, minReplicas 4: spec.replicas goes to 4, and 4 pods run")
		manifest := filepath.Join(GinkgoT().TempDir(), "hpa.yaml")
		Expect(os.WriteFile(manifest, []byte(ownAutoscaler), 0o600)).To(Succeed())
		kubectl("-n", ns, "apply", "-f", manifest)
		Eventually(func(g Gomega) *int32 { return getMyApp(g, ns, "web").Spec.Replicas }).Should(HaveValue(Equal(int32(4))))
		expectReady(ns, "web", 4)
		Eventually(func(g Gomega) {
			app := getMyApp(g, ns, "web")
			g.Expect(app.Status.Replicas).To(Equal(int32(4)))
			g.Expect(app.Status.Selector).To(Equal("myapp.example.com/name=web"))
			d := getDeployment(g, ns, "web")
			g.Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(4))))
			g.Expect(testutil.OwnsField(d, controller.FieldOwner, "f:spec", "f:replicas")).To(BeTrue())
			h := &autoscalingv2.HorizontalPodAutoscaler{}
			g.Expect(k8s.Get(ctx, key(ns, "web"), h)).To(Succeed())
			g.Expect(h.Status.CurrentReplicas).To(Equal(int32(4)))
			g.Expect(h.Status.DesiredReplicas).To(Equal(int32(4)))
			g.Expect(h.Status.Conditions).To(ContainElement(And(
				HaveField("Type", autoscalingv2.AbleToScale), HaveField("Status", corev1.ConditionTrue))))
		}).Should(Succeed())

		By("across several of the HPA's syncs nobody writes the MyApp's spec or the Deployment's")
		appGen, depGen := getMyApp(Default, ns, "web").Generation, getDeployment(Default, ns, "web").Generation
		Consistently(func(g Gomega) {
			g.Expect(getMyApp(g, ns, "web").Generation).To(Equal(appGen))
			g.Expect(getDeployment(g, ns, "web").Generation).To(Equal(depGen))
		}, 12*time.Second, 500*time.Millisecond).Should(Succeed())

		By("kubectl scale of the MyApp above maxReplicas: the HPA brings it back to 6")
		kubectl("-n", ns, "scale", "myapp/web", "--replicas=9")
		Eventually(func(g Gomega) *int32 { return getMyApp(g, ns, "web").Spec.Replicas }).Should(HaveValue(Equal(int32(6))))
		expectReady(ns, "web", 6)
	})
})
