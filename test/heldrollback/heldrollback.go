// Package heldrollback is the upgrade stories' check that a rollback a released manager holds
// is kept by the next one: a MyApp that a release's manager rolled back, and what the upgraded
// manager must leave as it is (the record, the Deployment's pod template, the pods).
package heldrollback

import (
	"context"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive,staticcheck // Ginkgo's DSL, as in the suites
	. "github.com/onsi/gomega"    //nolint:revive,staticcheck // Gomega's DSL, as in the suites
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// UnstartableImage never starts on the local cluster's simulated nodes: their kubelet reports
// its pods waiting in ImagePullBackOff (hack/localcluster/stages.go). On a real node, an image
// of a registry that does not resolve does the same.
const UnstartableImage = "example.com/unstartable:never"

// Held is a MyApp whose failed rollout a release's manager rolled back, as it stood then.
type Held struct {
	k8s      client.Client
	key      client.ObjectKey
	record   *examplev1.RollbackStatus
	template corev1.PodTemplateSpec
	pods     []string
}

// Create makes the MyApp ns/name of the given spec, with one replica, that Hold then makes
// the running manager roll back: a story creates it early, so that its pods start beside the
// story's other work.
func Create(ctx context.Context, k8s client.Client, ns, name string, spec examplev1.MyAppSpec) *Held {
	GinkgoHelper()
	h := &Held{k8s: k8s, key: client.ObjectKey{Namespace: ns, Name: name}}
	spec.Replicas = ptrTo[int32](1)
	Expect(k8s.Create(ctx, &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec})).To(Succeed())
	return h
}

// Hold creates the MyApp ns/name of the given spec, with one replica, and makes the running
// manager, of the named release, roll it back and hold it (Held.Hold).
func Hold(ctx context.Context, k8s client.Client, ns, name, version string, spec examplev1.MyAppSpec, failing string) *Held {
	GinkgoHelper()
	return Create(ctx, k8s, ns, name, spec).Hold(ctx, version, failing)
}

// Hold waits until the MyApp is Ready under the running manager, of the named release (the
// manager records the template that served), then asks for the image failing, whose pods never
// start, and waits until the manager has rolled it back (after its grace: 30 s unless its flag
// says otherwise).
func (h *Held) Hold(ctx context.Context, version, failing string) *Held {
	GinkgoHelper()
	var good string
	Eventually(func(g Gomega) {
		app := h.myApp(ctx, g)
		ready := meta.FindStatusCondition(app.Status.Conditions, examplev1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%s: %s", ready.Reason, ready.Message)
		g.Expect(app.Status.ReadyTemplate).NotTo(BeEmpty(), "the %s manager records the template that served", version)
		good = app.Spec.Image
	}).Should(Succeed())
	By("holding a rollback under the " + version + " manager: MyApp " + h.key.Name + " Ready on " + good + ", then on " + failing + ", which never starts")
	Eventually(func(g Gomega) {
		app := h.myApp(ctx, g)
		app.Spec.Image = failing
		g.Expect(h.k8s.Update(ctx, app)).To(Succeed())
	}).Should(Succeed())
	Eventually(func(g Gomega) {
		app := h.myApp(ctx, g)
		g.Expect(app.Status.RolledBack).NotTo(BeNil())
		g.Expect(app.Status.RolledBack.Generation).To(Equal(app.Generation))
		g.Expect(app.Status.RolledBack.Reason).To(Equal(examplev1.ReasonImagePullBackOff))
		d := h.deployment(ctx, g)
		g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(good))
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		g.Expect(d.Status.Replicas).To(Equal(int32(1)), "the failed template's pod is gone")
		g.Expect(d.Status.ReadyReplicas).To(Equal(int32(1)))
		h.record, h.template, h.pods = app.Status.RolledBack, d.Spec.Template, h.podUIDs(ctx, g, d)
	}).Should(Succeed(), "the %s manager rolls MyApp %s back", version, h.key)
	return h
}

// markAnnotation is where the current manager records a rollback it holds on the Deployment
// (internal/controller/rollback.go); a release before 0.4.1 wrote none, so the mark shows that
// the current manager has looked at the MyApp.
const markAnnotation = "myapp.example.com/rolled-back"

// ExpectKept holds when the running manager, of the current version, keeps the rollback as the
// release's manager left it: once it has looked at the MyApp (its mark on the Deployment), the
// same record, the same pod template, the same pods, the MyApp Stalled for the rollback; and
// so for a while after.
func (h *Held) ExpectKept(ctx context.Context) {
	GinkgoHelper()
	By("keeping the rollback the previous manager holds: the same record, pod template and pods")
	Eventually(func(g Gomega) map[string]string { return h.deployment(ctx, g).Annotations }).
		Should(HaveKey(markAnnotation), "the current manager has not looked at the held MyApp")
	check := func(g Gomega) {
		app := h.myApp(ctx, g)
		g.Expect(app.Status.ObservedGeneration).To(Equal(app.Generation))
		g.Expect(app.Status.RolledBack).To(Equal(h.record))
		stalled := meta.FindStatusCondition(app.Status.Conditions, examplev1.ConditionStalled)
		g.Expect(stalled).NotTo(BeNil())
		g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(stalled.Reason).To(Equal(examplev1.ReasonRolledBack))
		d := h.deployment(ctx, g)
		g.Expect(d.Spec.Template).To(Equal(h.template), "the Deployment's pod template changed")
		g.Expect(h.podUIDs(ctx, g, d)).To(Equal(h.pods), "a pod of the held MyApp was replaced")
	}
	Eventually(check).Should(Succeed())
	Consistently(check).WithTimeout(5 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
}

func (h *Held) myApp(ctx context.Context, g Gomega) *examplev1.MyApp {
	app := &examplev1.MyApp{}
	g.Expect(h.k8s.Get(ctx, h.key, app)).To(Succeed())
	return app
}

func (h *Held) deployment(ctx context.Context, g Gomega) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	g.Expect(h.k8s.Get(ctx, h.key, d)).To(Succeed())
	return d
}

// podUIDs are the UIDs of the Deployment's pods that are not being deleted, sorted.
func (h *Held) podUIDs(ctx context.Context, g Gomega, d *appsv1.Deployment) []string {
	pods := &corev1.PodList{}
	g.Expect(h.k8s.List(ctx, pods, client.InNamespace(h.key.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels))).To(Succeed())
	var uids []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			uids = append(uids, string(p.UID))
		}
	}
	g.Expect(uids).NotTo(BeEmpty(), "no pod of MyApp %s to compare", h.key)
	slices.Sort(uids)
	return uids
}

func ptrTo[T any](v T) *T { return &v }
