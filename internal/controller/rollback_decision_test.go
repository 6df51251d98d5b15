package controller

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/metrics"
	"github.com/example/myapp-operator/internal/status"
	"github.com/example/myapp-operator/internal/testutil"
)

// The rollout decision (internal/rollout, docs/design/rollout-decision.md) against a real API
// server: each story sets up one of the orders of events in which 0.4.0 rolled back what it must
// not (or missed what it must), and shows the operator deciding from what is stored and
// observed. The story plays the deployment controller, the kubelet, the garbage collector and
// kubectl; a story that stops the operator between two of its writes runs a manager of its own.
var _ = Describe("The rollout decision", func() {
	const restartedAt = "kubectl.kubernetes.io/restartedAt"
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	image := func(g Gomega) string { return container(g, getDeployment(ns, "web")(g)).Image }
	myApp := func(g Gomega) *examplev1.MyApp { return getMyApp(ns, "web")(g) }
	// readyOn plays the rollout of the Deployment's current template to its end and returns its
	// pod-template-hash once the status names it the rollback target.
	readyOn := func() string {
		GinkgoHelper()
		hash := currentReplicaSet(ns, "web")
		rollOut(ns, "web")
		Eventually(func(g Gomega) string { return myApp(g).Status.ReadyTemplate }).Should(Equal(hash))
		return hash
	}
	setImage := func(app *examplev1.MyApp, img string) {
		GinkgoHelper()
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Image = img })
		Eventually(image).Should(Equal(img))
	}
	// eventuallyRolledBack waits for the rollback's record and the conditions that report it.
	eventuallyRolledBack := func(reason string) *examplev1.RollbackStatus {
		GinkgoHelper()
		var rb *examplev1.RollbackStatus
		Eventually(func(g Gomega) {
			a := myApp(g)
			g.Expect(a.Status.RolledBack).NotTo(BeNil())
			g.Expect(a.Status.RolledBack.Reason).To(Equal(reason))
			stalled := condition(g, a, examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonRolledBack))
			rb = a.Status.RolledBack
		}).Should(Succeed())
		return rb
	}
	// notRolledBack holds while the Deployment carries img and no rollback is recorded.
	notRolledBack := func(img string) func(Gomega) {
		return func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			g.Expect(container(g, d).Image).To(Equal(img))
			g.Expect(d.Annotations).NotTo(HaveKey(markAnnotation))
			g.Expect(myApp(g).Status.RolledBack).To(BeNil())
		}
	}
	// readyAndCurrent waits until the MyApp is Ready on the template hash, with no rollback.
	readyAndCurrent := func(hash string) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			a := myApp(g)
			g.Expect(a.Status.RolledBack).To(BeNil())
			g.Expect(a.Status.ReadyTemplate).To(Equal(hash))
			g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
	}
	// reportRollout plays the deployment controller's status for the Deployment's latest
	// generation: its counts, and its Progressing condition True with reason progressing.
	reportRollout := func(replicas, updated, available int32, progressing string) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			d.Status = appsv1.DeploymentStatus{
				ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: updated,
				ReadyReplicas: available, AvailableReplicas: available,
				Conditions: []appsv1.DeploymentCondition{
					{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
						LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()},
					{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: progressing,
						LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()},
				},
			}
			g.Expect(k8s.Status().Update(suiteCtx, d)).To(Succeed())
		}).Should(Succeed())
	}
	rolledBackEvents := func(g Gomega) int { return countEvents(g, myApp(g), examplev1.ReasonRolledBack) }

	It("does not roll back the user's fix of a failing template while the deployment controller has not observed it", func() {
		app := createMyApp(ns, "web", nil)
		served := readyOn()

		By("a bad image in place with autoRollback false: its pod cannot pull, for longer than the grace")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.AutoRollback = ptrTo(false); a.Spec.Image = "nginx:no-such-tag" })
		Eventually(image).Should(Equal("nginx:no-such-tag"))
		pod := createPodOf(ns, "web", startRollout(ns))
		setWaiting(pod, "ErrImagePull", "manifest unknown")
		Eventually(func(g Gomega) string { return condition(g, myApp(g), examplev1.ConditionStalled).Reason }).
			Should(Equal(examplev1.ReasonImagePullBackOff))
		Consistently(notRolledBack("nginx:no-such-tag"), resyncPeriod, 200*time.Millisecond).Should(Succeed())
		Expect(myApp(Default).Status.ReadyTemplate).To(Equal(served), "a template whose pods never served is no target")

		By("one edit that fixes the image and turns autoRollback on, which the deployment controller has not observed")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.AutoRollback = ptrTo(true); a.Spec.Image = "nginx:1.28" })
		Eventually(image).Should(Equal("nginx:1.28"))
		d := getDeployment(ns, "web")(Default)
		Expect(d.Status.ObservedGeneration).To(BeNumerically("<", d.Generation))
		Expect(d.Annotations[revisionAnnotation]).To(Equal("2"), "the revision is still the bad template's")

		By("the bad template's pods failing on, through resyncs and pod events: the fix is kept, nothing rolled back")
		setWaiting(pod, "ImagePullBackOff", "back-off pulling image")
		Consistently(notRolledBack("nginx:1.28"), 3*resyncPeriod, 200*time.Millisecond).Should(Succeed())
		setWaiting(pod, "ErrImagePull", "manifest unknown")
		Consistently(notRolledBack("nginx:1.28"), resyncPeriod, 200*time.Millisecond).Should(Succeed())
		Expect(rolledBackEvents(Default)).To(BeZero())
		Expect(myApp(Default).Status.ReadyTemplate).To(Equal(served))

		By("the deployment controller observing the generation before it makes the fix's ReplicaSet, as on a scaling event or with Recreate: still nothing rolled back")
		// syncDeployment's scaling-event path (replicas changed in the same edit) scales the
		// ReplicaSets there are and writes observedGeneration; the revision still names the
		// bad template's ReplicaSet, whose pods fail on.
		reportRollout(1, 0, 0, "ReplicaSetUpdated")
		Expect(getDeployment(ns, "web")(Default).Annotations[revisionAnnotation]).To(Equal("2"))
		setWaiting(pod, "ImagePullBackOff", "back-off pulling image")
		Consistently(notRolledBack("nginx:1.28"), 3*resyncPeriod, 200*time.Millisecond).Should(Succeed())
		Expect(rolledBackEvents(Default)).To(BeZero())

		By("the fix rolled out: Ready on it")
		readyAndCurrent(readyOn())
	})

	It("never rolls back a release that completed while no reconcile looked, through a scale-up and a crash", func() {
		stop := startDecisionManager(managerOptions{})
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			inDecisionManager(a)
			a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptrTo(int32(2)), MaxReplicas: ptrTo(int32(6))}
		})
		v1 := readyOn()

		By("v2 pushed and applied; then the operator stops")
		setImage(app, "nginx:1.28")
		stop()

		By("while no reconcile looks: v2's rollout completes, the autoscaler scales it up, one new pod crash-loops")
		v2 := currentReplicaSet(ns, "web")
		for range 2 {
			setRunning(createPodOf(ns, "web", v2))
		}
		reportRollout(2, 2, 2, "NewReplicaSetAvailable")
		scaleAsAutoscaler(ns, "web", 4)
		setRunning(createPodOf(ns, "web", v2))
		setWaiting(createPodOf(ns, "web", v2), "CrashLoopBackOff", "back-off 10s restarting failed container")
		// The deployment controller keeps NewReplicaSetAvailable while every pod is of the new
		// ReplicaSet: the condition is its word that v2 completed.
		reportRollout(4, 4, 3, "NewReplicaSetAvailable")
		Expect(myApp(Default).Status.ReadyTemplate).To(Equal(v1))

		By("the operator starting again: v2 completed, and is never rolled back")
		startDecisionManager(managerOptions{})
		Consistently(notRolledBack("nginx:1.28"), 3*resyncPeriod, 200*time.Millisecond).Should(Succeed())
		Eventually(func(g Gomega) string { return myApp(g).Status.ReadyTemplate }).Should(Equal(v2))
		Expect(rolledBackEvents(Default)).To(BeZero())
	})

	It("takes a template rolled out at zero replicas for no target: its first scale-up that fails returns to the last one that served", func() {
		app := createMyApp(ns, "web", nil)
		served := readyOn()

		By("scaled to zero, then a new template rolled out at zero: the deployment controller says NewReplicaSetAvailable")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(0)) })
		Eventually(func(g Gomega) *int32 { return getDeployment(ns, "web")(g).Spec.Replicas }).Should(HaveValue(BeZero()))
		rollOut(ns, "web")
		setImage(app, "nginx:no-such-tag")
		atZero := currentReplicaSet(ns, "web")
		reportRollout(0, 0, 0, "NewReplicaSetAvailable")
		Consistently(func(g Gomega) string { return myApp(g).Status.ReadyTemplate }, 2*resyncPeriod, 200*time.Millisecond).
			Should(Equal(served), "no pod of the template rolled out at zero ever served")

		By("scaled to 2: the condition stays NewReplicaSetAvailable, and the new pods cannot pull")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(2)) })
		Eventually(func(g Gomega) *int32 { return getDeployment(ns, "web")(g).Spec.Replicas }).Should(HaveValue(Equal(int32(2))))
		reportRollout(2, 2, 0, "NewReplicaSetAvailable")
		for range 2 {
			setWaiting(createPodOf(ns, "web", atZero), "ErrImagePull", "manifest unknown")
		}

		By("rolled back to the last template that served")
		Eventually(image).Should(Equal("nginx:1.27"))
		rb := eventuallyRolledBack(examplev1.ReasonImagePullBackOff)
		Expect(rb.Template).To(Equal(served))
		Expect(rb.FailedTemplate).To(Equal(atZero))
		Expect(myApp(Default).Status.ReadyTemplate).To(Equal(served))
	})

	It("counts the grace from the first sighting of a problem, not from the pod's creation", func() {
		const grace = 4 * time.Second
		startDecisionManager(managerOptions{grace: grace})
		app := createMyApp(ns, "web", inDecisionManager)
		readyOn()
		setImage(app, "nginx:no-such-tag")
		pod := createPodOf(ns, "web", startRollout(ns))

		By("the new template's pod without a problem for longer than the grace (it waited for a node)")
		Consistently(notRolledBack("nginx:no-such-tag"), grace+time.Second, 200*time.Millisecond).Should(Succeed())
		Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		Expect(time.Since(pod.CreationTimestamp.Time)).To(BeNumerically(">", grace))

		By("its first pull error: no rollback for most of the grace, then one")
		setWaiting(pod, "ErrImagePull", "manifest unknown")
		seen := time.Now()
		Consistently(notRolledBack("nginx:no-such-tag"), grace-time.Second, 100*time.Millisecond).Should(Succeed())
		Eventually(image).Should(Equal("nginx:1.27"))
		eventuallyRolledBack(examplev1.ReasonImagePullBackOff)
		Expect(time.Since(seen)).To(BeNumerically(">=", grace-time.Second))
	})

	It("makes a Deployment deleted while a rollback holds again on the target, from its stored intent, and keeps the rollback", func() {
		app := createMyApp(ns, "web", nil)
		served := readyOn()
		setImage(app, "nginx:no-such-tag")
		setWaiting(createPodOf(ns, "web", startRollout(ns)), "ErrImagePull", "manifest unknown")
		Eventually(image).Should(Equal("nginx:1.27"))
		rb := eventuallyRolledBack(examplev1.ReasonImagePullBackOff)
		promoteReplicaSet(ns, served)
		rollOut(ns, "web")

		By("the Deployment deleted with background propagation; the story plays the garbage collector")
		old := getDeployment(ns, "web")(Default)
		Expect(k8s.Delete(suiteCtx, old, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		Expect(k8s.DeleteAllOf(suiteCtx, &appsv1.ReplicaSet{}, client.InNamespace(ns))).To(Succeed())
		Expect(k8s.DeleteAllOf(suiteCtx, &corev1.Pod{}, client.InNamespace(ns))).To(Succeed())

		By("the operator makes it again on the target template, with the mark, and the rollback stays")
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			g.Expect(d.UID).NotTo(Equal(old.UID))
			g.Expect(metav1.IsControlledBy(d, app)).To(BeTrue())
			g.Expect(container(g, d).Image).To(Equal("nginx:1.27"))
			g.Expect(markOf(d)).To(Equal(rb))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(image(g)).To(Equal("nginx:1.27"))
			g.Expect(myApp(g).Status.RolledBack).To(Equal(rb))
		}, 3*resyncPeriod, 200*time.Millisecond).Should(Succeed())

		By("the target's intent stored in ControllerRevision web-<hash>, which the MyApp owns")
		rev := &appsv1.ControllerRevision{}
		Expect(k8s.Get(suiteCtx, key(ns, "web-"+served), rev)).To(Succeed())
		Expect(metav1.IsControlledBy(rev, app)).To(BeTrue())
		Expect(rev.Labels).To(HaveKeyWithValue(appsv1.DefaultDeploymentUniqueLabelKey, served))
		stored := &corev1.PodTemplateSpec{}
		Expect(json.Unmarshal(rev.Data.Raw, stored)).To(Succeed())
		Expect(stored.Spec.Containers).To(ConsistOf(HaveField("Image", "nginx:1.27")))
		Expect(countEvents(Default, app, examplev1.ReasonRolledBack)).To(Equal(1))
	})

	It("records a rollback before acting on it: a refused record changes nothing, and a stopped manager finishes it once", func() {
		stop := startDecisionManager(managerOptions{})
		app := createMyApp(ns, "web", inDecisionManager)
		readyOn()

		By("an admission policy refusing every status write that records a rollback")
		allowRecords := refuseRollbackRecords(ns)
		setImage(app, "nginx:no-such-tag")
		bad := startRollout(ns)
		failing := getDeployment(ns, "web")(Default)
		setWaiting(createPodOf(ns, "web", bad), "ErrImagePull", "manifest unknown")

		By("the rollout failed and its record refused: the Deployment keeps the failed template, without the mark")
		Consistently(notRolledBack("nginx:no-such-tag"), 3*resyncPeriod, 200*time.Millisecond).Should(Succeed())
		Expect(rolledBackEvents(Default)).To(BeZero())

		By("the policy gone: recorded, then applied")
		allowRecords()
		Eventually(image).Should(Equal("nginx:1.27"))
		rb := eventuallyRolledBack(examplev1.ReasonImagePullBackOff)
		Eventually(rolledBackEvents).Should(Equal(1))

		By("the state a manager stopped after the record and before the apply leaves: the Deployment on the failed template, no mark")
		stop()
		cfg, err := appsv1ac.ExtractDeployment(failing, FieldOwner)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8s.Apply(suiteCtx, cfg, client.FieldOwner(FieldOwner), client.ForceOwnership)).To(Succeed())
		reportDeploymentStatus(ns, "web", func(want int32) (int32, int32, int32) { return want, 0, want })
		Expect(image(Default)).To(Equal("nginx:no-such-tag"))
		Expect(getDeployment(ns, "web")(Default).Annotations).NotTo(HaveKey(markAnnotation))

		By("a manager starting: it finds the record and applies it; the failed template is not rolled back a second time")
		stop = startDecisionManager(managerOptions{})
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			g.Expect(container(g, d).Image).To(Equal("nginx:1.27"))
			g.Expect(markOf(d)).To(Equal(rb))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(image(g)).To(Equal("nginx:1.27"))
			g.Expect(myApp(g).Status.RolledBack).To(Equal(rb))
			g.Expect(rolledBackEvents(g)).To(Equal(1))
		}, 3*resyncPeriod, 200*time.Millisecond).Should(Succeed())

		By("the status losing the record (restored from a backup, or written over): the Deployment's mark holds")
		stop()
		Eventually(func(g Gomega) {
			a := myApp(g)
			a.Status.RolledBack = nil
			g.Expect(k8s.Status().Update(suiteCtx, a)).To(Succeed())
		}).Should(Succeed())
		startDecisionManager(managerOptions{})
		Eventually(func(g Gomega) *examplev1.RollbackStatus { return myApp(g).Status.RolledBack }).Should(Equal(rb))
		Consistently(func(g Gomega) {
			g.Expect(image(g)).To(Equal("nginx:1.27"))
			g.Expect(myApp(g).Status.RolledBack).To(Equal(rb))
			g.Expect(rolledBackEvents(g)).To(Equal(1))
		}, 3*resyncPeriod, 200*time.Millisecond).Should(Succeed())
	})

	It("counts a rollback once an apply makes it, also when its first apply is refused and a later reconcile makes it", func() {
		registry := prometheus.NewPedanticRegistry()
		startDecisionManager(managerOptions{metrics: registry})
		app := createMyApp(ns, "web", inDecisionManager)
		readyOn()
		counted := func(g Gomega) map[string]float64 { return seriesIn(g, registry, ns) }

		By("an admission policy refusing every update of the Deployment that carries a rollback's mark")
		allowMarks := refuseRollbackMarks(ns, "web")
		setImage(app, "nginx:no-such-tag")
		setWaiting(createPodOf(ns, "web", startRollout(ns)), "ErrImagePull", "manifest unknown")

		By("recorded, its apply refused: not made yet, so not counted; the Deployment still on the failed template")
		eventuallyRolledBack(examplev1.ReasonImagePullBackOff)
		Consistently(func(g Gomega) {
			g.Expect(image(g)).To(Equal("nginx:no-such-tag"))
			g.Expect(counted(g)).To(HaveKeyWithValue(metrics.RollbacksName, 0.0))
		}, resyncPeriod, 200*time.Millisecond).Should(Succeed())

		By("the policy gone: a later reconcile makes the rollback it holds, counted once")
		allowMarks()
		Eventually(image).Should(Equal("nginx:1.27"))
		Eventually(counted).Should(HaveKeyWithValue(metrics.RollbacksName, 1.0))
		Consistently(counted, 2*resyncPeriod, 200*time.Millisecond).Should(HaveKeyWithValue(metrics.RollbacksName, 1.0))
	})

	It("leaves `kubectl rollout restart` to kubectl while a rollback holds: it applies its own intent for the target", func() {
		app := createMyApp(ns, "web", nil)
		readyOn()
		restart := func(at string) {
			GinkgoHelper()
			patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, restartedAt, at)
			Expect(k8s.Patch(suiteCtx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}},
				client.RawPatch(types.StrategicMergePatchType, []byte(patch)), client.FieldOwner("kubectl-rollout"))).To(Succeed())
		}
		// restartedBy holds while the Deployment's template carries kubectl's annotation at,
		// owned by kubectl-rollout and not by the operator.
		restartedBy := func(at string) func(Gomega) {
			return func(g Gomega) {
				d := getDeployment(ns, "web")(g)
				g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue(restartedAt, at))
				path := []string{"f:spec", "f:template", "f:metadata", "f:annotations", "f:" + restartedAt}
				g.Expect(testutil.OwnsField(d, "kubectl-rollout", path...)).To(BeTrue())
				g.Expect(testutil.OwnsField(d, FieldOwner, path...)).To(BeFalse(), "the operator owns kubectl's annotation")
			}
		}

		By("a restart before the new template: the template that serves carries kubectl's annotation")
		restart("2026-01-01T00:00:00Z")
		served := readyOn()

		By("a new image that cannot pull: rolled back to the restarted template, the annotation still kubectl's")
		setImage(app, "nginx:no-such-tag")
		pod := createPodOf(ns, "web", startRollout(ns))
		setWaiting(pod, "ErrImagePull", "manifest unknown")
		Eventually(image).Should(Equal("nginx:1.27"))
		rb := eventuallyRolledBack(examplev1.ReasonImagePullBackOff)
		Expect(rb.Template).To(Equal(served))
		restartedBy("2026-01-01T00:00:00Z")(Default)
		promoteReplicaSet(ns, served)
		rollOut(ns, "web")

		By("kubectl rollout restart while the rollback holds: it stays, through reconciles")
		restart("2026-01-02T00:00:00Z")
		setWaiting(pod, "ImagePullBackOff", "back-off pulling image")
		Consistently(func(g Gomega) {
			restartedBy("2026-01-02T00:00:00Z")(g)
			g.Expect(image(g)).To(Equal("nginx:1.27"))
			g.Expect(myApp(g).Status.RolledBack).To(Equal(rb))
		}, 3*resyncPeriod, 200*time.Millisecond).Should(Succeed())
	})

	// missingSource plays a new template whose volume takes a source that does not exist: its
	// first pod (wait marks it as the kubelet or the scheduler would) beside the two that
	// serve; the MyApp names the source (message) within seconds, is rolled back once the
	// grace has passed, and rolls forward once the source is created and a reconcile requested.
	missingSource := func(volume examplev1.Volume, wait func(*corev1.Pod), message string, source client.Object, edits ...func(*examplev1.MyApp)) {
		GinkgoHelper()
		startDecisionManager(managerOptions{grace: 5 * time.Second})
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			inDecisionManager(a)
			for _, edit := range edits {
				edit(a)
			}
		})
		served := readyOn()
		volumes := func(g Gomega) []corev1.Volume { return getDeployment(ns, "web")(g).Spec.Template.Spec.Volumes }

		By("a new template mounting " + message + ", which does not exist")
		updateMyApp(app, func(a *examplev1.MyApp) {
			a.Spec.Volumes = []examplev1.Volume{volume}
			a.Spec.VolumeMounts = []examplev1.VolumeMount{{Name: volume.Name, MountPath: "/var/" + volume.Name}}
		})
		Eventually(volumes).Should(ContainElement(HaveField("Name", volume.Name)))
		// The rolling update's first step: one pod of the new template beside the two that serve.
		failed := replicaSetOfTemplate(ns, "web", func(s *appsv1.DeploymentStatus) {
			s.Replicas, s.UpdatedReplicas, s.ReadyReplicas, s.AvailableReplicas = 3, 1, 2, 2
		})
		wait(createPodOf(ns, "web", failed))
		Eventually(func(g Gomega) {
			degraded := condition(g, myApp(g), examplev1.ConditionDegraded)
			g.Expect(degraded.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(degraded.Reason).To(Equal(examplev1.ReasonVolumeSourceMissing))
			g.Expect(degraded.Message).To(ContainSubstring(message))
		}).WithTimeout(4 * time.Second).Should(Succeed())

		By("rolled back for it once the grace has passed")
		Eventually(volumes).Should(BeEmpty())
		rb := eventuallyRolledBack(examplev1.ReasonVolumeSourceMissing)
		Expect(rb.Template).To(Equal(served))
		Expect(rb.FailedTemplate).To(Equal(failed))
		promoteReplicaSet(ns, served)
		rollOut(ns, "web")

		By("the source created and a reconcile requested: the template rolls forward")
		source.SetNamespace(ns)
		Expect(k8s.Create(suiteCtx, source)).To(Succeed())
		requestReconcile(app, "source-created")
		Eventually(volumes).Should(ContainElement(HaveField("Name", volume.Name)))
		readyAndCurrent(readyOn())
	}

	It("names a ConfigMap a volume of the new template takes and that does not exist, within seconds, and rolls back for it", func() {
		// The kubelet only waits to mount it: ContainerCreating, no reason of its own.
		missingSource(examplev1.Volume{Name: "settings", ConfigMap: &examplev1.ConfigMapVolumeSource{Name: "settings"}},
			func(pod *corev1.Pod) { setWaiting(pod, "ContainerCreating", "") },
			"ConfigMap settings (spec.volumes[0].configMap.name)",
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"mode": "production"}})
	})

	It("rolls back for a missing ConfigMap also a MyApp that rolls out on config changes, whose template keeps its config hash meanwhile", func() {
		// The template with the hash kept for the missing ConfigMap is the one that rolls out,
		// and the one judged.
		missingSource(examplev1.Volume{Name: "settings", ConfigMap: &examplev1.ConfigMapVolumeSource{Name: "settings"}},
			func(pod *corev1.Pod) { setWaiting(pod, "ContainerCreating", "") },
			"ConfigMap settings (spec.volumes[0].configMap.name)",
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"mode": "production"}},
			func(a *examplev1.MyApp) { a.Spec.RolloutOnConfigChange = ptrTo(true) })
	})

	It("names a PersistentVolumeClaim a volume of the new template takes and that does not exist, and rolls back for it", func() {
		// Its pod waits unscheduled, with no container status.
		missingSource(examplev1.Volume{Name: "data", PersistentVolumeClaim: &examplev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}},
			func(*corev1.Pod) {},
			"PersistentVolumeClaim data (spec.volumes[0].persistentVolumeClaim.claimName)",
			&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}})
	})

	It("keeps a stored intent for the template readyTemplate names, through a return to a template whose intent was pruned", func() {
		startDecisionManager(managerOptions{})
		app := createMyApp(ns, "web", inDecisionManager)
		revisions := func(g Gomega) []string {
			list := &appsv1.ControllerRevisionList{}
			g.Expect(k8s.List(suiteCtx, list, client.InNamespace(ns))).To(Succeed())
			var names []string
			for _, rev := range list.Items {
				names = append(names, rev.Name)
			}
			return names
		}
		a := readyOn()
		setImage(app, "nginx:1.28")
		b := readyOn()
		setImage(app, "nginx:1.29")
		c := readyOn()
		By("A's intent is pruned once C is the target and B the one before")
		Eventually(revisions).Should(ConsistOf("web-"+b, "web-"+c))

		By("back to A's image: its template completes again, and its intent is stored again before the status names it")
		setImage(app, "nginx:1.27")
		Expect(currentReplicaSet(ns, "web")).To(Equal(a), "the same template, the same pod-template-hash")
		readyOn()
		Eventually(revisions).Should(ConsistOf("web-"+c, "web-"+a))
	})

	It("stores the intent of a template a release before 0.4.1 recorded, once it serves with the spec's intent", func() {
		stop := startDecisionManager(managerOptions{})
		createMyApp(ns, "web", inDecisionManager)
		v1 := readyOn()
		stop()
		By("0.4.0's state: readyTemplate recorded, no stored intent")
		Expect(k8s.Delete(suiteCtx, &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-" + v1}})).To(Succeed())

		By("the upgraded operator stores it, and changes neither the Deployment's template nor the status's target")
		before := getDeployment(ns, "web")(Default).Spec.Template
		startDecisionManager(managerOptions{})
		Eventually(func() error {
			return k8s.Get(suiteCtx, key(ns, "web-"+v1), &appsv1.ControllerRevision{})
		}).Should(Succeed())
		Expect(getDeployment(ns, "web")(Default).Spec.Template).To(Equal(before))
		Expect(myApp(Default).Status.ReadyTemplate).To(Equal(v1))
	})

	It("does not requeue a MyApp without its Deployment for the problem pods of a Deployment it lost", func() {
		requests := &requestCounter{}
		startDecisionManager(managerOptions{syncPeriod: 10 * time.Hour, requests: requests})

		By("the name web taken by a Deployment the MyApp does not own (its own deleted with --cascade=orphan)")
		foreign := map[string]string{"app": "foreign"}
		Expect(k8s.Create(suiteCtx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: foreign},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: foreign},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}}},
		})).To(Succeed())
		createMyApp(ns, "web", inDecisionManager)
		Eventually(func(g Gomega) string { return condition(g, myApp(g), examplev1.ConditionStalled).Reason }).
			Should(Equal(examplev1.ReasonChildNotOwned))

		By("the orphaned pods of the MyApp's earlier Deployment, which cannot pull their image")
		for range 2 {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "web-5d4f8-",
					Labels: map[string]string{desired.LabelSelector: "web", appsv1.DefaultDeploymentUniqueLabelKey: "5d4f8"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: desired.ContainerName, Image: "nginx:no-such-tag"}}},
			}
			Expect(k8s.Create(suiteCtx, pod)).To(Succeed())
			setWaiting(pod, "ErrImagePull", "manifest unknown")
		}

		By("once the reconciles their events queued are done: over 10 s, at most a handful of requests")
		n0 := requests.count()
		seen, last := 0, time.Now()
		Eventually(func() time.Duration {
			if c := len(requests.since(n0, ns)); c != seen {
				seen, last = c, time.Now()
			}
			return time.Since(last)
		}).WithTimeout(20 * time.Second).WithPolling(50 * time.Millisecond).Should(BeNumerically(">=", time.Second))
		n := requests.count()
		Consistently(func() int { return len(requests.since(n, ns)) }).WithTimeout(10*time.Second).WithPolling(250*time.Millisecond).
			Should(BeNumerically("<=", 3), func() string {
				return "a MyApp without its Deployment is requeued for pods of no template of its:\n" + strings.Join(requests.since(n, ns), "\n")
			})
		AddReportEntry("requests about the MyApp in 10 s", len(requests.since(n, ns)))
	})

	It("keeps a rollback 0.4.0 held across the upgrade, restarting no pod, and rolls the next template out", func() {
		stop := startDecisionManager(managerOptions{})
		app := createMyApp(ns, "web", inDecisionManager)
		v1 := readyOn()
		setImage(app, "nginx:no-such-tag")
		v2 := startRollout(ns)
		Eventually(func(g Gomega) int64 { return myApp(g).Status.ObservedGeneration }).Should(Equal(app.Generation))
		stop()

		By("0.4.0's state: no stored intent; its rollback applied v1's ReplicaSet's whole template, without a mark")
		Expect(k8s.Delete(suiteCtx, &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-" + v1}})).To(Succeed())
		rs := &appsv1.ReplicaSet{}
		Expect(k8s.Get(suiteCtx, key(ns, "web-"+v1), rs)).To(Succeed())
		whole := rs.Spec.Template.DeepCopy()
		delete(whole.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
		cfg, err := appsv1ac.ExtractDeployment(getDeployment(ns, "web")(Default), FieldOwner)
		Expect(err).NotTo(HaveOccurred())
		cfg.Spec.Template, err = asApplyConfiguration(whole)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8s.Apply(suiteCtx, cfg, client.FieldOwner(FieldOwner), client.ForceOwnership)).To(Succeed())
		promoteReplicaSet(ns, v1)
		rollOut(ns, "web")

		By("0.4.0's record: FailedSpec the digest of the JSON of the Deployment intent's template")
		intent, err := desired.Deployment(app, false)
		Expect(err).NotTo(HaveOccurred())
		raw, err := json.Marshal(intent.Spec.Template)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			a := myApp(g)
			a.Status.RolledBack = &examplev1.RollbackStatus{Generation: a.Generation, FailedSpec: status.Digest(string(raw)),
				FailedTemplate: v2, Template: v1, Reason: examplev1.ReasonImagePullBackOff,
				Message: "Rolled Deployment web back to the last Ready pod template", Time: metav1.Now()}
			g.Expect(k8s.Status().Update(suiteCtx, a)).To(Succeed())
		}).Should(Succeed())
		record := myApp(Default).Status.RolledBack
		Expect(myApp(Default).Status.ReadyTemplate).To(Equal(v1))
		crafted := getDeployment(ns, "web")(Default)
		Expect(crafted.Annotations).NotTo(HaveKey(markAnnotation))
		Expect(container(Default, crafted).Image).To(Equal("nginx:1.27"))

		By("the upgraded operator starting: the template and its pods stay, the rollback holds")
		startDecisionManager(managerOptions{})
		Eventually(func(g Gomega) map[string]string { return getDeployment(ns, "web")(g).Annotations }).Should(HaveKey(markAnnotation))
		Consistently(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			// The mark moves the generation (the deployment controller copies a Deployment's
			// annotations to its ReplicaSet), not the template: no new ReplicaSet, no pod replaced.
			g.Expect(d.Spec.Template).To(Equal(crafted.Spec.Template), "a new pod template")
			g.Expect(myApp(g).Status.RolledBack).To(Equal(record))
		}, 3*resyncPeriod, 200*time.Millisecond).Should(Succeed())

		By("the target's ReplicaSet's template stored as its intent, so that the hold outlives the Deployment")
		Eventually(func() error { return k8s.Get(suiteCtx, key(ns, "web-"+v1), &appsv1.ControllerRevision{}) }).Should(Succeed())
		old := getDeployment(ns, "web")(Default)
		Expect(k8s.Delete(suiteCtx, old, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		Expect(k8s.DeleteAllOf(suiteCtx, &appsv1.ReplicaSet{}, client.InNamespace(ns))).To(Succeed())
		Expect(k8s.DeleteAllOf(suiteCtx, &corev1.Pod{}, client.InNamespace(ns))).To(Succeed())
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			g.Expect(d.UID).NotTo(Equal(old.UID))
			g.Expect(container(g, d).Image).To(Equal("nginx:1.27"))
			g.Expect(myApp(g).Status.RolledBack).To(Equal(record))
		}).Should(Succeed())
		currentReplicaSet(ns, "web")
		rollOut(ns, "web")

		By("v3 pushed: it rolls out as any template does")
		setImage(app, "nginx:1.28")
		readyAndCurrent(readyOn())
	})
})

