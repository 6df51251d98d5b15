package controller

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/testutil"
)

// MyApps the API accepts but whose pods cannot start: the kubelet reports why on the pod, and
// the operator must say it on the MyApp. envtest runs no kubelet: the story writes the pod's
// status as the kubelet would.
var _ = Describe("A MyApp whose pods cannot start", func() {
	It("is Stalled with the kubelet's reason for a missing Secret, records one event, and recovers; its neighbour reconciles on", func() {
		By("running a manager of its own, without resyncs, so that only the pod's events can bring the news")
		startQuietManager()
		ns := newNamespace()
		inQuietManager := func(a *examplev1.MyApp) { a.Labels = map[string]string{unwatchedLabel: "quiet"} }

		web := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			inQuietManager(a)
			a.Spec.Env = []examplev1.EnvVar{{Name: "PASSWORD",
				ValueFrom: &examplev1.EnvVarSource{SecretKeyRef: &examplev1.KeySelector{Name: "db", Key: "password"}}}}
		})
		createMyApp(ns, "other", inQuietManager)
		rollOut(ns, "other")
		Eventually(func(g Gomega) {
			g.Expect(condition(g, getMyApp(ns, "other")(g), examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
		Eventually(getDeployment(ns, "web")).Should(Not(BeNil()))

		By("the kubelet failing to start the pod's container: the Secret is missing")
		pod := createPod(ns, "web")
		setWaiting(pod, "CreateContainerConfigError", `secret "db" not found`)
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			stalled := condition(g, a, examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonCreateContainerConfigError))
			g.Expect(stalled.Message).To(ContainSubstring("container app from its configuration"))
			g.Expect(stalled.Message).To(ContainSubstring("Create the Secret or ConfigMap"))
			g.Expect(condition(g, a, examplev1.ConditionReady).Reason).To(Equal(examplev1.ReasonCreateContainerConfigError))
		}).WithTimeout(10 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) int { return countEvents(g, web, examplev1.ReasonCreateContainerConfigError) }).Should(Equal(1))

		By("reconciling again and again while the problem lasts: still one event")
		for i := range 3 {
			requestReconcile(web, fmt.Sprint(i))
		}
		Consistently(func(g Gomega) int { return countEvents(g, web, examplev1.ReasonCreateContainerConfigError) }, "2s").Should(Equal(1))

		By("the neighbour follows an update meanwhile")
		other := getMyApp(ns, "other")(Default)
		updateMyApp(other, func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
		Eventually(func(g Gomega) string { return container(g, getDeployment(ns, "other")(g)).Image }).Should(Equal("nginx:1.28"))
		rollOut(ns, "other")
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "other")(g)
			ready := condition(g, a, examplev1.ConditionReady)
			g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(ready.ObservedGeneration).To(Equal(a.Generation))
		}).Should(Succeed())

		By("the Secret created: the kubelet starts the container, and the MyApp is no longer Stalled")
		setRunning(pod)
		Eventually(func(g Gomega) {
			g.Expect(condition(g, getMyApp(ns, "web")(g), examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		}).WithTimeout(10 * time.Second).Should(Succeed())
		Expect(countEvents(Default, web, examplev1.ReasonCreateContainerConfigError)).To(Equal(1))
	})

	It("is Stalled when its image cannot be pulled, with one event while the kubelet alternates ErrImagePull and ImagePullBackOff", func() {
		ns := newNamespace()
		web := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.Image = "registry.example/web:nope" })
		Eventually(getDeployment(ns, "web")).Should(Not(BeNil()))
		pod := createPod(ns, "web")
		for i, reason := range []string{"ErrImagePull", "ImagePullBackOff", "ErrImagePull", "ImagePullBackOff"} {
			setWaiting(pod, reason, fmt.Sprintf("attempt %d: not found", i))
			Eventually(func(g Gomega) {
				stalled := condition(g, getMyApp(ns, "web")(g), examplev1.ConditionStalled)
				g.Expect(stalled.Reason).To(Equal(examplev1.ReasonImagePullBackOff))
				g.Expect(stalled.Message).To(ContainSubstring(`cannot pull image "registry.example/web:nope"`))
			}).Should(Succeed())
		}
		Consistently(func(g Gomega) int { return countEvents(g, web, examplev1.ReasonImagePullBackOff) }, "2s").Should(Equal(1))
	})

	It("stays Stalled through a scale the deployment controller has not observed yet: no flapping, one event", func() {
		ns := newNamespace()
		api := createMyApp(ns, "api", func(a *examplev1.MyApp) { a.Spec.Image = "registry.example/web:nope" })
		Eventually(getDeployment(ns, "api")).Should(Not(BeNil()))
		pod := createPod(ns, "api")
		setWaiting(pod, "ImagePullBackOff", "not found")
		Eventually(func(g Gomega) metav1.ConditionStatus {
			return condition(g, getMyApp(ns, "api")(g), examplev1.ConditionStalled).Status
		}).Should(Equal(metav1.ConditionTrue))

		updateMyApp(api, func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(3)) })
		Eventually(func(g Gomega) *int32 { return getDeployment(ns, "api")(g).Spec.Replicas }).Should(HaveValue(Equal(int32(3))))
		Consistently(func(g Gomega) metav1.ConditionStatus {
			return condition(g, getMyApp(ns, "api")(g), examplev1.ConditionStalled).Status
		}, "3s").Should(Equal(metav1.ConditionTrue))
		Expect(countEvents(Default, api, examplev1.ReasonImagePullBackOff)).To(Equal(1))
	})

	It("looks only at the pods of the current template: the pods of a mistyped image, still failing after the fix, stall nothing", func() {
		ns := newNamespace()
		web := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.Image = "registry.example/web:typo" })
		Eventually(getDeployment(ns, "web")).Should(Not(BeNil()))
		old := createPod(ns, "web")
		setWaiting(old, "ImagePullBackOff", "not found")
		Eventually(func(g Gomega) {
			stalled := condition(g, getMyApp(ns, "web")(g), examplev1.ConditionStalled)
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonImagePullBackOff))
			g.Expect(stalled.Message).To(ContainSubstring(`"registry.example/web:typo"`))
		}).Should(Succeed())

		By("the user fixing the image: the deployment controller makes a ReplicaSet for the new template, whose pod serves")
		updateMyApp(web, func(a *examplev1.MyApp) { a.Spec.Image = "registry.example/web:1" })
		Eventually(func(g Gomega) string { return container(g, getDeployment(ns, "web")(g)).Image }).Should(Equal("registry.example/web:1"))
		createPodOf(ns, "web", currentReplicaSet(ns, "web"))
		setWaiting(old, "ErrImagePull", "still not found")

		By("the old template's pod fails on: the rollout under way is not Stalled, and no message names the new image as unpullable")
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			stalled := condition(g, a, examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionFalse), stalled.Message)
			g.Expect(condition(g, a, examplev1.ConditionReconciling).Status).To(Equal(metav1.ConditionTrue))
			for _, c := range a.Status.Conditions {
				g.Expect(c.Message).NotTo(ContainSubstring(`cannot pull image "registry.example/web:1"`))
			}
		}).Should(Succeed())
		Consistently(func(g Gomega) metav1.ConditionStatus {
			return condition(g, getMyApp(ns, "web")(g), examplev1.ConditionStalled).Status
		}, "2s").Should(Equal(metav1.ConditionFalse))
	})
})

