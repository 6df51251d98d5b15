package controller

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/testutil"
)

// Stories of an autoscaler the user runs rather than the operator: a HorizontalPodAutoscaler
// of their own, or KEDA's (a ScaledObject makes exactly such an HPA), whose scaleTargetRef is
// the MyApp. It scales the MyApp through its scale subresource (spec.replicas,
// status.replicas, status.selector), and the operator applies spec.replicas as it would a
// `kubectl scale myapp/web`.
//
// The suite runs no controller manager, so these stories start kube-controller-manager with
// the HPA controller alone. Without a metrics server the HPA controller still enforces its
// bounds before it reads any metric (reconcileAutoscaler in
// k8s.io/kubernetes/pkg/controller/podautoscaler/horizontal.go): a target below minReplicas
// goes to minReplicas, one above maxReplicas to maxReplicas, one at 0 is left alone
// (ScalingDisabled), and one within the bounds is left where it is when the metrics cannot be
// read. The stories scale with the bounds.
var _ = Describe("Your own autoscaler", Ordered, ContinueOnFailure, func() {
	BeforeAll(startAutoscalerController)
	// Its log says every second of every HPA that it has no metrics; only a failure shows it.
	JustAfterEach(func() {
		if CurrentSpecReport().Failed() {
			b, _ := os.ReadFile(autoscalerControllerLog)
			GinkgoWriter.Printf("kube-controller-manager's log, the last 8 KiB:\n%s\n", b[max(0, len(b)-8192):])
		}
	})

	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("scales the MyApp through its scale subresource; the operator follows and nothing fights", func() {
		app := createMyApp(ns, "web", nil) // 2 replicas
		rollOut(ns, "web")
		Eventually(expectStatus(ns, "web", 2)).Should(Succeed())

		By("an HPA of the user's, minReplicas 4, targeting the MyApp")
		createOwnAutoscaler(ns, "web", 4, 6)
		Eventually(func(g Gomega) {
			g.Expect(getMyApp(ns, "web")(g).Spec.Replicas).To(HaveValue(Equal(int32(4))))
			d := getDeployment(ns, "web")(g)
			g.Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(4))))
			g.Expect(d.Annotations).To(HaveKeyWithValue(desired.AnnotationReplicas, "spec"))
			g.Expect(ownsReplicas(d)).To(BeTrue(), "the operator applies the count, as for any spec.replicas")
		}).Should(Succeed())

		By("the status follows the Deployment, for the HPA's next look through the scale subresource")
		rollOut(ns, "web")
		Eventually(expectStatus(ns, "web", 4)).Should(Succeed())
		Eventually(func(g Gomega) {
			scale := scaleOf(g, ns, "web")
			g.Expect(scale.Spec.Replicas).To(Equal(int32(4)))
			g.Expect(scale.Status.Replicas).To(Equal(int32(4)))
			g.Expect(scale.Status.Selector).To(Equal("myapp.example.com/name=web"))
			h := getHPA(ns, "web")(g)
			g.Expect(h.Status.DesiredReplicas).To(Equal(int32(4)))
			g.Expect(autoscalerCondition(h, autoscalingv2.AbleToScale)).To(Equal(corev1.ConditionTrue))
		}).Should(Succeed())

		By("nothing fights: across HPA syncs and operator resyncs no one writes the MyApp's spec or the Deployment")
		expectSettled(app, 4)

		By("a hand scale of the MyApp above maxReplicas: the HPA brings it back to 6, the operator follows")
		scaleMyApp(ns, "web", 9)
		Eventually(func(g Gomega) {
			g.Expect(getMyApp(ns, "web")(g).Spec.Replicas).To(HaveValue(Equal(int32(6))))
			g.Expect(getDeployment(ns, "web")(g).Spec.Replicas).To(HaveValue(Equal(int32(6))))
		}).Should(Succeed())
		rollOut(ns, "web")
		Eventually(expectStatus(ns, "web", 6)).Should(Succeed())
		expectSettled(app, 6)
	})

	It("leaves a MyApp scaled to zero at zero", func() {
		createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(0)) })
		createOwnAutoscaler(ns, "web", 2, 4)
		Eventually(func(g Gomega) {
			h := getHPA(ns, "web")(g)
			g.Expect(h.Status.Conditions).To(ContainElement(And(
				HaveField("Type", autoscalingv2.ScalingActive), HaveField("Reason", "ScalingDisabled"))))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(getMyApp(ns, "web")(g).Spec.Replicas).To(HaveValue(BeZero()))
			g.Expect(getDeployment(ns, "web")(g).Spec.Replicas).To(HaveValue(BeZero()))
		}, "3s").Should(Succeed())
	})

	It("keeps the HPA's count through a GitOps apply that leaves replicas out, and fights one that sets it", func() {
		applyAsGitOps(ns, map[string]any{"image": "nginx:1.27"})
		app := getMyApp(ns, "web")(Default)
		createOwnAutoscaler(ns, "web", 3, 5)
		Eventually(replicasOf(ns, "web")).Should(HaveValue(Equal(int32(3))))

		By("the same manifest applied again, as Flux or Argo CD do at each sync: the HPA's count stays")
		Expect(applyAsGitOps(ns, map[string]any{"image": "nginx:1.27"}).Spec.Replicas).To(HaveValue(Equal(int32(3))))
		expectSettled(app, 3)

		By("a manifest that sets replicas: each sync writes it, and the HPA writes its own count back")
		Expect(applyAsGitOps(ns, map[string]any{"image": "nginx:1.27", "replicas": 2}).Spec.Replicas).To(HaveValue(Equal(int32(2))))
		Eventually(func(g Gomega) *int32 { return getMyApp(ns, "web")(g).Spec.Replicas }).Should(HaveValue(Equal(int32(3))))
		Expect(applyAsGitOps(ns, map[string]any{"image": "nginx:1.27", "replicas": 2}).Spec.Replicas).To(HaveValue(Equal(int32(2))))
		Eventually(func(g Gomega) *int32 { return getMyApp(ns, "web")(g).Spec.Replicas }).Should(HaveValue(Equal(int32(3))))
	})

	It("beside spec.autoScaling: the operator's autoscaler drives the Deployment, the user's moves only spec.replicas", func() {
		app := createMyApp(ns, "web", nil)
		createOwnAutoscaler(ns, "web-own", 3, 3)
		Eventually(replicasOf(ns, "web")).Should(HaveValue(Equal(int32(3))))

		By("turning spec.autoScaling on: the operator's HPA, on the Deployment, holds it within its own range")
		updateMyApp(app, func(a *examplev1.MyApp) {
			a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptrTo(int32(1)), MaxReplicas: ptrTo(int32(2))}
		})
		Eventually(func(g Gomega) {
			h := getHPA(ns, "web")(g)
			g.Expect(h.Spec.ScaleTargetRef.Kind).To(Equal("Deployment"))
			d := getDeployment(ns, "web")(g)
			g.Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(2))))
			g.Expect(d.Annotations).To(HaveKeyWithValue(desired.AnnotationReplicas, "autoscaler,spec=3"))
		}).Should(Succeed())
		rollOut(ns, "web")

		By("the user's HPA still holds spec.replicas at 3, which no longer reaches the Deployment; nothing is reported")
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			g.Expect(a.Spec.Replicas).To(HaveValue(Equal(int32(3))))
			g.Expect(a.Status.Replicas).To(Equal(int32(2)), "status.replicas is the Deployment's count, not the user's HPA's")
			g.Expect(a.Status.ObservedGeneration).To(Equal(a.Generation))
			g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, a, examplev1.ConditionDegraded).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(condition(g, a, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())

		By("the user's HPA asking for 5 moves spec.replicas, and the Deployment stays at the operator's HPA's 2")
		updateOwnAutoscaler(ns, "web-own", 5, 5)
		Eventually(func(g Gomega) {
			g.Expect(getMyApp(ns, "web")(g).Spec.Replicas).To(HaveValue(Equal(int32(5))))
			g.Expect(getDeployment(ns, "web")(g).Annotations).To(HaveKeyWithValue(desired.AnnotationReplicas, "autoscaler,spec=5"))
		}).Should(Succeed())
		Consistently(replicasOf(ns, "web"), "3s").Should(HaveValue(Equal(int32(2))))

		By("turning spec.autoScaling off: the operator deletes its HPA, and the user's count (5, not 1) reaches the Deployment")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.AutoScaling.Enabled = false })
		Eventually(replicasOf(ns, "web")).Should(HaveValue(Equal(int32(5))))
		Eventually(func() error {
			return k8s.Get(suiteCtx, key(ns, "web"), &autoscalingv2.HorizontalPodAutoscaler{})
		}).Should(Satisfy(apierrors.IsNotFound))
	})

	It("beside spec.autoScaling, with the user's HPA named like the MyApp: ChildNotOwned, Degraded only", func() {
		app := createMyApp(ns, "web", nil)
		createOwnAutoscaler(ns, "web", 3, 3)
		Eventually(replicasOf(ns, "web")).Should(HaveValue(Equal(int32(3))))
		rollOut(ns, "web")

		By("turning spec.autoScaling on: the operator's HPA cannot be made, and the Deployment is held where it is")
		updateMyApp(app, func(a *examplev1.MyApp) {
			a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MaxReplicas: ptrTo(int32(4))}
		})
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			g.Expect(a.Status.ObservedGeneration).To(Equal(a.Generation))
			degraded := condition(g, a, examplev1.ConditionDegraded)
			g.Expect(degraded.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(degraded.Reason).To(Equal(examplev1.ReasonChildNotOwned))
			g.Expect(degraded.Message).To(ContainSubstring("HorizontalPodAutoscaler web"))
			g.Expect(condition(g, a, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			h := getHPA(ns, "web")(g)
			g.Expect(h.Spec.ScaleTargetRef.Kind).To(Equal("MyApp"), "the user's HPA is left untouched")
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			// The hand-over of the count writes the Deployment twice; the status above may come
			// from the first write.
			keepRolledOut(g, ns, "web")
			a := getMyApp(ns, "web")(g)
			g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, a, examplev1.ConditionDegraded).Reason).To(Equal(examplev1.ReasonChildNotOwned))
		}).Should(Succeed())
		Consistently(replicasOf(ns, "web"), "3s").Should(HaveValue(Equal(int32(3))))

		By("and while it lasts, no autoscaler moves the Deployment: the user's HPA asking for 4 moves spec.replicas only")
		updateOwnAutoscaler(ns, "web", 4, 4)
		Eventually(func(g Gomega) *int32 { return getMyApp(ns, "web")(g).Spec.Replicas }).Should(HaveValue(Equal(int32(4))))
		Consistently(replicasOf(ns, "web"), "3s").Should(HaveValue(Equal(int32(3))))

		By("turning spec.autoScaling off again ends the alarm, and the user's HPA drives the Deployment")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.AutoScaling = nil })
		Eventually(replicasOf(ns, "web")).Should(HaveValue(Equal(int32(4))))
		Eventually(func(g Gomega) {
			g.Expect(condition(g, getMyApp(ns, "web")(g), examplev1.ConditionDegraded).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())
	})

	It("after the operator's autoscaler: the hand-over keeps its count while spec.replicas stays at 1", func() {
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Spec.Replicas = nil
			a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptrTo(int32(5)), MaxReplicas: ptrTo(int32(5))}
		})
		Eventually(replicasOf(ns, "web")).Should(HaveValue(Equal(int32(5))))

		By("turning spec.autoScaling off with replicas at 1, then adding the user's HPA, range [1, 3]")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.AutoScaling.Enabled = false })
		expectKept(ns, "web", 5)
		createOwnAutoscaler(ns, "web", 1, 3)
		Eventually(func(g Gomega) {
			h := getHPA(ns, "web")(g)
			g.Expect(autoscalerCondition(h, autoscalingv2.AbleToScale)).To(Equal(corev1.ConditionTrue))
		}).Should(Succeed())

		By("the HPA sees spec.replicas 1, within its range, and leaves it: the Deployment keeps the hand-over's 5")
		Consistently(func(g Gomega) {
			g.Expect(getMyApp(ns, "web")(g).Spec.Replicas).To(HaveValue(Equal(int32(1))))
			g.Expect(getDeployment(ns, "web")(g).Spec.Replicas).To(HaveValue(Equal(int32(5))))
		}, "3s").Should(Succeed())

		By("the first count the HPA sets other than 1 ends the hand-over")
		updateOwnAutoscaler(ns, "web", 2, 3)
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			g.Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(2))))
			g.Expect(d.Annotations).To(HaveKeyWithValue(desired.AnnotationReplicas, "spec"))
		}).Should(Succeed())
	})
})

