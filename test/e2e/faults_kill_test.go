package e2e

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// killIterations is how many times the SIGKILL story kills the operator.
const killIterations = 20

var _ = Describe("Faults: the operator is killed again and again", Ordered, Serial, func() {
	It(fmt.Sprintf("loses and duplicates nothing over %d SIGKILLs at random points while MyApps change", killIterations), func() {
		rng := rand.New(rand.NewSource(seedFromEnv()))
		ns := newNamespace()
		w := &workload{ns: ns, rng: rng}
		for range 6 {
			w.create()
		}
		for iter := range killIterations {
			w.mutate(1 + rng.Intn(3))
			// Without leader election, so that the next process does not wait for the lease of
			// the killed one to expire (the lease story covers that).
			op := startOperatorWith(fmt.Sprintf("kill-%02d", iter), operatorConfig{noLeaderElection: true})
			point := ""
			switch rng.Intn(4) {
			case 0:
				point = "right after start"
			case 1:
				point = "once its workers started"
				Eventually(op.workersStarted).Should(BeTrue())
			case 2:
				at := 1 + rng.Intn(len(w.names))
				point = fmt.Sprintf("after %d reconciles", at)
				Eventually(op.scrapeReconciles).Should(BeNumerically(">=", at))
			default:
				Eventually(op.workersStarted).Should(BeTrue())
				w.mutate(1 + rng.Intn(3))
				at := 1 + rng.Intn(len(w.names))
				point = fmt.Sprintf("while changes arrive, after %d reconciles", at)
				Eventually(op.scrapeReconciles).Should(BeNumerically(">=", at))
			}
			op.stop(syscall.SIGKILL)
			GinkgoWriter.Printf("iteration %d: killed %s; %d MyApps\n", iter, point, len(w.names))
		}

		By("starting the operator once more: every MyApp has exactly its children, Ready and current")
		final := startOperatorWith("kill-final", operatorConfig{noLeaderElection: true})
		Eventually(func(g Gomega) {
			if !final.running() {
				StopTrying("the operator exited, see " + final.Log).Now()
			}
			apps := &examplev1.MyAppList{}
			g.Expect(k8s.List(ctx, apps, client.InNamespace(ns))).To(Succeed())
			var got []string
			for _, a := range apps.Items {
				got = append(got, a.Name)
				g.Expect(a.Spec.Image).To(Equal(w.images[a.Name]), a.Name)
			}
			g.Expect(got).To(ConsistOf(w.names))
			expectExactChildren(g, ns)
		}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
		final.expectNoPanic()
	})
})

// workload makes random changes to the MyApps of one namespace and remembers what they
// should be.
type workload struct {
	ns     string
	rng    *rand.Rand
	next   int
	names  []string
	images map[string]string
}

func (w *workload) create() {
	name := fmt.Sprintf("app-%03d", w.next)
	createMyApp(myAppSpec(w.ns, name, w.next))
	w.next++
	w.names = append(w.names, name)
	if w.images == nil {
		w.images = map[string]string{}
	}
	w.images[name] = "nginx:1.27"
}

// mutate makes n random changes: creates, deletes, and updates of image, replicas,
// autoscaling and disruption budget.
func (w *workload) mutate(n int) {
	for range n {
		// Creates twice as likely as deletes, so that the namespace fills up over the story.
		op := w.rng.Intn(7)
		if len(w.names) < 3 {
			op = 0
		}
		if op == 0 || op == 6 {
			w.create()
			continue
		}
		sort.Strings(w.names)
		name := w.names[w.rng.Intn(len(w.names))]
		switch op {
		case 1:
			Eventually(func() error {
				return client.IgnoreNotFound(k8s.Delete(ctx, &examplev1.MyApp{ObjectMeta: metaOf(w.ns, name)}))
			}).Should(Succeed())
			w.names = slices.DeleteFunc(w.names, func(s string) bool { return s == name })
			delete(w.images, name)
		case 2:
			image := fmt.Sprintf("nginx:1.%d", 20+w.rng.Intn(10))
			updateMyAppPatiently(w.ns, name, func(a *examplev1.MyApp) { a.Spec.Image = image })
			w.images[name] = image
		case 3:
			replicas := int32(1 + w.rng.Intn(3))
			updateMyAppPatiently(w.ns, name, func(a *examplev1.MyApp) { a.Spec.Replicas = &replicas })
		case 4:
			updateMyAppPatiently(w.ns, name, func(a *examplev1.MyApp) {
				if a.Spec.AutoScaling != nil && a.Spec.AutoScaling.Enabled {
					a.Spec.AutoScaling = nil
					return
				}
				a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptr(int32(1)), MaxReplicas: ptr(int32(2))}
			})
		case 5:
			updateMyAppPatiently(w.ns, name, func(a *examplev1.MyApp) {
				if a.Spec.PodDisruptionBudget != nil {
					a.Spec.PodDisruptionBudget = nil
					return
				}
				one := intstr.FromInt32(1)
				a.Spec.PodDisruptionBudget = &examplev1.PodDisruptionBudgetSpec{MinAvailable: &one}
			})
		}
	}
}

func metaOf(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
