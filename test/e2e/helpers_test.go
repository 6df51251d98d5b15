package e2e

import (
	. "github.com/onsi/ginkgo/v2"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

// testNamespacePrefix starts the name of every namespace the stories make.
const testNamespacePrefix = "e2e-"

// newNamespace makes a namespace for one story and deletes it afterwards.
func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: testNamespacePrefix}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(ctx, ns) })
	return ns.Name
}

// otherTestNamespaces lists the namespaces of other stories that still exist, terminating
// ones included.
func otherTestNamespaces(g Gomega, except string) []string {
	list := &corev1.NamespaceList{}
	g.Expect(k8s.List(ctx, list)).To(Succeed())
	var names []string
	for _, n := range list.Items {
		if n.GenerateName == testNamespacePrefix && n.Name != except {
			names = append(names, n.Name)
		}
	}
	return names
}

func newMyApp(ns, name, image string, replicas int32) *examplev1.MyApp {
	app := &examplev1.MyApp{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       examplev1.MyAppSpec{Image: image, Replicas: &replicas},
	}
	Expect(k8s.Create(ctx, app)).To(Succeed())
	return app
}

func key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

func getMyApp(g Gomega, ns, name string) *examplev1.MyApp {
	app := &examplev1.MyApp{}
	g.Expect(k8s.Get(ctx, key(ns, name), app)).To(Succeed())
	return app
}

// updateMyApp changes a MyApp's spec, retrying on conflicts with the operator's status writes.
func updateMyApp(ns, name string, mutate func(*examplev1.MyApp)) {
	Eventually(func(g Gomega) {
		app := getMyApp(g, ns, name)
		mutate(app)
		g.Expect(k8s.Update(ctx, app)).To(Succeed())
	}).Should(Succeed())
}

func conditionOf(app *examplev1.MyApp, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(app.Status.Conditions, typ); c != nil {
		return *c
	}
	return metav1.Condition{Type: typ, Status: metav1.ConditionUnknown}
}

// expectReady waits until the MyApp is Ready for its current generation with want ready
// replicas, and its pods, as the cluster runs them, agree.
func expectReady(ns, name string, want int32) {
	Eventually(func(g Gomega) {
		app := getMyApp(g, ns, name)
		ready := conditionOf(app, examplev1.ConditionReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "Ready: %s: %s", ready.Reason, ready.Message)
		g.Expect(ready.ObservedGeneration).To(Equal(app.Generation))
		g.Expect(app.Status.ObservedGeneration).To(Equal(app.Generation))
		g.Expect(app.Status.ReadyReplicas).To(Equal(want))
		g.Expect(runningPods(g, ns, name)).To(HaveLen(int(want)))
	}).Should(Succeed())
}

// runningPods lists the MyApp's pods that run and are ready, ignoring terminating ones.
func runningPods(g Gomega, ns, name string) []corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{desired.LabelSelector: name})).To(Succeed())
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				out = append(out, p)
			}
		}
	}
	return out
}

func getDeployment(g Gomega, ns, name string) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(ctx, key(ns, name), d)).To(Succeed())
	return d
}

// countAll counts the objects of a list type with the MyApp's instance label in a namespace.
func countAll(g Gomega, ns string, list client.ObjectList, name string) int {
	g.Expect(k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{desired.LabelSelector: name})).To(Succeed())
	return meta.LenList(list)
}

// metaItems returns a list's items as objects.
func metaItems(list client.ObjectList) ([]client.Object, error) {
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(client.Object))
	}
	return out, nil
}