// autoscalerControllerLog is the log of the kube-controller-manager startAutoscalerController runs.
var autoscalerControllerLog string

// startAutoscalerController runs kube-controller-manager against the suite's API server with
// the HorizontalPodAutoscaler controller alone, until the container's specs have run. `make
// test` builds it beside kube-apiserver and etcd, in KUBEBUILDER_ASSETS.
func startAutoscalerController() {
	bin := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kube-controller-manager")
	_, err := os.Stat(bin)
	Expect(err).NotTo(HaveOccurred(), "these stories need kube-controller-manager beside kube-apiserver: run them with `make test`")
	user, err := testEnv.ControlPlane.AddUser(envtest.User{Name: "kube-controller-manager", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	kubeconfig, err := user.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	dir, err := os.MkdirTemp("", "own-autoscaler-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	path := filepath.Join(dir, "kubeconfig")
	Expect(os.WriteFile(path, kubeconfig, 0o600)).To(Succeed())

	// A sync period of 1 s (the default is 15 s) lets a story see several of the HPA's looks
	// at the MyApp in a few seconds.
	p, err := testutil.StartProcess("kube-controller-manager", filepath.Join(dir, "kube-controller-manager.log"), bin, nil,
		"--kubeconfig="+path, "--controllers=horizontal-pod-autoscaler-controller",
		"--leader-elect=false", "--secure-port=0", "--use-service-account-credentials=false",
		"--horizontal-pod-autoscaler-sync-period=1s")
	Expect(err).NotTo(HaveOccurred())
	autoscalerControllerLog = p.Log
	DeferCleanup(func() {
		p.Signal(syscall.SIGTERM)
		Eventually(p.Exited()).WithTimeout(30 * time.Second).Should(BeClosed())
	})
}

// createOwnAutoscaler creates, as the user would, an autoscaling/v2 HPA named name that targets
// the MyApp web through its scale subresource, with the given range and a CPU metric.
func createOwnAutoscaler(ns, name string, minReplicas, maxReplicas int32) {
	h := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "example.com/v1", Kind: "MyApp", Name: "web"},
			MinReplicas:    &minReplicas,
			MaxReplicas:    maxReplicas,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptrTo(int32(70))}}}},
		},
	}
	Expect(k8s.Create(suiteCtx, h)).To(Succeed())
}