// decisionLabel is the value of unwatchedLabel that the rollout decision's own managers select.
const decisionLabel = "decision"

// inDecisionManager puts the MyApp in the sight of startDecisionManager's managers only.
func inDecisionManager(a *examplev1.MyApp) {
	a.Labels = map[string]string{unwatchedLabel: decisionLabel}
}

// startDecisionManager runs a manager of the story's own for the MyApps inDecisionManager,
// which the suite's manager never sees, and returns what stops it (startManager).
func startDecisionManager(opts managerOptions) (stop func()) {
	GinkgoHelper()
	sel, err := labels.Parse(unwatchedLabel + "=" + decisionLabel)
	Expect(err).NotTo(HaveOccurred())
	opts.myApps = sel
	return startManager(opts)
}

// refuseRollbackRecords makes the API server refuse, in namespace ns, every MyApp status write
// that records a rollback, and waits until it does; allow lifts it.
func refuseRollbackRecords(ns string) (allow func()) {
	GinkgoHelper()
	return refuseUpdates(ns, "refuse-rollback-records-"+ns,
		admissionregistrationv1.Rule{APIGroups: []string{examplev1.GroupVersion.Group},
			APIVersions: []string{examplev1.GroupVersion.Version}, Resources: []string{"myapps/status"}},
		"!has(object.status.rolledBack)", func() error {
			// A MyApp no manager sees.
			probe := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe", Labels: map[string]string{unwatchedLabel: "probe"}},
				Spec: examplev1.MyAppSpec{Image: "nginx:1.27"}}
			if err := k8s.Create(suiteCtx, probe); client.IgnoreAlreadyExists(err) != nil {
				return err
			}
			if err := k8s.Get(suiteCtx, client.ObjectKeyFromObject(probe), probe); err != nil {
				return err
			}
			probe.Status.RolledBack = &examplev1.RollbackStatus{Generation: 1, FailedSpec: "probe", FailedTemplate: "probe",
				Template: "probe", Reason: examplev1.ReasonImagePullBackOff, Message: "probe", Time: metav1.Now()}
			return k8s.Status().Update(suiteCtx, probe, client.DryRunAll)
		}, func() {
			Expect(client.IgnoreNotFound(k8s.Delete(suiteCtx, &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}}))).To(Succeed())
		})
}

