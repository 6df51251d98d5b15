package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/status"
)

var _ = Describe("Upgrading from 0.2.0", func() {
	It("moves a 0.2.0 Deployment to the new pod selector, the old pods serving until the new ones are available", func() {
		ns := newNamespace()
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Labels = map[string]string{unwatchedLabel: "true"} })

		By("setting the scene: the children exactly as 0.2.0 made them, and the old ReplicaSet")
		legacy := map[string]string{desired.LabelName: "web", desired.LabelInstance: "web"}
		labels := map[string]string{desired.LabelName: "web", desired.LabelInstance: "web", desired.LabelManagedBy: desired.ManagedBy}
		owner := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "MyApp", Name: "web", UID: app.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
		pod := corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}},
		}
		old := &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: labels, OwnerReferences: []metav1.OwnerReference{owner}},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: legacy}, Template: pod},
		}
		Expect(k8s.Patch(suiteCtx, old, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership)).To(Succeed())
		old.Status = appsv1.DeploymentStatus{ObservedGeneration: old.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}}}
		Expect(k8s.Status().Update(suiteCtx, old)).To(Succeed())
		svc := &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: labels, OwnerReferences: []metav1.OwnerReference{owner}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: legacy,
				Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 8080, TargetPort: intstr.FromString("http")}}},
		}
		Expect(k8s.Patch(suiteCtx, svc, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership)).To(Succeed())
		rsLabels := map[string]string{"pod-template-hash": "5d4b8"}
		for k, v := range labels {
			rsLabels[k] = v
		}
		rsPod := *pod.DeepCopy()
		rsPod.Labels = rsLabels
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-5d4b8", Labels: rsLabels, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: old.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: rsLabels}, Template: rsPod},
		}
		Expect(k8s.Create(suiteCtx, rs)).To(Succeed())

		By("upgrading: the operator now sees the MyApp")
		Eventually(func() error {
			a := getMyApp(ns, "web")(Default)
			delete(a.Labels, unwatchedLabel)
			return k8s.Update(suiteCtx, a)
		}).Should(Succeed())

		By("the Service selects old and new pods alike, then the old Deployment is deleted, orphaning its pods")
		bridge := map[string]string{desired.LabelName: "web", desired.LabelManagedBy: desired.ManagedBy}
		Eventually(func(g Gomega) {
			s := getService(ns, "web")(g)
			g.Expect(s.Spec.Selector).To(Equal(bridge))
			g.Expect(s.Annotations).To(HaveKey(desired.AnnotationSelectorMigration))
			d := getDeployment(ns, "web")(g)
			g.Expect(d.UID).To(Equal(old.UID))
			g.Expect(d.DeletionTimestamp).NotTo(BeNil())
			g.Expect(d.Finalizers).To(ContainElement(metav1.FinalizerOrphanDependents))
			a := getMyApp(ns, "web")(g)
			g.Expect(condition(g, a, examplev1.ConditionReconciling).Reason).To(Equal(status.ReasonSelectorMigration))
			g.Expect(a.Status.AvailableReplicas).To(Equal(int32(2)), "the old pods keep serving")
		}).Should(Succeed())
		for k, v := range bridge {
			Expect(rsLabels).To(HaveKeyWithValue(k, v), "the old pods match the Service")
		}

		By("playing the garbage collector, which orphans the ReplicaSet and lets the Deployment go")
		Eventually(func(g Gomega) {
			r := get[appsv1.ReplicaSet](ns, "web-5d4b8")(g)
			r.OwnerReferences = nil
			g.Expect(k8s.Update(suiteCtx, r)).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			d.Finalizers = nil
			g.Expect(k8s.Update(suiteCtx, d)).To(Succeed())
		}).Should(Succeed())

		By("a new Deployment with the new selector; the old pods stay until its pods are available")
		var fresh *appsv1.Deployment
		Eventually(func(g Gomega) {
			fresh = getDeployment(ns, "web")(g)
			g.Expect(fresh.UID).NotTo(Equal(old.UID))
			g.Expect(fresh.Spec.Selector.MatchLabels).To(Equal(map[string]string{desired.LabelSelector: "web"}))
			for k, v := range bridge {
				g.Expect(fresh.Spec.Template.Labels).To(HaveKeyWithValue(k, v), "the new pods match the Service too")
			}
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(get[appsv1.ReplicaSet](ns, "web-5d4b8")(g).DeletionTimestamp).To(BeNil())
			g.Expect(getService(ns, "web")(g).Spec.Selector).To(Equal(bridge))
		}, "2s").Should(Succeed())

		By("the new pods available: the old ReplicaSet goes, and the Service selects on the new key only")
		rollOut(ns, "web")
		Eventually(func(g Gomega) {
			err := k8s.Get(suiteCtx, key(ns, "web-5d4b8"), &appsv1.ReplicaSet{})
			g.Expect(apierrors.IsNotFound(err) || get[appsv1.ReplicaSet](ns, "web-5d4b8")(g).DeletionTimestamp != nil).To(BeTrue())
			s := getService(ns, "web")(g)
			g.Expect(s.Spec.Selector).To(Equal(map[string]string{desired.LabelSelector: "web"}))
			g.Expect(s.Annotations).NotTo(HaveKey(desired.AnnotationSelectorMigration))
			a := getMyApp(ns, "web")(g)
			g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, a, examplev1.ConditionReconciling).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())
		Eventually(func(g Gomega) []string { return eventReasons(g, app) }).Should(ContainElements(status.ReasonSelectorMigration, "Migrated"))
	})
})
