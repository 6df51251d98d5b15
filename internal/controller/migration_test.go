package controller

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

var _ = Describe("The selector migration", func() {
	It("moves a Deployment on the old pod selector to the current one, the old pods serving until the new ones are available", func() {
		ns := newNamespace()
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Labels = map[string]string{unwatchedLabel: "true"}
			a.Spec.PodDisruptionBudget = &examplev1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
		})

		By("setting the scene: the children exactly as 0.2.0 made them, and the old ReplicaSet")
		old, rsLabels := set020Scene(ns, app)

		By("upgrading: the operator now sees the MyApp")
		relabel(ns, "web", "")

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
			g.Expect(condition(g, a, examplev1.ConditionReconciling).Reason).To(Equal(examplev1.ReasonSelectorMigration))
			g.Expect(a.Status.AvailableReplicas).To(Equal(int32(2)), "the old pods keep serving")
			g.Expect(getPDB(ns, "web")(g).Spec.Selector.MatchLabels).To(Equal(bridge), "the budget protects old and new pods")
		}).Should(Succeed())
		for k, v := range bridge {
			Expect(rsLabels).To(HaveKeyWithValue(k, v), "the old pods match the Service")
		}

		By("the old ReplicaSet owned by the MyApp too, so that deleting the MyApp mid-way still removes it")
		Eventually(func(g Gomega) {
			r := get[appsv1.ReplicaSet](ns, "web-5d4b8")(g)
			g.Expect(r.OwnerReferences).To(ContainElement(And(HaveField("UID", app.UID), HaveField("Controller", SatisfyAny(BeNil(), HaveValue(BeFalse()))))))
			g.Expect(metav1.GetControllerOf(r).UID).To(Equal(old.UID), "the old Deployment still controls it")
		}).Should(Succeed())

		By("playing the garbage collector, which orphans the ReplicaSet and lets the Deployment go")
		orphanAsGarbageCollector(ns, "web-5d4b8", old)

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
			g.Expect(getPDB(ns, "web")(g).Spec.Selector.MatchLabels).To(Equal(bridge))
			g.Expect(getDeployment(ns, "web")(g).Annotations).To(HaveKey(desired.AnnotationSelectorMigration), "the phase is kept on the Deployment too")
		}, "2s").Should(Succeed())
		bridgeBudget := getPDB(ns, "web")(Default).Generation

		By("someone deleting the Service mid-way: it comes back still bridging old and new pods")
		Expect(k8s.Delete(suiteCtx, getService(ns, "web")(Default))).To(Succeed())
		Eventually(func(g Gomega) {
			s := getService(ns, "web")(g)
			g.Expect(s.Spec.Selector).To(Equal(bridge))
			g.Expect(s.Annotations).To(HaveKey(desired.AnnotationSelectorMigration))
		}).Should(Succeed())
		Expect(get[appsv1.ReplicaSet](ns, "web-5d4b8")(Default).DeletionTimestamp).To(BeNil(), "the old pods still serve")

		By("the new pods available: the old ReplicaSet goes, and the Service selects on the new key only")
		rollOut(ns, "web")
		Eventually(func(g Gomega) {
			err := k8s.Get(suiteCtx, key(ns, "web-5d4b8"), &appsv1.ReplicaSet{})
			g.Expect(apierrors.IsNotFound(err) || get[appsv1.ReplicaSet](ns, "web-5d4b8")(g).DeletionTimestamp != nil).To(BeTrue())
			s := getService(ns, "web")(g)
			g.Expect(s.Spec.Selector).To(Equal(map[string]string{desired.LabelSelector: "web"}))
			g.Expect(s.Annotations).NotTo(HaveKey(desired.AnnotationSelectorMigration))
			pdb := getPDB(ns, "web")(g)
			g.Expect(pdb.Spec.Selector.MatchLabels).To(Equal(map[string]string{desired.LabelSelector: "web"}))
			g.Expect(pdb.Generation).To(Equal(bridgeBudget+1), "the budget moved to the new selector once, and never back to the bridge")
			g.Expect(getDeployment(ns, "web")(g).Annotations).NotTo(HaveKey(desired.AnnotationSelectorMigration))
		}).Should(Succeed())
		By("the deployment controller observing the Deployment's last spec: the MyApp is Ready, nothing under way")
		rollOut(ns, "web")
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, a, examplev1.ConditionReconciling).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())
		Expect(getPDB(ns, "web")(Default).Generation).To(Equal(bridgeBudget+1), "the reconciles since left the budget as it was")
		Eventually(func(g Gomega) []string { return eventReasons(g, app) }).Should(ContainElements(examplev1.ReasonSelectorMigration, "Migrated"))
	})
})