// refuseRollbackMarks makes the API server refuse, in namespace ns, every update of a Deployment
// that carries a rollback's mark (the rollback's apply), and waits until it does, trying it on
// the Deployment named deployment; allow lifts it.
func refuseRollbackMarks(ns, deployment string) (allow func()) {
	GinkgoHelper()
	return refuseUpdates(ns, "refuse-rollback-marks-"+ns,
		admissionregistrationv1.Rule{APIGroups: []string{appsv1.GroupName}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
		fmt.Sprintf("!has(object.metadata.annotations) || !(%q in object.metadata.annotations)", markAnnotation), func() error {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"probe"}}}`, markAnnotation)
			return k8s.Patch(suiteCtx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: deployment}},
				client.RawPatch(types.MergePatchType, []byte(patch)), client.DryRunAll)
		}, func() {})
}

// refuseUpdates makes the API server refuse, in namespace ns, the updates of rule's resources
// whose new object fails expression, by a ValidatingAdmissionPolicy and its binding named name,
// and waits until try is refused as invalid (the API server loads policies asynchronously);
// done then cleans up after try. allow lifts the policy.
func refuseUpdates(ns, name string, rule admissionregistrationv1.Rule, expression string, try func() error, done func()) (allow func()) {
	GinkgoHelper()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptrTo(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
						Rule:       rule,
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{Expression: expression, Message: "refused here by the story"}},
		},
	}
	Expect(k8s.Create(suiteCtx, policy)).To(Succeed())
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}},
		},
	}
	Expect(k8s.Create(suiteCtx, binding)).To(Succeed())
	allow = func() {
		Expect(client.IgnoreNotFound(k8s.Delete(suiteCtx, binding))).To(Succeed())
		Expect(client.IgnoreNotFound(k8s.Delete(suiteCtx, policy))).To(Succeed())
	}
	DeferCleanup(allow)

	By("waiting until the API server enforces the policy " + name)
	Eventually(try).WithTimeout(20 * time.Second).Should(Satisfy(apierrors.IsInvalid))
	done()
	return allow
}
