package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// crdManifest is the MyApp CRD as make test-e2e installs it.
var crdManifest = filepath.Join("..", "..", "config", "crd", "bases", "example.com_myapps.yaml")

var _ = Describe("Faults: deletions race the operator", Ordered, Serial, func() {
	var op *operator
	BeforeAll(func() {
		op = startOperatorWith("faults-deletion", operatorConfig{probes: true})
		Eventually(op.isLeader).WithTimeout(60 * time.Second).Should(BeTrue())
	})
	AfterAll(func() { op.expectNoPanic() })

	It("leaves nothing behind of MyApps deleted while they are reconciled", func() {
		ns := newNamespace()
		const n = 20
		var wg sync.WaitGroup
		for i := range n {
			app := myAppSpec(ns, fmt.Sprintf("brief-%02d", i), i)
			createMyApp(app)
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				// Half right away, half once the operator has made the Deployment.
				if i%2 == 1 {
					Eventually(func() error { return k8s.Get(ctx, key(ns, app.Name), &appsv1.Deployment{}) }).Should(Succeed())
				}
				Expect(client.IgnoreNotFound(k8s.Delete(ctx, app))).To(Succeed())
			}()
		}
		wg.Wait()
		// A child applied after its MyApp went has an owner reference to a missing object:
		// the garbage collector removes it. Anything else would be an orphan.
		Eventually(func(g Gomega) {
			for _, list := range []client.ObjectList{&examplev1.MyAppList{}, &appsv1.DeploymentList{}, &corev1.ServiceList{},
				&autoscalingv2.HorizontalPodAutoscalerList{}, &policyv1.PodDisruptionBudgetList{}, &corev1.PodList{}} {
				g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
				items, err := metaItems(list)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(items).To(BeEmpty(), "%T", list)
			}
		}).WithTimeout(2 * time.Minute).Should(Succeed())
		Expect(op.running()).To(BeTrue())
	})

	It("lets a namespace with MyApps in it be deleted, and goes on reconciling the others", func() {
		doomed := newNamespace()
		for i := range 5 {
			createMyApp(myAppSpec(doomed, fmt.Sprintf("app-%d", i), i))
		}
		Eventually(func(g Gomega) { expectExactChildren(g, doomed) }).Should(Succeed())
		updateMyAppPatiently(doomed, "app-0", func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
		Expect(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: doomed}})).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, key("", doomed), &corev1.Namespace{}))
		}).WithTimeout(2 * time.Minute).Should(BeTrue())

		other := newNamespace()
		newMyApp(other, "survivor", "nginx:1.27", 1)
		expectReady(other, "survivor", 1)
		Expect(op.running()).To(BeTrue())
	})

	It("recreates children deleted in every order", func() {
		ns := newNamespace()
		kinds := []childKind{
			{"Deployment", func() client.Object { return &appsv1.Deployment{} }},
			{"Service", func() client.Object { return &corev1.Service{} }},
			{"HorizontalPodAutoscaler", func() client.Object { return &autoscalingv2.HorizontalPodAutoscaler{} }},
			{"PodDisruptionBudget", func() client.Object { return &policyv1.PodDisruptionBudget{} }},
		}
		// One MyApp per order in which its four children are deleted back to back (all 24),
		// plus one per child deleted alone.
		orders := permutations([]int{0, 1, 2, 3})
		for i := range kinds {
			orders = append(orders, []int{i})
		}
		names := make([]string, len(orders))
		for i := range orders {
			names[i] = fmt.Sprintf("order-%02d", i)
			app := myAppSpec(ns, names[i], 0) // 0: an autoscaler and a budget
			createMyApp(app)
		}
		Eventually(func(g Gomega) { expectExactChildren(g, ns) }).WithTimeout(2 * time.Minute).Should(Succeed())
		before := map[string]types.UID{}
		for _, name := range names {
			for _, k := range kinds {
				o := k.new()
				Expect(k8s.Get(ctx, key(ns, name), o)).To(Succeed())
				before[k.name+"/"+name] = o.GetUID()
			}
		}

		var wg sync.WaitGroup
		for i, order := range orders {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for _, k := range order {
					o := kinds[k].new()
					o.SetNamespace(ns)
					o.SetName(names[i])
					Expect(k8s.Delete(ctx, o)).To(Succeed(), "%s %s", kinds[k].name, names[i])
				}
			}()
		}
		wg.Wait()

		Eventually(func(g Gomega) {
			for i, order := range orders {
				for _, k := range order {
					o := kinds[k].new()
					g.Expect(k8s.Get(ctx, key(ns, names[i]), o)).To(Succeed(), "%s %s", kinds[k].name, names[i])
					g.Expect(o.GetUID()).NotTo(Equal(before[kinds[k].name+"/"+names[i]]), "%s %s was not recreated", kinds[k].name, names[i])
				}
			}
			expectExactChildren(g, ns)
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	})

	It("stays healthy while its CRD is deleted, and reconciles again when the CRD returns", func() {
		By("waiting until the garbage collector watches MyApps: it removes the children of the MyApps the CRD takes with it")
		expectGarbageCollectorWatchesMyApps()
		ns := newNamespace()
		newMyApp(ns, "before", "nginx:1.27", 1)
		expectReady(ns, "before", 1)
		DeferCleanup(func() {
			// Whatever happened, the next stories need the CRD, and the garbage collector
			// watching MyApps again (it drops the kind with the CRD).
			kubectl("apply", "--server-side", "-f", crdManifest)
			expectCRDEstablished()
			expectGarbageCollectorWatchesMyApps()
		})
		logSize := fileSize(op.Log)

		By("deleting the CRD, and with it every MyApp")
		kubectl("delete", "crd", "myapps.example.com", "--wait=true", "--timeout=120s")
		Eventually(func(g Gomega) {
			g.Expect(countAll(g, ns, &appsv1.DeploymentList{}, "before")).To(BeZero())
		}).WithTimeout(2 * time.Minute).Should(Succeed())
		// controller-runtime's informer logs each failed list of MyApps, with the type and why.
		Eventually(func() string { return logSince(op.Log, logSize) }).WithTimeout(2*time.Minute).
			Should(And(ContainSubstring(`"type":"*v1.MyApp"`), ContainSubstring("the server could not find the requested resource")),
				"the operator logs that MyApps are gone, see %s", op.Log)
		Consistently(func(g Gomega) {
			g.Expect(op.running()).To(BeTrue(), "the operator exited, see %s", op.Log)
			g.Expect(op.probe(g, "/healthz")).To(Equal(http.StatusOK))
			g.Expect(op.probe(g, "/readyz")).To(Equal(http.StatusOK))
		}, 10*time.Second, 500*time.Millisecond).Should(Succeed())
		GinkgoWriter.Printf("the operator's log while the CRD was gone:\n%s\n", firstLines(logSince(op.Log, logSize), 5))

		By("bringing the CRD back: a new MyApp reconciles")
		kubectl("apply", "--server-side", "-f", crdManifest)
		expectCRDEstablished()
		Eventually(func() error {
			return k8s.Create(ctx, &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "after"},
				Spec: examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(int32(1))}})
		}).Should(Succeed())
		Eventually(func(g Gomega) { expectExactChildren(g, ns) }).WithTimeout(3 * time.Minute).Should(Succeed())
		expectReady(ns, "after", 1)
		Expect(op.probe(Default, "/readyz")).To(Equal(http.StatusOK))
	})
})

