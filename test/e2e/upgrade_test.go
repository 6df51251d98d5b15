package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/controller"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/testutil"
)

var _ = Describe("The selector migration on a real cluster", Ordered, Serial, func() {
	It("moves the old pod selector's pods to the current one while the Service always has a ready endpoint", func() {
		ns := newNamespace()
		By("setting the scene with no operator running: a MyApp and its children exactly as 0.2.0 made them")
		app := newMyApp(ns, "web", "nginx:1.27", 3)
		legacy := map[string]string{desired.LabelName: "web", desired.LabelInstance: "web"}
		labels := map[string]string{desired.LabelName: "web", desired.LabelInstance: "web", desired.LabelManagedBy: desired.ManagedBy}
		owner := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "MyApp", Name: "web", UID: app.UID,
			Controller: ptr(true), BlockOwnerDeletion: ptr(true)}
		old := &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: labels, OwnerReferences: []metav1.OwnerReference{owner}},
			Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(3)), Selector: &metav1.LabelSelector{MatchLabels: legacy},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27",
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}},
				}},
		}
		Expect(testutil.ApplyAs(ctx, k8s, old, controller.FieldOwner)).To(Succeed())
		svc := &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: labels, OwnerReferences: []metav1.OwnerReference{owner}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: legacy,
				Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 8080, TargetPort: intstr.FromString("http")}}},
		}
		Expect(testutil.ApplyAs(ctx, k8s, svc, controller.FieldOwner)).To(Succeed())
		Eventually(func(g Gomega) int { return readyEndpoints(g, ns, "web") }).WithTimeout(time.Minute).Should(Equal(3))

		By("watching the Service's endpoints through the upgrade")
		w, err := k8s.Watch(ctx, &discoveryv1.EndpointSliceList{}, client.InNamespace(ns),
			client.MatchingLabels{discoveryv1.LabelServiceName: "web"})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()

		By("starting the current operator")
		startOperator("upgrade")
		Eventually(func(g Gomega) {
			d := getDeployment(g, ns, "web")
			g.Expect(d.UID).NotTo(Equal(old.UID))
			g.Expect(d.Spec.Selector.MatchLabels).To(Equal(map[string]string{desired.LabelSelector: "web"}))
			s := &corev1.Service{}
			g.Expect(k8s.Get(ctx, key(ns, "web"), s)).To(Succeed())
			g.Expect(s.Spec.Selector).To(Equal(map[string]string{desired.LabelSelector: "web"}))
			g.Expect(s.Annotations).NotTo(HaveKey(desired.AnnotationSelectorMigration))
			a := getMyApp(g, ns, "web")
			g.Expect(conditionOf(a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue), "%+v", a.Status)
			g.Expect(conditionOf(a, examplev1.ConditionReconciling).Status).To(Equal(metav1.ConditionFalse), "%+v", a.Status)
			g.Expect(runningPods(g, ns, "web")).To(HaveLen(3))
		}).WithTimeout(2 * time.Minute).Should(Succeed())

		By("checking that, at every change of the Service's endpoints, some pod was ready behind it")
		// The watch is followed until it shows the new pods behind the Service, so every
		// version of the endpoints between the scene and the end of the migration is checked.
		newPods := map[string]bool{}
		for _, p := range runningPods(Default, ns, "web") {
			newPods[p.Name] = true
		}
		readyPods := map[string][]string{} // ready pods by EndpointSlice
		changes := 0
		Eventually(func(g Gomega) {
			for drained := false; !drained; {
				select {
				case ev := <-w.ResultChan():
					sl, ok := ev.Object.(*discoveryv1.EndpointSlice)
					if !ok {
						continue
					}
					if ev.Type == watch.Deleted {
						delete(readyPods, sl.Name)
					} else {
						readyPods[sl.Name] = readyIn(sl)
					}
					changes++
					total := 0
					for _, pods := range readyPods {
						total += len(pods)
					}
					Expect(total).To(BeNumerically(">", 0), "after change %d the Service had no ready endpoint: %v", changes, readyPods)
				default:
					drained = true
				}
			}
			var behind []string
			for _, pods := range readyPods {
				behind = append(behind, pods...)
			}
			g.Expect(behind).To(HaveLen(3))
			for _, name := range behind {
				g.Expect(newPods).To(HaveKey(name), "the watch has not yet shown the switch to the new pods")
			}
		}).Should(Succeed())
		GinkgoWriter.Printf("checked %d versions of the Service's endpoints\n", changes)
		Eventually(func(g Gomega) int { return readyEndpoints(g, ns, "web") }).Should(Equal(3))
		Eventually(func(g Gomega) {
			list := &appsv1.ReplicaSetList{}
			g.Expect(k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
			g.Expect(list.Items).To(BeEmpty(), "0.2.0's ReplicaSet is gone")
		}).Should(Succeed())
	})
})

var _ = Describe("A MyApp in a namespace enforcing the restricted Pod Security Standard", Ordered, Serial, func() {
	BeforeAll(func() {
		op := startOperator("restricted")
		Eventually(op.isLeader).Should(BeTrue())
	})

	It("gets its pods admitted with the defaults, and goes Stalled at once when it asks for root", func() {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: testNamespacePrefix,
			Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
		Expect(k8s.Create(ctx, ns)).To(Succeed())
		DeferCleanup(func() { _ = k8s.Delete(ctx, ns) })

		newMyApp(ns.Name, "web", "nginxinc/nginx-unprivileged:1.27", 2)
		expectReady(ns.Name, "web", 2)

		root := &examplev1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "root"},
			Spec: examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(int32(1)),
				SecurityContext: &corev1.SecurityContext{RunAsUser: ptr(int64(0))}},
		}
		Expect(k8s.Create(ctx, root)).To(Succeed())
		start := time.Now()
		Eventually(func(g Gomega) {
			stalled := conditionOf(getMyApp(g, ns.Name, "root"), examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonReplicaFailure))
			g.Expect(stalled.Message).To(ContainSubstring("Pod Security level refuses the pods"))
			g.Expect(stalled.Message).To(ContainSubstring("spec.securityContext"))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		AddReportEntry("seconds from creation to Stalled/ReplicaFailure", time.Since(start).Seconds())
	})
})

// readyEndpoints counts the ready endpoints of a Service.
func readyEndpoints(g Gomega, ns, service string) int {
	slices := &discoveryv1.EndpointSliceList{}
	g.Expect(k8s.List(ctx, slices, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: service})).To(Succeed())
	n := 0
	for i := range slices.Items {
		n += len(readyIn(&slices.Items[i]))
	}
	return n
}

// readyIn names the ready pods behind an EndpointSlice.
func readyIn(sl *discoveryv1.EndpointSlice) []string {
	var pods []string
	for _, ep := range sl.Endpoints {
		if ep.Conditions.Ready != nil && *ep.Conditions.Ready && ep.TargetRef != nil {
			pods = append(pods, ep.TargetRef.Name)
		}
	}
	return pods
}