// startQuietManager runs a second reconciler, for the spec (startManager), for the MyApps
// labelled unwatchedLabel=quiet (which the suite's manager never sees), with no periodic
// resync: whatever it learns, it learns from a watch.
func startQuietManager() (stop func()) {
	GinkgoHelper()
	sel, err := labels.Parse(unwatchedLabel + "=quiet")
	Expect(err).NotTo(HaveOccurred())
	return startManager(managerOptions{myApps: sel, syncPeriod: quietSyncPeriod})
}

// quietSyncPeriod is the resync period of startQuietManager's manager: longer than any story.
const quietSyncPeriod = 10 * time.Hour

// createPod makes a pod of the MyApp's current template as its ReplicaSet would (envtest
// runs no controllers), after playing the deployment controller's sync of that template.
func createPod(ns, app string) *corev1.Pod {
	return createPodOf(ns, app, currentReplicaSet(ns, app))
}

// createPodOf makes a pod as the ReplicaSet with the given pod-template-hash would.
func createPodOf(ns, app, hash string) *corev1.Pod {
	return createPodOfDeployment(ns, app, hash)
}

// createPodOfDeployment is createPodOf for a pod of the named Deployment of the MyApp: its
// labels are the Deployment's template's (a canary's carries its track) and the hash.
func createPodOfDeployment(ns, deployment, hash string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: deployment + "-" + hash + "-"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: desired.ContainerName, Image: "nginx:1.27"}}},
	}
	Eventually(func(g Gomega) {
		d := getDeployment(ns, deployment)(g)
		pod.Spec.Containers[0].Image = container(g, d).Image
		pod.Labels = map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash}
		maps.Copy(pod.Labels, d.Spec.Template.Labels)
	}).Should(Succeed())
	Expect(k8s.Create(suiteCtx, pod)).To(Succeed())
	return pod
}

// currentReplicaSet plays the deployment controller's sync of the Deployment's current pod
// template: a ReplicaSet for it (named after a hash of the template), the next revision on
// it and on the Deployment, and the Deployment's latest generation observed. It returns the
// ReplicaSet's pod-template-hash.
func currentReplicaSet(ns, app string) string {
	return replicaSetOfTemplate(ns, app, nil)
}