// updateOwnAutoscaler changes the range of the user's HPA.
func updateOwnAutoscaler(ns, name string, minReplicas, maxReplicas int32) {
	Eventually(func(g Gomega) {
		h := getHPA(ns, name)(g)
		h.Spec.MinReplicas, h.Spec.MaxReplicas = &minReplicas, maxReplicas
		g.Expect(k8s.Update(suiteCtx, h)).To(Succeed())
	}).Should(Succeed())
}

// autoscalerCondition is the status of the HPA's condition of that type ("" when missing).
func autoscalerCondition(h *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType) corev1.ConditionStatus {
	for _, c := range h.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

// scaleOf reads the MyApp's scale subresource, as the HPA controller does.
func scaleOf(g Gomega, ns, name string) *autoscalingv1.Scale {
	scale := &autoscalingv1.Scale{}
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	g.Expect(k8s.SubResource("scale").Get(suiteCtx, app, scale)).To(Succeed())
	return scale
}

// scaleMyApp scales the MyApp through its scale subresource, as `kubectl scale myapp/<name>` does.
func scaleMyApp(ns, name string, replicas int32) {
	Eventually(func(g Gomega) {
		app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
		g.Expect(k8s.SubResource("scale").Update(suiteCtx, app, client.WithSubResourceBody(scale),
			client.FieldOwner("kubectl-scale"))).To(Succeed())
	}).Should(Succeed())
}

// expectStatus checks that the MyApp's status reports count pods of the current spec, its
// selector for the scale subresource, and Ready with nothing wrong.
func expectStatus(ns, name string, count int32) func(Gomega) {
	return func(g Gomega) {
		a := getMyApp(ns, name)(g)
		g.Expect(a.Status.ObservedGeneration).To(Equal(a.Generation))
		g.Expect(a.Status.Replicas).To(Equal(count))
		g.Expect(a.Status.ReadyReplicas).To(Equal(count))
		g.Expect(a.Status.Selector).To(Equal("myapp.example.com/name=" + name))
		g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		for _, typ := range []string{examplev1.ConditionReconciling, examplev1.ConditionStalled, examplev1.ConditionDegraded} {
			g.Expect(condition(g, a, typ).Status).To(Equal(metav1.ConditionFalse), typ)
		}
	}
}

// expectSettled checks that, across several of the HPA's syncs (1 s) and the operator's
// resyncs (resyncPeriod), nobody writes the MyApp's spec or the Deployment's: the count stays.
func expectSettled(app *examplev1.MyApp, count int32) {
	before := getMyApp(app.Namespace, app.Name)(Default)
	d := getDeployment(app.Namespace, app.Name)(Default)
	Expect(before.Spec.Replicas).To(HaveValue(Equal(count)))
	Expect(d.Spec.Replicas).To(HaveValue(Equal(count)))
	Consistently(func(g Gomega) {
		g.Expect(getMyApp(app.Namespace, app.Name)(g).Generation).To(Equal(before.Generation))
		g.Expect(getDeployment(app.Namespace, app.Name)(g).Generation).To(Equal(d.Generation))
	}, 2*resyncPeriod+time.Second, 200*time.Millisecond).Should(Succeed())
}

// applyAsGitOps server-side applies the MyApp web with the given spec, as Flux or Argo CD
// would, for the suite's manager, and returns the MyApp as stored.
func applyAsGitOps(ns string, spec map[string]any) *examplev1.MyApp {
	const name = "web"
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "example.com/v1", "kind": "MyApp",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     spec,
	})
	Expect(err).NotTo(HaveOccurred())
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	Expect(k8s.Patch(suiteCtx, app, client.RawPatch(types.ApplyPatchType, raw),
		client.FieldOwner("gitops"), client.ForceOwnership)).To(Succeed(), "applying MyApp %s", name)
	return app
}
