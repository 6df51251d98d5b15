package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Permission to create a MyApp is permission to create its pods, so what guards a namespace
// is Pod Security Admission, which judges the pods the ReplicaSet controller creates, not the
// MyApp. This story shows that guard holds through the operator: in a namespace that enforces
// the restricted level, a privileged MyApp is stored, its pods are refused, and the MyApp
// says so (Stalled, ReplicaFailure), while a MyApp with the default security contexts runs
// beside it. The story asks only that the MyApp gives a message, not what it says: the API
// server's wording of the refusal is not the operator's to promise.
var _ = Describe("A namespace that enforces the restricted Pod Security level", Ordered, Serial, func() {
	BeforeAll(func() {
		op := startOperator("pod-security")
		Eventually(op.isLeader).Should(BeTrue())
	})

	It("refuses a privileged MyApp's pods, the MyApp says why, and runs it once it asks for no privilege", func() {
		ns := newRestrictedNamespace()

		By("a MyApp with the default security contexts: its pods pass, and it gets Ready")
		newMyApp(ns, "plain", "nginx:1.27", 1)
		expectReady(ns, "plain", 1)

		By("a privileged MyApp: admitted, as the MyApp API leaves privilege to the namespace")
		privileged := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "privileged"},
			Spec: examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(int32(1)),
				SecurityContext: &corev1.SecurityContext{Privileged: ptr(true), AllowPrivilegeEscalation: ptr(true)}}}
		Expect(k8s.Create(ctx, privileged)).To(Succeed())

		By("its pods refused by Pod Security Admission: Stalled and not Ready, with reason ReplicaFailure and a message")
		Eventually(func(g Gomega) {
			app := getMyApp(g, ns, "privileged")
			stalled := conditionOf(app, examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue), "Stalled: %s: %s", stalled.Reason, stalled.Message)
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonReplicaFailure))
			g.Expect(stalled.Message).NotTo(BeEmpty())
			ready := conditionOf(app, examplev1.ConditionReady)
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(examplev1.ReasonReplicaFailure))
			g.Expect(ready.Message).NotTo(BeEmpty())
		}).WithTimeout(2 * time.Minute).Should(Succeed())
		Expect(countAll(Default, ns, &corev1.PodList{}, "privileged")).To(BeZero(), "a pod of the privileged MyApp was admitted")
		expectOneEvent(privileged, examplev1.ReasonReplicaFailure)

		By("dropping the privilege: the new template's pods pass, and the MyApp gets Ready")
		updateMyApp(ns, "privileged", func(a *examplev1.MyApp) { a.Spec.SecurityContext = nil })
		expectReady(ns, "privileged", 1)
		Expect(conditionOf(getMyApp(Default, ns, "privileged"), examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
	})
})

// newRestrictedNamespace makes a namespace for one story that enforces the restricted Pod
// Security level, at the cluster's version of it, and deletes it afterwards.
func newRestrictedNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: testNamespacePrefix, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(ctx, ns) })
	return ns.Name
}