// expectGarbageCollectorWatchesMyApps waits until the cluster's garbage collector watches
// MyApps. It finds new kinds through discovery every 30 s (kube-controller-manager's sync
// period), and make test-e2e installs the CRD seconds before the suite starts: a story that
// runs first, alone or by the suite's random order, would delete a MyApp the collector has not
// seen. Its children then stay, the collector looking the owner up only at a backoff that
// grows to minutes, and not at all once the CRD is gone. Only a watched MyApp is a known
// dependent: a MyApp owned by a ConfigMap is collected when the ConfigMap goes once the
// collector watches MyApps (at once, or when it starts to and finds the owner gone), and never
// before.
//
// It deletes its namespace itself, so that a cleanup may call it.
func expectGarbageCollectorWatchesMyApps() {
	GinkgoHelper()
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: testNamespacePrefix}}
	Expect(k8s.Create(ctx, namespace)).To(Succeed())
	defer func() { _ = k8s.Delete(ctx, namespace) }()
	ns := namespace.Name
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gc-probe-owner"}}
	Expect(k8s.Create(ctx, owner)).To(Succeed())
	probe := &examplev1.MyApp{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gc-probe", OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}},
		Spec: examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(int32(0))},
	}
	Expect(k8s.Create(ctx, probe)).To(Succeed())
	Expect(k8s.Delete(ctx, owner)).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, key(ns, probe.Name), &examplev1.MyApp{}))
	}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(BeTrue(),
		"the garbage collector never collected a MyApp whose owner is gone: it does not watch MyApps")
}

// childKind names a kind of child and makes an empty one.
type childKind struct {
	name string
	new  func() client.Object
}

// permutations returns every order of xs.
func permutations(xs []int) [][]int {
	if len(xs) <= 1 {
		return [][]int{append([]int{}, xs...)}
	}
	var out [][]int
	for i := range xs {
		rest := append(append([]int{}, xs[:i]...), xs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]int{xs[i]}, p...))
		}
	}
	return out
}

func fileSize(path string) int64 {
	info, err := os.Stat(path)
	Expect(err).NotTo(HaveOccurred())
	return info.Size()
}

// logSince returns what a log file gained after offset.
func logSince(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < offset {
		return ""
	}
	return string(b[offset:])
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// expectCRDEstablished waits until the MyApp CRD is Established. It polls instead of `kubectl
// wait --for=condition=Established`, which fails at once on a CRD created a moment ago whose
// status has no conditions yet.
func expectCRDEstablished() {
	GinkgoHelper()
	Eventually(func() (string, error) {
		out, err := exec.Command(kubectlBin, "--kubeconfig", kubeconfig, "get", "crd", "myapps.example.com",
			"-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`).CombinedOutput()
		return string(out), err
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Equal("True"))
}
