package e2e

import (
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

// A MyApp's disruption budget against `kubectl drain`, as a cluster administrator meets it:
// while the app's pods are ready, the budget holds and the drain cannot finish; once they are
// all unready, the budget protects nothing, and the drain completes (the budget's
// unhealthyPodEvictionPolicy is AlwaysAllow; with the default, IfHealthyBudget, the drain
// would hang until someone deleted the budget). The simulated node never makes a pod ready
// again once it is marked unready, which lets the story mark them by hand.
var _ = Describe("A node drain", Ordered, Serial, func() {
	const node = "kwok-node-1"

	BeforeAll(func() {
		op := startOperator("drain")
		Eventually(op.isLeader).Should(BeTrue())
	})

	It("is held by a MyApp's budget while its pods are ready, and completes once they are all unready", func() {
		ns := newNamespace()
		app := &examplev1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "drained"},
			Spec: examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(int32(2)),
				NodeSelector:        map[string]examplev1.LabelValue{"kubernetes.io/hostname": node},
				PodDisruptionBudget: &examplev1.PodDisruptionBudgetSpec{MinAvailable: ptr(intstr.FromInt32(2))}},
		}
		Expect(k8s.Create(ctx, app)).To(Succeed())
		expectReady(ns, "drained", 2)
		Eventually(func(g Gomega) {
			pdb := &policyv1.PodDisruptionBudget{}
			g.Expect(k8s.Get(ctx, key(ns, "drained"), pdb)).To(Succeed())
			g.Expect(pdb.Status.ObservedGeneration).To(Equal(pdb.Generation))
			g.Expect(pdb.Status.CurrentHealthy).To(Equal(int32(2)))
			g.Expect(pdb.Status.DisruptionsAllowed).To(BeZero())
		}).Should(Succeed())
		DeferCleanup(func() { kubectl("uncordon", node) })

		By("draining the node while both pods are ready: the budget refuses every eviction until the drain gives up")
		out, err := drain(node, "drained", 15*time.Second)
		Expect(err).To(HaveOccurred(), "the drain finished through a budget that allows no disruption:\n%s", out)
		Expect(out).To(ContainSubstring("disruption budget"))
		Expect(pods(Default, ns, "drained")).To(HaveLen(2), "a pod was evicted through the budget")

		By("marking both pods unready: the budget counts no healthy pod")
		for _, p := range pods(Default, ns, "drained") {
			markUnready(p)
		}
		Eventually(func(g Gomega) {
			pdb := &policyv1.PodDisruptionBudget{}
			g.Expect(k8s.Get(ctx, key(ns, "drained"), pdb)).To(Succeed())
			g.Expect(pdb.Status.CurrentHealthy).To(BeZero())
		}).Should(Succeed())

		By("draining again: the unready pods are evicted and the drain completes")
		out, err = drain(node, "drained", time.Minute)
		Expect(err).NotTo(HaveOccurred(), "the drain hung on unready pods the budget cannot protect:\n%s", out)
	})
})

// drain runs kubectl drain on the node for the MyApp's pods alone, giving up after timeout.
func drain(node, name string, timeout time.Duration) (string, error) {
	cmd := exec.Command(kubectlBin, "--kubeconfig", kubeconfig, "drain", node, "--ignore-daemonsets",
		"--pod-selector", desired.LabelSelector+"="+name, "--timeout", timeout.String())
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// pods lists the MyApp's pods that are not being deleted.
func pods(g Gomega, ns, name string) []corev1.Pod {
	list := &corev1.PodList{}
	g.Expect(k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{desired.LabelSelector: name})).To(Succeed())
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// markUnready sets the pod's Ready condition False, as a kubelet does when its readiness
// probe fails.
func markUnready(p corev1.Pod) {
	Eventually(func(g Gomega) {
		cur := &corev1.Pod{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&p), cur)).To(Succeed())
		for i, c := range cur.Status.Conditions {
			if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
				cur.Status.Conditions[i].Status = corev1.ConditionFalse
				cur.Status.Conditions[i].LastTransitionTime = metav1.Now()
			}
		}
		for i := range cur.Status.ContainerStatuses {
			cur.Status.ContainerStatuses[i].Ready = false
		}
		g.Expect(k8s.Status().Update(ctx, cur)).To(Succeed())
	}).Should(Succeed())
}
