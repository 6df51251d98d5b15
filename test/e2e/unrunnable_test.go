package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

// MyApps the API accepts but that cannot work, because of the namespace they land in: a
// ResourceQuota or a LimitRange that refuses their pods, a quota that allows no NodePort.
// (The MyApp API has no nodePort field, so a NodePort already taken cannot be asked for; a
// quota of zero NodePorts is the way a NodePort Service is refused on shared clusters.)
// Each story checks the condition's reason and message, exactly one event of that reason
// through several reconciles, and a healthy MyApp beside the broken one that gets Ready and
// follows an update.
var _ = Describe("MyApps the API accepts but that cannot work", Ordered, Serial, func() {
	BeforeAll(func() {
		op := startOperator("unrunnable")
		Eventually(op.isLeader).Should(BeTrue())
	})

	It("reports pods a ResourceQuota forbids, with one event, and recovers when the quota is raised", func() {
		ns := newNamespace()
		quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "compute"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("500m")}}}
		Expect(k8s.Create(ctx, quota)).To(Succeed())
		waitForQuotaStatus(ns, "compute")

		healthy := withCPU(ns, "healthy", "100m", "100m")
		broken := withCPU(ns, "broken", "1", "1")
		expectStalled(ns, "broken", examplev1.ReasonReplicaFailure,
			"(FailedCreate)", "A ResourceQuota of the namespace forbids the pods", "kubectl describe replicasets")
		expectOneEvent(broken, examplev1.ReasonReplicaFailure)
		expectFollowsUpdate(healthy)

		By("raising the quota: the ReplicaSet creates the pod, and the MyApp gets Ready")
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key(ns, "compute"), quota)).To(Succeed())
			quota.Spec.Hard[corev1.ResourceRequestsCPU] = resource.MustParse("2")
			g.Expect(k8s.Update(ctx, quota)).To(Succeed())
		}).Should(Succeed())
		// The ReplicaSet controller retries a refused pod with backoff; the operator rereads the
		// quota's effect from the Deployment.
		Eventually(func(g Gomega) {
			g.Expect(conditionOf(getMyApp(g, ns, "broken"), examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).WithTimeout(3 * time.Minute).Should(Succeed())
	})

	It("reports pods a LimitRange rejects, with one event", func() {
		ns := newNamespace()
		limits := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "small"},
			Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
				Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}}
		Expect(k8s.Create(ctx, limits)).To(Succeed())

		healthy := withCPU(ns, "healthy", "100m", "200m")
		broken := withCPU(ns, "broken", "100m", "1")
		expectStalled(ns, "broken", examplev1.ReasonReplicaFailure,
			"(FailedCreate)", "A LimitRange of the namespace rejects the pods", "spec.resources")
		expectOneEvent(broken, examplev1.ReasonReplicaFailure)
		expectFollowsUpdate(healthy)
	})

	It("reports a NodePort Service the namespace's quota forbids, with one event, and still runs the pods", func() {
		ns := newNamespace()
		quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-nodeports"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceServicesNodePorts: resource.MustParse("0")}}}
		Expect(k8s.Create(ctx, quota)).To(Succeed())
		waitForQuotaStatus(ns, "no-nodeports")

		healthy := newMyApp(ns, "healthy", "nginx:1.27", 1)
		broken := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "broken"},
			Spec: examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(int32(1)), ServiceType: examplev1.ServiceTypeNodePort}}
		Expect(k8s.Create(ctx, broken)).To(Succeed())
		expectStalled(ns, "broken", examplev1.ReasonChildRejected,
			"The API server rejected Service broken", "forbids it (a ResourceQuota")
		expectOneEvent(broken, examplev1.ReasonChildRejected)
		Eventually(func(g Gomega) []corev1.Pod { return runningPods(g, ns, "broken") }).Should(HaveLen(1),
			"the Deployment is applied although the Service is refused")
		expectFollowsUpdate(healthy)
	})
})

// withCPU creates a MyApp of one pod with the given cpu request and limit.
func withCPU(ns, name, request, limit string) *examplev1.MyApp {
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(int32(1)), Resources: &examplev1.ResourceRequirements{
			Requests: map[corev1.ResourceName]examplev1.Quantity{corev1.ResourceCPU: examplev1.Quantity(request)},
			Limits:   map[corev1.ResourceName]examplev1.Quantity{corev1.ResourceCPU: examplev1.Quantity(limit)}}}}
	Expect(k8s.Create(ctx, app)).To(Succeed())
	return app
}

// waitForQuotaStatus waits until the quota controller has computed the quota's usage; until
// then the quota admission refuses everything the quota covers.
func waitForQuotaStatus(ns, name string) {
	Eventually(func(g Gomega) {
		q := &corev1.ResourceQuota{}
		g.Expect(k8s.Get(ctx, key(ns, name), q)).To(Succeed())
		g.Expect(q.Status.Hard).NotTo(BeEmpty(), "the quota controller has not computed the quota's status")
	}).Should(Succeed())
}

// expectStalled waits until the MyApp is Stalled with that reason, and its message holds
// every part of want.
func expectStalled(ns, name, reason string, want ...string) {
	Eventually(func(g Gomega) {
		app := getMyApp(g, ns, name)
		stalled := conditionOf(app, examplev1.ConditionStalled)
		g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue), "Stalled: %s: %s", stalled.Reason, stalled.Message)
		g.Expect(stalled.Reason).To(Equal(reason))
		for _, w := range want {
			g.Expect(stalled.Message).To(ContainSubstring(w))
		}
		ready := conditionOf(app, examplev1.ConditionReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(reason))
	}).Should(Succeed())
}

// expectOneEvent checks that the MyApp got exactly one event of that reason, and still has
// exactly one after three more reconciles, each seen to reach its status write.
func expectOneEvent(app *examplev1.MyApp, reason string) {
	app = getMyApp(Default, app.Namespace, app.Name) // for its UID
	Eventually(func(g Gomega) int { return countEvents(g, app, reason) }).Should(Equal(1))
	for i := range 3 {
		v := fmt.Sprintf("%s-%d", reason, i)
		updateMyApp(app.Namespace, app.Name, func(a *examplev1.MyApp) {
			if a.Annotations == nil {
				a.Annotations = map[string]string{}
			}
			a.Annotations[examplev1.ReconcileRequestAnnotation] = v
		})
		Eventually(func(g Gomega) string { return getMyApp(g, app.Namespace, app.Name).Status.LastHandledReconcileAt }).Should(Equal(v))
	}
	Consistently(func(g Gomega) int { return countEvents(g, app, reason) }, 3*time.Second).Should(Equal(1))
}

// expectFollowsUpdate checks that a healthy MyApp is Ready, then follows a new image to Ready.
func expectFollowsUpdate(app *examplev1.MyApp) {
	expectReady(app.Namespace, app.Name, 1)
	updateMyApp(app.Namespace, app.Name, func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
	Eventually(func(g Gomega) string {
		return getDeployment(g, app.Namespace, app.Name).Spec.Template.Spec.Containers[0].Image
	}).Should(Equal("nginx:1.28"))
	expectReady(app.Namespace, app.Name, 1)
}

// countEvents counts the events of that reason recorded on the MyApp (testutil.CountEvents),
// failing when it cannot count.
func countEvents(g Gomega, app *examplev1.MyApp, reason string) int {
	n, err := testutil.CountEvents(ctx, k8s, app, reason)
	g.Expect(err).NotTo(HaveOccurred())
	return n
}
