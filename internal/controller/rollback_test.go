package controller

import (
	"fmt"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// promoteReplicaSet plays the deployment controller's sync after the Deployment of the MyApp
// web went back to the template of an existing ReplicaSet: that ReplicaSet takes the next
// revision, and the Deployment's latest generation is observed.
func promoteReplicaSet(ns, hash string) {
	const app = "web"
	Eventually(func(g Gomega) {
		d := getDeployment(ns, app)(g)
		revision, err := strconv.Atoi(d.Annotations[revisionAnnotation])
		g.Expect(err).NotTo(HaveOccurred())
		rs := &appsv1.ReplicaSet{}
		g.Expect(k8s.Get(suiteCtx, key(ns, app+"-"+hash), rs)).To(Succeed())
		rs.Annotations[revisionAnnotation] = strconv.Itoa(revision + 1)
		g.Expect(k8s.Update(suiteCtx, rs)).To(Succeed())
		d.Annotations[revisionAnnotation] = strconv.Itoa(revision + 1)
		g.Expect(k8s.Update(suiteCtx, d)).To(Succeed())
		d.Status.ObservedGeneration = d.Generation
		g.Expect(k8s.Status().Update(suiteCtx, d)).To(Succeed())
	}).Should(Succeed())
}

// passProgressDeadline plays the deployment controller giving up on the current rollout, of
// the template hash: its message names that template's ReplicaSet, as the controller's does.
func passProgressDeadline(ns, app, hash string) {
	Eventually(func(g Gomega) {
		d := getDeployment(ns, app)(g)
		d.Status.ObservedGeneration = d.Generation
		d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
			Reason: "ProgressDeadlineExceeded", Message: fmt.Sprintf("ReplicaSet %q has timed out progressing.", app+"-"+hash),
			LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		g.Expect(k8s.Status().Update(suiteCtx, d)).To(Succeed())
	}).Should(Succeed())
}

var _ = Describe("A failed rollout", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	image := func(g Gomega) string { return container(g, getDeployment(ns, "web")(g)).Image }
	// readyOn makes the MyApp's first template Ready, as the deployment controller and the
	// kubelet would, and returns its pod-template-hash once the status records it.
	readyOn := func() string {
		hash := currentReplicaSet(ns, "web")
		rollOut(ns, "web")
		Eventually(func(g Gomega) string { return getMyApp(ns, "web")(g).Status.ReadyTemplate }).Should(Equal(hash))
		return hash
	}
	setImage := func(app *examplev1.MyApp, img string) {
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Image = img })
		Eventually(image).Should(Equal(img))
	}
	rolledBackFor := func(reason string) func(Gomega) *examplev1.RollbackStatus {
		return func(g Gomega) *examplev1.RollbackStatus {
			a := getMyApp(ns, "web")(g)
			g.Expect(a.Status.RolledBack).NotTo(BeNil())
			g.Expect(a.Status.RolledBack.Reason).To(Equal(reason))
			for _, typ := range []string{examplev1.ConditionReady, examplev1.ConditionStalled, examplev1.ConditionDegraded} {
				g.Expect(condition(g, a, typ).Reason).To(Equal(examplev1.ReasonRolledBack), typ)
			}
			g.Expect(condition(g, a, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionFalse))
			return a.Status.RolledBack
		}
	}

	// eventuallyRolledBack waits for the status write that follows a rollback's apply: a
	// reader can see the Deployment back on the old template a moment before it.
	eventuallyRolledBack := func(reason string) *examplev1.RollbackStatus {
		GinkgoHelper()
		var rb *examplev1.RollbackStatus
		Eventually(func(g Gomega) { rb = rolledBackFor(reason)(g) }).Should(Succeed())
		return rb
	}

	// rollsForward plays the rollout of the Deployment's current template to its end, and waits
	// until the MyApp is Ready on it with the rollback behind it.
	rollsForward := func() {
		GinkgoHelper()
		next := currentReplicaSet(ns, "web")
		rollOut(ns, "web")
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			g.Expect(a.Status.RolledBack).To(BeNil())
			g.Expect(a.Status.ReadyTemplate).To(Equal(next))
			g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
	}

	It("is rolled back to the last Ready template when the new image cannot be pulled, once, until the spec changes", func() {
		app := createMyApp(ns, "web", nil)
		good := readyOn()

		By("a new image the kubelet cannot pull")
		setImage(app, "nginx:no-such-tag")
		bad := startRollout(ns)
		setWaiting(createPodOf(ns, "web", bad), "ErrImagePull", "manifest unknown")

		By("the Deployment back on the last Ready template, the MyApp Stalled with RolledBack, naming both images")
		Eventually(image).Should(Equal("nginx:1.27"))
		rb := eventuallyRolledBack(examplev1.ReasonImagePullBackOff)
		Expect(rb.FailedTemplate).To(Equal(bad))
		Expect(rb.Template).To(Equal(good))
		Expect(rb.Generation).To(Equal(int64(2)))
		Expect(rb.Message).To(And(ContainSubstring(`"nginx:no-such-tag"`), ContainSubstring(`"nginx:1.27"`), ContainSubstring("cannot pull")))
		promoteReplicaSet(ns, good)
		rollOut(ns, "web")
		Eventually(func(g Gomega) []string { return eventReasons(g, app) }).Should(ContainElement(examplev1.ReasonRolledBack))

		By("no flapping: the failed template is not tried again through resyncs")
		Consistently(func(g Gomega) {
			g.Expect(image(g)).To(Equal("nginx:1.27"))
			rolledBackFor(examplev1.ReasonImagePullBackOff)(g)
		}, 3*resyncPeriod, 200*time.Millisecond).Should(Succeed())
		Expect(countEvents(Default, app, examplev1.ReasonRolledBack)).To(Equal(1), "one Warning event")
		Expect(seriesOf(Default, ns)).To(HaveKeyWithValue("myapp_rollbacks_total", 1.0), "one rollback counted")
		Expect(getMyApp(ns, "web")(Default).Spec.Image).To(Equal("nginx:no-such-tag"), "nothing is written to the spec")

		By("a change of something else than the template (replicas) is applied, and the failed template not tried again")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(3)) })
		Eventually(func(g Gomega) *int32 { return getDeployment(ns, "web")(g).Spec.Replicas }).Should(HaveValue(Equal(int32(3))))
		Consistently(image, 2*resyncPeriod, 200*time.Millisecond).Should(Equal("nginx:1.27"))
		Expect(countEvents(Default, app, examplev1.ReasonRolledBack)).To(Equal(1))

		By("a reconcile request tries the failed template again")
		requestReconcile(app, "try-again")
		Eventually(image).Should(Equal("nginx:no-such-tag"))

		By("a good change rolls forward, and the rollback is history")
		setImage(app, "nginx:1.28")
		rollsForward()
	})

	It("is rolled back when new pods crash-loop or their config is missing, and when the progress deadline passes; not while it is only slow", func() {
		app := createMyApp(ns, "web", nil)
		good := readyOn()

		By("a slow rollout: new pods that are not ready yet, no deadline passed")
		setImage(app, "nginx:slow")
		slow := startRollout(ns)
		createPodOf(ns, "web", slow)
		Consistently(image, 3*resyncPeriod, 200*time.Millisecond).Should(Equal("nginx:slow"))

		By("its progress deadline passing")
		passProgressDeadline(ns, "web", slow)
		Eventually(image).Should(Equal("nginx:1.27"))
		eventuallyRolledBack(examplev1.ReasonProgressDeadlineExceeded)
		promoteReplicaSet(ns, good)

		By("a crash loop")
		setImage(app, "nginx:crashes")
		crashing := startRollout(ns)
		setWaiting(createPodOf(ns, "web", crashing), "CrashLoopBackOff", "back-off 10s restarting failed container")
		Eventually(image).Should(Equal("nginx:1.27"))
		Expect(eventuallyRolledBack("CrashLoopBackOff").Message).To(ContainSubstring("kubectl logs"))
		promoteReplicaSet(ns, good)

		By("a Secret the new template needs and that is missing")
		updateMyApp(app, func(a *examplev1.MyApp) {
			a.Spec.Image = "nginx:1.29"
			a.Spec.Env = []examplev1.EnvVar{{Name: "PASSWORD",
				ValueFrom: &examplev1.EnvVarSource{SecretKeyRef: &examplev1.KeySelector{Name: "db", Key: "password"}}}}
		})
		Eventually(image).Should(Equal("nginx:1.29"))
		setWaiting(createPodOf(ns, "web", startRollout(ns)), "CreateContainerConfigError", `secret "db" not found`)
		Eventually(image).Should(Equal("nginx:1.27"))
		Eventually(func(g Gomega) []corev1.EnvVar { return container(g, getDeployment(ns, "web")(g)).Env }).Should(BeEmpty())
		eventuallyRolledBack(examplev1.ReasonCreateContainerConfigError)
	})

	It("is rolled back when a sidecar of the new template crash-loops, the message naming the sidecar and how to read its logs", func() {
		app := createMyApp(ns, "web", withInitContainers("registry.example/migrate:1.0"))
		good := readyOn()
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.InitContainers[1].Image = "envoyproxy/envoy:v1.99.0" })
		sidecarImage := func(g Gomega) string { return getDeployment(ns, "web")(g).Spec.Template.Spec.InitContainers[1].Image }
		Eventually(sidecarImage).Should(Equal("envoyproxy/envoy:v1.99.0"))
		pod := createPodWithInits(ns, "web", startRollout(ns))
		setInitWaiting(pod, "proxy", "CrashLoopBackOff", "back-off 10s restarting failed container=proxy")
		Eventually(sidecarImage).Should(Equal("envoyproxy/envoy:v1.31.0"))
		rb := eventuallyRolledBack("CrashLoopBackOff")
		Expect(rb.Message).To(ContainSubstring(`sidecar proxy of image "envoyproxy/envoy:v1.99.0"`))
		Expect(rb.Message).To(ContainSubstring("-c proxy --previous"))
		promoteReplicaSet(ns, good)
	})

	It("is rolled back when a referenced ConfigMap changes to a value the new pods crash on, and rolls forward once it is fixed", func() {
		Expect(k8s.Create(suiteCtx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"},
			Data: map[string]string{"SHUTDOWN_DELAY": "5s"}})).To(Succeed())
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Spec.RolloutOnConfigChange = ptrTo(true)
			a.Spec.EnvFrom = []examplev1.EnvFromSource{{ConfigMapRef: &examplev1.EnvFromReference{Name: "settings"}}}
		})
		good := readyOn()
		goodHash := templateConfigHash(ns)(Default)

		By("a value the app refuses: a new template, whose pods crash")
		editSettings(ns, func(cm *corev1.ConfigMap) { cm.Data["SHUTDOWN_DELAY"] = "soon" })
		Eventually(templateConfigHash(ns)).ShouldNot(Equal(goodHash))
		setWaiting(createPodOf(ns, "web", startRollout(ns)), "CrashLoopBackOff", "back-off 10s restarting failed container")

		By("the Deployment back on the last Ready template, and held there while the ConfigMap stays as it is")
		Eventually(templateConfigHash(ns)).Should(Equal(goodHash))
		Expect(eventuallyRolledBack("CrashLoopBackOff").Message).To(ContainSubstring("the ConfigMaps it rolls out on (settings)"))
		// holdsOn: the Deployment stays on the template of config hash, rolled back.
		holdsOn := func(hash string) {
			GinkgoHelper()
			Consistently(func(g Gomega) {
				g.Expect(templateConfigHash(ns)(g)).To(Equal(hash))
				rolledBackFor("CrashLoopBackOff")(g)
			}, 2*resyncPeriod, 200*time.Millisecond).Should(Succeed())
		}
		promoteReplicaSet(ns, good)
		Consistently(templateConfigHash(ns), 3*resyncPeriod, 200*time.Millisecond).Should(Equal(goodHash))
		Expect(countEvents(Default, app, examplev1.ReasonRolledBack)).To(Equal(1))

		By("the ConfigMap deleted and created again with the same bad value: the rollback stays in force")
		Expect(k8s.Delete(suiteCtx, getConfigMap(ns, "settings")(Default))).To(Succeed())
		holdsOn(goodHash)
		Expect(k8s.Create(suiteCtx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"},
			Data: map[string]string{"SHUTDOWN_DELAY": "soon"}})).To(Succeed())
		holdsOn(goodHash)
		Expect(countEvents(Default, app, examplev1.ReasonRolledBack)).To(Equal(1))

		By("the ConfigMap fixed: the new configuration rolls forward")
		editSettings(ns, func(cm *corev1.ConfigMap) { cm.Data["SHUTDOWN_DELAY"] = "10s" })
		Eventually(templateConfigHash(ns)).ShouldNot(Equal(goodHash))
		rollsForward()
	})

	It("stays rolled back across a manager restart: the decision lives in the status", func() {
		stop := startQuietManager()
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Labels = map[string]string{unwatchedLabel: "quiet"} })
		good := readyOn()
		setImage(app, "nginx:no-such-tag")
		setWaiting(createPodOf(ns, "web", startRollout(ns)), "ImagePullBackOff", "manifest unknown")
		Eventually(image).Should(Equal("nginx:1.27"))
		before := eventuallyRolledBack(examplev1.ReasonImagePullBackOff)
		promoteReplicaSet(ns, good)

		By("a new manager, which reconciles the MyApp when it starts: it puts back a deleted Service, and holds")
		stop()
		Expect(k8s.Delete(suiteCtx, getService(ns, "web")(Default))).To(Succeed())
		startQuietManager()
		Eventually(getService(ns, "web")).ShouldNot(BeNil())
		Consistently(func(g Gomega) {
			g.Expect(image(g)).To(Equal("nginx:1.27"))
			g.Expect(rolledBackFor(examplev1.ReasonImagePullBackOff)(g)).To(Equal(before))
		}, 3*resyncPeriod, 200*time.Millisecond).Should(Succeed())
		Expect(countEvents(Default, app, examplev1.ReasonRolledBack)).To(Equal(1))
	})

	It("is only reported when autoRollback is false, and when no template was ever Ready; a scale is no rollout", func() {
		By("a first template that never became Ready: nothing to return to")
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.Image = "nginx:no-such-tag" })
		setWaiting(createPod(ns, "web"), "ImagePullBackOff", "manifest unknown")
		Eventually(func(g Gomega) string {
			return condition(g, getMyApp(ns, "web")(g), examplev1.ConditionStalled).Reason
		}).Should(Equal(examplev1.ReasonImagePullBackOff))

		By("a scale whose new pods find no room past the deadline: the template is the Ready one")
		setImage(app, "nginx:1.27")
		ready := readyOn()
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(5)) })
		Eventually(func(g Gomega) *int32 { return getDeployment(ns, "web")(g).Spec.Replicas }).Should(HaveValue(Equal(int32(5))))
		passProgressDeadline(ns, "web", ready)
		Consistently(func(g Gomega) {
			g.Expect(getMyApp(ns, "web")(g).Status.RolledBack).To(BeNil())
			g.Expect(image(g)).To(Equal("nginx:1.27"))
		}, 3*resyncPeriod, 200*time.Millisecond).Should(Succeed())

		By("autoRollback false: the failure is reported, the Deployment keeps the spec's template")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.AutoRollback = ptrTo(false); a.Spec.Image = "nginx:no-such-tag" })
		Eventually(image).Should(Equal("nginx:no-such-tag"))
		setWaiting(createPodOf(ns, "web", startRollout(ns)), "ImagePullBackOff", "manifest unknown")
		Eventually(func(g Gomega) string {
			return condition(g, getMyApp(ns, "web")(g), examplev1.ConditionStalled).Reason
		}).Should(Equal(examplev1.ReasonImagePullBackOff))
		Consistently(func(g Gomega) {
			g.Expect(image(g)).To(Equal("nginx:no-such-tag"))
			g.Expect(getMyApp(ns, "web")(g).Status.RolledBack).To(BeNil())
		}, 3*resyncPeriod, 200*time.Millisecond).Should(Succeed())
	})
})