var _ = Describe("A selector migration that cannot finish", func() {
	It("is Stalled once its deadline has passed, saying what blocks it, and finishes when the new pods run", func() {
		By("running a manager of its own whose clock is past the deadline of any migration started now")
		late, err := labels.Parse(unwatchedLabel + "=late")
		Expect(err).NotTo(HaveOccurred())
		startManager(managerOptions{myApps: late, now: func() time.Time { return time.Now().Add(migrationDeadline + time.Minute) }})

		ns := newNamespace()
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Labels = map[string]string{unwatchedLabel: "true"} })
		old, _ := set020Scene(ns, app)
		relabel(ns, "web", "late")
		Eventually(func(g Gomega) *metav1.Time { return getDeployment(ns, "web")(g).DeletionTimestamp }).Should(Not(BeNil()))
		orphanAsGarbageCollector(ns, "web-5d4b8", old)

		By("the new Deployment's pods never becoming available")
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			stalled := condition(g, a, examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonMigrationDeadlineExceeded))
			g.Expect(stalled.Message).To(ContainSubstring("does not run all its pods"))
			g.Expect(stalled.Message).To(ContainSubstring("0.2.0's pods keep serving"))
		}).Should(Succeed())
		Expect(get[appsv1.ReplicaSet](ns, "web-5d4b8")(Default).DeletionTimestamp).To(BeNil(), "the old pods still serve")
		Eventually(func(g Gomega) []string { return eventReasons(g, app) }).Should(ContainElement(examplev1.ReasonMigrationDeadlineExceeded))

		By("the new pods available at last: the migration finishes")
		rollOut(ns, "web")
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			g.Expect(condition(g, a, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(getService(ns, "web")(g).Annotations).NotTo(HaveKey(desired.AnnotationSelectorMigration))
		}).Should(Succeed())
	})
})

// set020Scene makes the MyApp's children exactly as 0.2.0 made them, with the ReplicaSet
// web-5d4b8 of the old Deployment (envtest runs no deployment controller); it returns the old
// Deployment and the ReplicaSet's labels.
func set020Scene(ns string, app *examplev1.MyApp) (*appsv1.Deployment, map[string]string) {
	legacy := map[string]string{desired.LabelName: "web", desired.LabelInstance: "web"}
	podLabels := map[string]string{desired.LabelName: "web", desired.LabelInstance: "web", desired.LabelManagedBy: desired.ManagedBy}
	owner := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "MyApp", Name: "web", UID: app.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	pod := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}},
	}
	old := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: podLabels, OwnerReferences: []metav1.OwnerReference{owner}},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: legacy}, Template: pod},
	}
	applyAsOperator(old)
	old.Status = appsv1.DeploymentStatus{ObservedGeneration: old.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}}}
	Expect(k8s.Status().Update(suiteCtx, old)).To(Succeed())
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: podLabels, OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: legacy,
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 8080, TargetPort: intstr.FromString("http")}}},
	}
	applyAsOperator(svc)
	rsLabels := map[string]string{"pod-template-hash": "5d4b8"}
	for k, v := range podLabels {
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

	return old, rsLabels
}

// relabel sets the MyApp's unwatched label to value ("" removes it), handing the MyApp to
// the manager that watches it.
func relabel(ns, name, value string) {
	Eventually(func() error {
		a := getMyApp(ns, name)(Default)
		if value == "" {
			delete(a.Labels, unwatchedLabel)
		} else {
			a.Labels[unwatchedLabel] = value
		}
		return k8s.Update(suiteCtx, a)
	}).Should(Succeed())
}

// orphanAsGarbageCollector does what the garbage collector does for an orphan deletion of the
// old Deployment: removes its owner reference from the ReplicaSet, then its finalizer.
func orphanAsGarbageCollector(ns, replicaSet string, old *appsv1.Deployment) {
	Eventually(func(g Gomega) {
		r := get[appsv1.ReplicaSet](ns, replicaSet)(g)
		var kept []metav1.OwnerReference
		for _, ref := range r.OwnerReferences {
			if ref.UID != old.UID {
				kept = append(kept, ref)
			}
		}
		r.OwnerReferences = kept
		g.Expect(k8s.Update(suiteCtx, r)).To(Succeed())
	}).Should(Succeed())
	Eventually(func(g Gomega) {
		d := getDeployment(ns, old.Name)(g)
		d.Finalizers = nil
		g.Expect(k8s.Update(suiteCtx, d)).To(Succeed())
	}).Should(Succeed())

}
