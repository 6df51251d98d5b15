package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// withInitContainers gives the MyApp web an init container (migrate, of the image given) and
// a sidecar (proxy) with a readiness probe.
func withInitContainers(migrateImage string) func(*examplev1.MyApp) {
	return func(a *examplev1.MyApp) {
		a.Spec.InitContainers = []examplev1.InitContainer{
			{Name: "migrate", Image: migrateImage, Command: []string{"/migrate", "--up"}},
			{Name: "proxy", Image: "envoyproxy/envoy:v1.31.0", RestartPolicy: ptr.To(examplev1.ContainerRestartPolicyAlways),
				ReadinessProbe: &examplev1.SidecarProbe{TCPSocket: &examplev1.SidecarPort{Port: 9901}}},
		}
	}
}

// createPodWithInits makes a pod of the MyApp's current template with its init containers,
// as its ReplicaSet would: the API server checks a pod's init container statuses against
// its spec.
func createPodWithInits(ns, app, hash string) *corev1.Pod {
	pod := createPodOf(ns, app, hash)
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		inits := getDeployment(ns, app)(g).Spec.Template.Spec.InitContainers
		g.Expect(inits).NotTo(BeEmpty())
		// Init containers of a pod cannot change; the pod is made again with them.
		g.Expect(k8s.Delete(suiteCtx, pod)).To(Succeed())
		fresh := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod.Name, Labels: pod.Labels}, Spec: pod.Spec}
		fresh.Spec.NodeName = ""
		fresh.Spec.InitContainers = nil
		for _, c := range inits {
			fresh.Spec.InitContainers = append(fresh.Spec.InitContainers, corev1.Container{Name: c.Name, Image: c.Image, RestartPolicy: c.RestartPolicy})
		}
		g.Expect(k8s.Create(suiteCtx, fresh)).To(Succeed())
		pod = fresh
	}).Should(Succeed())
	return pod
}

// setInitWaiting writes the pod's status as the kubelet does when its init container name
// cannot start (the others not started yet, the application's container waiting for them).
func setInitWaiting(pod *corev1.Pod, name, reason, message string) {
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		pod.Status.Phase = corev1.PodPending
		pod.Status.InitContainerStatuses = nil
		for _, c := range pod.Spec.InitContainers {
			state := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
			if c.Name == name {
				state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
			}
			pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: state})
		}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
		g.Expect(k8s.Status().Update(suiteCtx, pod)).To(Succeed())
	}).Should(Succeed())
}

var _ = Describe("A MyApp with init containers and sidecars", func() {
	It("runs them in its pods in order, with the restricted defaults; one that cannot pull its image stalls the MyApp, named with its field, until it is fixed", func() {
		ns := newNamespace()
		web := createMyApp(ns, "web", withInitContainers("registry.example/migrate:nope"))

		By("the pod template: the init container, then the sidecar, beside the application")
		Eventually(func(g Gomega) {
			spec := getDeployment(ns, "web")(g).Spec.Template.Spec
			g.Expect(spec.InitContainers).To(HaveLen(2))
			migrate, proxy := spec.InitContainers[0], spec.InitContainers[1]
			g.Expect([]string{migrate.Name, proxy.Name}).To(Equal([]string{"migrate", "proxy"}))
			g.Expect(migrate.RestartPolicy).To(BeNil())
			g.Expect(migrate.Command).To(Equal([]string{"/migrate", "--up"}))
			g.Expect(migrate.ReadinessProbe).To(BeNil())
			g.Expect(proxy.RestartPolicy).To(HaveValue(Equal(corev1.ContainerRestartPolicyAlways)))
			g.Expect(proxy.ReadinessProbe).NotTo(BeNil())
			g.Expect(proxy.ReadinessProbe.TCPSocket.Port.IntValue()).To(Equal(9901))
			for _, c := range spec.InitContainers {
				g.Expect(c.SecurityContext).NotTo(BeNil(), c.Name)
				g.Expect(c.SecurityContext.AllowPrivilegeEscalation).To(HaveValue(BeFalse()), c.Name)
				g.Expect(c.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")), c.Name)
			}
			g.Expect(spec.Containers).To(HaveLen(1))
		}).Should(Succeed())

		By("the init container's image cannot be pulled")
		pod := createPodWithInits(ns, "web", currentReplicaSet(ns, "web"))
		setInitWaiting(pod, "migrate", "ImagePullBackOff", `Back-off pulling image "registry.example/migrate:nope"`)
		Eventually(func(g Gomega) {
			stalled := condition(g, getMyApp(ns, "web")(g), examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonImagePullBackOff))
			g.Expect(stalled.Message).To(ContainSubstring(`cannot pull image "registry.example/migrate:nope" of init container migrate`))
			g.Expect(stalled.Message).To(ContainSubstring("Check spec.initContainers[0].image"))
		}).Should(Succeed())
		Eventually(func(g Gomega) int { return countEvents(g, web, examplev1.ReasonImagePullBackOff) }).Should(Equal(1))

		By("the user fixes the image: the new template's pods start")
		updateMyApp(web, func(a *examplev1.MyApp) { a.Spec.InitContainers[0].Image = "registry.example/migrate:1.0" })
		Eventually(func(g Gomega) string {
			return getDeployment(ns, "web")(g).Spec.Template.Spec.InitContainers[0].Image
		}).Should(Equal("registry.example/migrate:1.0"))
		rollOut(ns, "web")
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			g.Expect(condition(g, a, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
	})
})