// startRollout plays the deployment controller's first sync of a new pod template of the
// MyApp web: a ReplicaSet for it, as currentReplicaSet, and a status in the same sync that
// counts no pod of it yet while the earlier template's pods still run and serve.
func startRollout(ns string) string {
	return startRolloutOf(ns, "web")
}

// startRolloutOf is startRollout for the named Deployment.
func startRolloutOf(ns, deployment string) string {
	return replicaSetOfTemplate(ns, deployment, func(s *appsv1.DeploymentStatus) {
		s.Replicas, s.UpdatedReplicas = max(s.Replicas, s.AvailableReplicas), 0
		s.Conditions = slices.DeleteFunc(s.Conditions, func(c appsv1.DeploymentCondition) bool { return c.Type == appsv1.DeploymentProgressing })
		s.Conditions = append(s.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue,
			Reason: "NewReplicaSetCreated", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()})
	})
}

// replicaSetOfTemplate is currentReplicaSet, with the Deployment's status changed by mutate
// (when set) in the write that observes its latest generation.
func replicaSetOfTemplate(ns, app string, mutate func(*appsv1.DeploymentStatus)) string {
	var hash string
	Eventually(func(g Gomega) {
		d := getDeployment(ns, app)(g)
		raw, err := json.Marshal(d.Spec.Template)
		g.Expect(err).NotTo(HaveOccurred())
		hash = fmt.Sprintf("%08x", fnv32(raw))
		revision := 1
		if r, err := strconv.Atoi(d.Annotations["deployment.kubernetes.io/revision"]); err == nil {
			revision = r + 1
		}
		// As the deployment controller does: the template's labels and the hash on the
		// ReplicaSet and its template, the template's annotations on its template, the
		// selector's labels and the hash in its selector.
		labels := map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash}
		maps.Copy(labels, d.Spec.Template.Labels)
		selector := map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash}
		maps.Copy(selector, d.Spec.Selector.MatchLabels)
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app + "-" + hash, Labels: labels,
				Annotations:     map[string]string{"deployment.kubernetes.io/revision": strconv.Itoa(revision)},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: selector},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels,
					Annotations: d.Spec.Template.Annotations}, Spec: d.Spec.Template.Spec}},
		}
		// A template that had a ReplicaSet before gets it back, with the next revision, as the
		// deployment controller does.
		if existing := (&appsv1.ReplicaSet{}); k8s.Get(suiteCtx, key(ns, rs.Name), existing) == nil {
			existing.Annotations = rs.Annotations
			g.Expect(k8s.Update(suiteCtx, existing)).To(Succeed())
		} else {
			g.Expect(k8s.Create(suiteCtx, rs)).To(Succeed())
		}
		if d.Annotations == nil {
			d.Annotations = map[string]string{}
		}
		d.Annotations["deployment.kubernetes.io/revision"] = strconv.Itoa(revision)
		g.Expect(k8s.Update(suiteCtx, d)).To(Succeed())
		d.Status.ObservedGeneration = d.Generation
		if mutate != nil {
			mutate(&d.Status)
		}
		g.Expect(k8s.Status().Update(suiteCtx, d)).To(Succeed())
	}).Should(Succeed())
	return hash
}

func fnv32(b []byte) uint32 {
	h := fnv.New32a()
	_, _ = h.Write(b)
	return h.Sum32()
}

// setWaiting writes the pod's status as the kubelet does when its container cannot start.
func setWaiting(pod *corev1.Pod, reason, message string) {
	setContainerState(pod, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}})
}

// setRunning writes the pod's status as the kubelet does once its container runs.
func setRunning(pod *corev1.Pod) {
	setContainerState(pod, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}})
}

func setContainerState(pod *corev1.Pod, state corev1.ContainerState) {
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		pod.Status.Phase = corev1.PodPending
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: desired.ContainerName, Image: pod.Spec.Containers[0].Image, State: state}}
		g.Expect(k8s.Status().Update(suiteCtx, pod)).To(Succeed())
	}).Should(Succeed())
}

// requestReconcile asks for a reconcile through the annotation, and waits until the status
// says it was handled: a reconcile ran to its status write.
func requestReconcile(app *examplev1.MyApp, value string) {
	updateMyApp(app, func(a *examplev1.MyApp) {
		if a.Annotations == nil {
			a.Annotations = map[string]string{}
		}
		a.Annotations[examplev1.ReconcileRequestAnnotation] = value
	})
	Eventually(func(g Gomega) string {
		return getMyApp(app.Namespace, app.Name)(g).Status.LastHandledReconcileAt
	}).Should(Equal(value))
}

// countEvents counts the events of that reason recorded on the MyApp (testutil.CountEvents),
// failing when it cannot count.
func countEvents(g Gomega, app *examplev1.MyApp, reason string) int {
	n, err := testutil.CountEvents(suiteCtx, k8s, app, reason)
	g.Expect(err).NotTo(HaveOccurred())
	return n
}
