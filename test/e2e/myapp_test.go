package e2e

import (
	"fmt"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/controller"
	"github.com/example/myapp-operator/internal/testutil"
)

// unstartableImage never becomes ready on the local cluster's simulated nodes.
const unstartableImage = "example.com/unstartable:never"

var _ = Describe("A MyApp on a real cluster", Ordered, Serial, func() {
	var op *operator
	BeforeAll(func() {
		op = startOperator("lifecycle")
		Eventually(op.isLeader).Should(BeTrue())
	})

	It("runs its pods, scales with kubectl, rolls out a new image and hands replicas to an autoscaler", func() {
		ns := newNamespace()
		newMyApp(ns, "web", "nginx:1.27", 3)
		By("running 3 ready pods and reporting Ready")
		expectReady(ns, "web", 3)
		By("giving its Service an endpoint per ready pod")
		Eventually(func(g Gomega) int {
			slices := &discoveryv1.EndpointSliceList{}
			g.Expect(k8s.List(ctx, slices, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: "web"})).To(Succeed())
			ready := 0
			for _, sl := range slices.Items {
				for _, ep := range sl.Endpoints {
					if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
						ready++
					}
				}
			}
			return ready
		}).Should(Equal(3))

		By("following `kubectl scale` through the scale subresource")
		kubectl("-n", ns, "scale", "myapp/web", "--replicas=5")
		expectReady(ns, "web", 5)

		By("rolling out a new image: Progressing, then Ready for the new generation")
		w, err := k8s.Watch(ctx, &examplev1.MyAppList{}, client.InNamespace(ns))
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		updateMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
		app := &examplev1.MyApp{}
		Expect(k8s.Get(ctx, key(ns, "web"), app)).To(Succeed())
		sawProgressing := false
		Eventually(func() bool {
			for {
				select {
				case ev := <-w.ResultChan():
					a, ok := ev.Object.(*examplev1.MyApp)
					if !ok || ev.Type != watch.Modified || a.Status.ObservedGeneration != app.Generation {
						continue
					}
					if c := conditionOf(a, examplev1.ConditionProgressing); c.Status == metav1.ConditionTrue {
						sawProgressing = true
					}
					if sawProgressing && conditionOf(a, examplev1.ConditionReady).Status == metav1.ConditionTrue {
						return true
					}
				default:
					return false
				}
			}
		}).Should(BeTrue())
		expectReady(ns, "web", 5)
		Eventually(func(g Gomega) {
			for _, p := range runningPods(g, ns, "web") {
				g.Expect(p.Spec.Containers[0].Image).To(Equal("nginx:1.28"))
			}
		}).Should(Succeed())

		By("turning autoscaling on: an autoscaler appears and owns the replica count")
		updateMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptr(int32(6)), MaxReplicas: ptr(int32(8))}
		})
		Eventually(func() error { return k8s.Get(ctx, key(ns, "web"), &autoscalingv2.HorizontalPodAutoscaler{}) }).Should(Succeed())
		// Without metrics the autoscaler still holds the count within its bounds: 5 -> 6.
		Eventually(func(g Gomega) {
			d := getDeployment(g, ns, "web")
			g.Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(6))))
			g.Expect(testutil.OwnsField(d, controller.FieldOwner, "f:spec", "f:replicas")).To(BeFalse())
		}).Should(Succeed())
		expectReady(ns, "web", 6)

		By("turning autoscaling off: the autoscaler goes and spec.replicas rules again")
		updateMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.AutoScaling.Enabled = false })
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, key(ns, "web"), &autoscalingv2.HorizontalPodAutoscaler{}))
		}).Should(BeTrue())
		expectReady(ns, "web", 5)
		Eventually(func(g Gomega) bool {
			return testutil.OwnsField(getDeployment(g, ns, "web"), controller.FieldOwner, "f:spec", "f:replicas")
		}).Should(BeTrue())
	})

	It("is cleaned up whole by the garbage collector when deleted", func() {
		ns := newNamespace()
		app := newMyApp(ns, "gone", "nginx:1.27", 2)
		updateMyApp(ns, "gone", func(a *examplev1.MyApp) {
			a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptr(int32(2)), MaxReplicas: ptr(int32(3))}
		})
		expectReady(ns, "gone", 2)
		Eventually(func() error { return k8s.Get(ctx, key(ns, "gone"), &autoscalingv2.HorizontalPodAutoscaler{}) }).Should(Succeed())

		Expect(k8s.Delete(ctx, app)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(countAll(g, ns, &appsv1.DeploymentList{}, "gone")).To(BeZero())
			g.Expect(countAll(g, ns, &appsv1.ReplicaSetList{}, "gone")).To(BeZero())
			g.Expect(countAll(g, ns, &corev1.PodList{}, "gone")).To(BeZero())
			g.Expect(countAll(g, ns, &corev1.ServiceList{}, "gone")).To(BeZero())
			g.Expect(countAll(g, ns, &autoscalingv2.HorizontalPodAutoscalerList{}, "gone")).To(BeZero())
		}).Should(Succeed())
	})

	It("reports an application that cannot start, without a hot loop", func() {
		ns := newNamespace()
		newMyApp(ns, "broken", unstartableImage, 1)
		// The Deployment keeps Kubernetes' default progress deadline of 600s, which the
		// operator does not manage; a user (here, the test) may shorten it.
		Eventually(func(g Gomega) {
			d := getDeployment(g, ns, "broken")
			patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"progressDeadlineSeconds":3}}`))
			g.Expect(k8s.Patch(ctx, d, patch, client.FieldOwner("e2e-user"))).To(Succeed())
		}).Should(Succeed())

		Eventually(func(g Gomega) {
			app := getMyApp(g, ns, "broken")
			ready := conditionOf(app, examplev1.ConditionReady)
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			// The pods say why (the simulated kubelet cannot pull the image), which is more
			// useful than the Deployment's ProgressDeadlineExceeded, also reached here.
			g.Expect(ready.Reason).To(Equal(examplev1.ReasonImagePullBackOff))
			g.Expect(ready.Message).To(ContainSubstring(`cannot pull image "` + unstartableImage + `"`))
			g.Expect(conditionOf(app, examplev1.ConditionDegraded).Status).To(Equal(metav1.ConditionTrue))
			progressing := getDeployment(g, ns, "broken").Status.Conditions
			g.Expect(progressing).To(ContainElement(HaveField("Reason", examplev1.ReasonProgressDeadlineExceeded)))
		}).Should(Succeed())
		Expect(kubectl("-n", ns, "get", "myapp", "broken")).To(ContainSubstring(examplev1.ReasonImagePullBackOff))

		By("not writing or reconciling in a loop while it stays broken")
		// The reconcile count is the operator's total: wait until the earlier specs' namespaces,
		// whose children the garbage collector removes (each removal reconciles its owner), are
		// gone, so that only this MyApp is counted.
		Eventually(func(g Gomega) []string { return otherTestNamespaces(g, ns) }).Should(BeEmpty())
		rv := getMyApp(Default, ns, "broken").ResourceVersion
		before := op.reconciles()
		Consistently(func(g Gomega) string { return getMyApp(g, ns, "broken").ResourceVersion }, 5*time.Second).Should(Equal(rv))
		Expect(op.reconciles() - before).To(BeNumerically("<=", 3))
	})
})

var _ = Describe("The operator process", Ordered, Serial, func() {
	It("converges 50 MyApps after being killed mid-way, with no duplicates or orphans", func() {
		ns := newNamespace()
		first := startOperator("restart-1")
		Eventually(first.isLeader).Should(BeTrue())
		const n = 50
		for i := range n {
			newMyApp(ns, fmt.Sprintf("app-%02d", i), "nginx:1.27", 1)
		}
		// Kill it once it is part-way through.
		deployments := &appsv1.DeploymentList{}
		Eventually(func(g Gomega) []appsv1.Deployment {
			g.Expect(k8s.List(ctx, deployments, client.InNamespace(ns))).To(Succeed())
			return deployments.Items
		}).ShouldNot(BeEmpty())
		GinkgoWriter.Printf("killing the operator with %d of %d Deployments created\n", len(deployments.Items), n)
		first.stop(syscall.SIGKILL) // SIGKILL: no chance to release the lease or finish anything

		second := startOperator("restart-2")
		Eventually(second.isLeader).WithTimeout(60 * time.Second).Should(BeTrue())
		Eventually(func(g Gomega) {
			apps := &examplev1.MyAppList{}
			g.Expect(k8s.List(ctx, apps, client.InNamespace(ns))).To(Succeed())
			g.Expect(apps.Items).To(HaveLen(n))
			for _, a := range apps.Items {
				g.Expect(conditionOf(&a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue), a.Name)
			}
		}).WithTimeout(3 * time.Minute).Should(Succeed())

		By("having exactly one Deployment, ReplicaSet, Service and pod per MyApp, each owned")
		apps := &examplev1.MyAppList{}
		Expect(k8s.List(ctx, apps, client.InNamespace(ns))).To(Succeed())
		uids := map[types.UID]bool{}
		for _, a := range apps.Items {
			uids[a.UID] = true
		}
		Eventually(func(g Gomega) {
			for _, list := range []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ServiceList{}} {
				g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
				items, err := metaItems(list)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(items).To(HaveLen(n))
				for _, o := range items {
					ref := metav1.GetControllerOf(o)
					g.Expect(ref).NotTo(BeNil(), o.GetName())
					g.Expect(uids).To(HaveKey(ref.UID), o.GetName())
				}
			}
			rs := &appsv1.ReplicaSetList{}
			g.Expect(k8s.List(ctx, rs, client.InNamespace(ns))).To(Succeed())
			g.Expect(rs.Items).To(HaveLen(n))
			pods := &corev1.PodList{}
			g.Expect(k8s.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(n))
		}).Should(Succeed())
	})

	It("runs one active replica under leader election, and another takes over when it dies", func() {
		a, b := startOperator("leader-a"), startOperator("leader-b")
		Eventually(func() bool { return a.isLeader() || b.isLeader() }).WithTimeout(60 * time.Second).Should(BeTrue())
		leader, standby := a, b
		if b.isLeader() {
			leader, standby = b, a
		}
		Consistently(standby.isLeader, 3*time.Second).Should(BeFalse())

		ns := newNamespace()
		newMyApp(ns, "one", "nginx:1.27", 1)
		expectReady(ns, "one", 1)
		Expect(leader.reconciles()).To(BeNumerically(">", 0))
		Expect(standby.reconciles()).To(BeZero())

		By("killing the leader")
		killed := time.Now()
		leader.stop(syscall.SIGKILL)
		Eventually(standby.isLeader).WithTimeout(60 * time.Second).WithPolling(100 * time.Millisecond).Should(BeTrue())
		takeover := time.Since(killed)
		AddReportEntry("leader takeover after SIGKILL", takeover.Round(100*time.Millisecond).String())
		GinkgoWriter.Printf("takeover after SIGKILL of the leader: %s\n", takeover.Round(100*time.Millisecond))

		newMyApp(ns, "two", "nginx:1.27", 2)
		expectReady(ns, "two", 2)
		Expect(standby.reconciles()).To(BeNumerically(">", 0))
	})
})

func ptr[T any](v T) *T { return &v }
