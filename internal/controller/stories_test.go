package controller

import (
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/status"
	"github.com/example/myapp-operator/internal/testutil"
)

// Stories of what a platform team relies on beyond the basics.
var _ = Describe("A MyApp in production", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	readyIs := func(want metav1.ConditionStatus) func(Gomega) {
		return func(g Gomega) {
			g.Expect(condition(g, getMyApp(ns, "web")(g), examplev1.ConditionReady).Status).To(Equal(want))
		}
	}

	It("sends no request at all for a reconcile with nothing to do", func() {
		createIngressClass("public")
		createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MaxReplicas: ptrTo(int32(4))}
			a.Spec.PodDisruptionBudget = &examplev1.PodDisruptionBudgetSpec{MaxUnavailable: ptrTo(intstr.FromInt32(1))}
			a.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"web.stories.test", "*.stories.test"}, Path: "/web",
				TLS: &examplev1.ExposeTLS{SecretName: "web-tls"}, IngressClassName: ptrTo("public")}
		})
		Eventually(getHPA(ns, "web")).Should(Not(BeNil()))
		Eventually(getIngress(ns, "web")).Should(Not(BeNil()))
		rollOut(ns, "web")
		Eventually(readyIs(metav1.ConditionTrue)).Should(Succeed())

		By("letting the writes settle, then counting the requests of reconciles in a window with resyncs")
		expectQuietThroughResyncs(ns)
		n, reconciles := managerRequests.count(), reconcileCount()

		By("a child status change that calls for nothing: a Deployment condition's heartbeat")
		d := getDeployment(ns, "web")(Default)
		d.Status.Conditions[0].LastUpdateTime = metav1.NewTime(time.Now().Add(time.Second))
		Expect(k8s.Status().Update(suiteCtx, d)).To(Succeed())
		Consistently(func() []string { return managerRequests.since(n, ns) }, 3*resyncPeriod, 200*time.Millisecond).Should(BeEmpty())
		Expect(reconcileCount()).To(BeNumerically(">", reconciles), "no reconcile ran in the window")
	})

	It("reconciles every valid edge case of the API, with no problem reported", func() {
		for _, tc := range testutil.ValidMyApps {
			app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.Name}}
			Expect(json.Unmarshal([]byte(tc.Spec), &app.Spec)).To(Succeed(), tc.Name)
			if e := app.Spec.Expose; e != nil && e.IngressClassName != nil {
				// A class that does not exist makes the MyApp Stalled (IngressClassNotFound).
				createIngressClass(*e.IngressClassName)
			}
			Expect(k8s.Create(suiteCtx, app)).To(Succeed(), tc.Name)
		}
		for _, tc := range testutil.ValidMyApps {
			Eventually(func(g Gomega) {
				a := getMyApp(ns, tc.Name)(g)
				g.Expect(a.Status.ObservedGeneration).To(Equal(a.Generation))
				// A MyApp exposed through a Gateway is Stalled while the Gateway API is not
				// installed, which depends on when the story that installs it ran.
				for _, typ := range []string{examplev1.ConditionStalled, examplev1.ConditionDegraded} {
					c := condition(g, a, typ)
					if e := a.Spec.Expose; e != nil && e.Gateway != nil && c.Status == metav1.ConditionTrue &&
						c.Reason == examplev1.ReasonGatewayAPINotInstalled {
						continue
					}
					// The suite's manager has no Prometheus: a MyApp with canary metric checks
					// says that its next release will wait for one.
					if ca := a.Spec.Canary; ca != nil && ca.Analysis != nil && len(ca.Analysis.Metrics) > 0 &&
						typ == examplev1.ConditionDegraded && c.Status == metav1.ConditionTrue {
						g.Expect(c.Reason).To(Equal(examplev1.ReasonCanaryAnalysisUnavailable))
						continue
					}
					// Optional kinds whose CRDs a story installs, which depends on when it ran: a
					// MyApp that asks cert-manager for its certificate is Stalled while the
					// Certificate CRD is not installed, and one with spec.metrics is Degraded
					// while the PodMonitor CRD is not.
					missing := map[string]bool{}
					if e := a.Spec.Expose; e != nil && e.TLS != nil && e.TLS.IssuerRef != nil {
						missing[examplev1.ReasonCertManagerNotInstalled] = true
					}
					if a.Spec.Metrics != nil && typ == examplev1.ConditionDegraded {
						missing[examplev1.ReasonPrometheusOperatorNotInstalled] = true
					}
					if len(missing) > 0 && c.Status == metav1.ConditionTrue {
						g.Expect(missing).To(HaveKey(c.Reason), c.Message)
						continue
					}
					g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "%s: %s", c.Reason, c.Message)
				}
				g.Expect(getDeployment(ns, tc.Name)(g)).NotTo(BeNil())
				g.Expect(getService(ns, tc.Name)(g)).NotTo(BeNil())
				if e := a.Spec.Expose; e != nil && e.Gateway == nil {
					g.Expect(getIngress(ns, tc.Name)(g)).NotTo(BeNil())
				}
			}).Should(Succeed(), tc.Name)
		}
	})

	It("creates a new MyApp's children with one read and one apply each", func() {
		n := managerRequests.count()
		createMyApp(ns, "web", nil)
		Eventually(func(g Gomega) {
			g.Expect(getMyApp(ns, "web")(g).Status.ObservedGeneration).To(Equal(int64(1)))
		}).Should(Succeed())
		Eventually(getService(ns, "web")).Should(Not(BeNil()))

		By("counting what the reconciles of the new MyApp sent: a read of each child the cache did not hold, then its apply")
		writes := map[string][]string{}
		var reads []string
		for _, r := range managerRequests.since(n, ns) {
			for _, child := range []string{"/deployments/web?", "/services/web?"} {
				switch {
				case strings.HasPrefix(r, "GET ") && strings.Contains(r, child):
					reads = append(reads, child)
				case strings.HasPrefix(r, "PATCH ") && strings.Contains(r, child):
					writes[child] = append(writes[child], r)
				}
			}
		}
		Expect(writes["/deployments/web?"]).To(HaveLen(1))
		Expect(writes["/services/web?"]).To(HaveLen(1))
		// The read before the create is documented behaviour (a GET answered 404); a later
		// reconcile reads a child again only if the cache has not seen it yet.
		Expect(reads).To(ContainElements("/deployments/web?", "/services/web?"))
		Expect(len(reads)).To(BeNumerically("<=", 4))
	})

	It("removes what the spec no longer asks for: env, resources, probes, a budget", func() {
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Spec.Env = []examplev1.EnvVar{{Name: "MODE", Value: ptrTo("prod")}}
			a.Spec.Resources = &examplev1.ResourceRequirements{Limits: map[corev1.ResourceName]examplev1.Quantity{"cpu": "1"}}
			a.Spec.LivenessProbe = &examplev1.Probe{HTTPGet: &examplev1.HTTPGetProbe{Path: "/live"}}
			a.Spec.ReadinessProbe = &examplev1.Probe{HTTPGet: &examplev1.HTTPGetProbe{Path: "/ready"}}
			a.Spec.PodDisruptionBudget = &examplev1.PodDisruptionBudgetSpec{MinAvailable: ptrTo(intstr.FromInt32(1))}
		})
		Eventually(func(g Gomega) {
			c := container(g, getDeployment(ns, "web")(g))
			g.Expect(c.Env).To(HaveLen(1))
			g.Expect(c.Resources.Limits).To(HaveKey(corev1.ResourceCPU))
			g.Expect(c.LivenessProbe.HTTPGet.Path).To(Equal("/live"))
			g.Expect(getPDB(ns, "web")(g).Spec.MinAvailable).To(HaveValue(Equal(intstr.FromInt32(1))))
			g.Expect(getPDB(ns, "web")(g).Spec.UnhealthyPodEvictionPolicy).To(HaveValue(Equal(policyv1.AlwaysAllow)),
				"unready pods may always be evicted, so a drain never hangs on them")
		}).Should(Succeed())

		updateMyApp(app, func(a *examplev1.MyApp) {
			a.Spec.Env, a.Spec.Resources, a.Spec.LivenessProbe, a.Spec.ReadinessProbe, a.Spec.PodDisruptionBudget = nil, nil, nil, nil, nil
		})
		Eventually(func(g Gomega) {
			c := container(g, getDeployment(ns, "web")(g))
			g.Expect(c.Env).To(BeEmpty())
			g.Expect(c.Resources.Limits).To(BeEmpty())
			g.Expect(c.LivenessProbe).To(BeNil())
			g.Expect(c.ReadinessProbe.HTTPGet).To(BeNil())
			g.Expect(c.ReadinessProbe.TCPSocket).NotTo(BeNil(), "back to the default readiness probe")
			g.Expect(apierrors.IsNotFound(k8s.Get(suiteCtx, key(ns, "web"), &policyv1.PodDisruptionBudget{}))).To(BeTrue())
		}).Should(Succeed())
	})

	It("never drops the Deployment to one pod when autoscaling is toggled on, off and on fast", func() {
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(4)) })
		Eventually(func(g Gomega) *int32 { return getDeployment(ns, "web")(g).Spec.Replicas }).Should(HaveValue(Equal(int32(4))))

		// Watch every version of the Deployment the API server stores from here on.
		w, err := k8sWatch.Watch(suiteCtx, &appsv1.DeploymentList{}, client.InNamespace(ns))
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()

		on := func(a *examplev1.MyApp) {
			a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptrTo(int32(2)), MaxReplicas: ptrTo(int32(8))}
		}
		updateMyApp(app, on)
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.AutoScaling.Enabled = false })
		updateMyApp(app, on)
		Eventually(func(g Gomega) {
			g.Expect(getHPA(ns, "web")(g).Spec.MaxReplicas).To(Equal(int32(8)))
			d := getDeployment(ns, "web")(g)
			g.Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(4))))
			g.Expect(ownsReplicas(d)).To(BeFalse())
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			for {
				select {
				case ev := <-w.ResultChan():
					if d, ok := ev.Object.(*appsv1.Deployment); ok {
						g.Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(4))), "a stored version had %v replicas", d.Spec.Replicas)
					}
				default:
					return
				}
			}
		}, "2s").Should(Succeed())
	})

	It("still applies the Deployment, and keeps its counts, while the Service cannot be applied", func() {
		app := createMyApp(ns, "web", nil)
		Eventually(getService(ns, "web")).Should(Not(BeNil()))
		rollOut(ns, "web")
		Eventually(readyIs(metav1.ConditionTrue)).Should(Succeed())

		By("replacing the Service with someone else's, then changing the image")
		var foreign *corev1.Service
		Eventually(func(g Gomega) {
			// The operator may recreate its Service in between; take the name back until it sticks.
			if s := &(corev1.Service{}); k8s.Get(suiteCtx, key(ns, "web"), s) == nil {
				g.Expect(client.IgnoreNotFound(k8s.Delete(suiteCtx, s))).To(Succeed())
			}
			foreign = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
			g.Expect(k8s.Create(suiteCtx, foreign)).To(Succeed())
		}).Should(Succeed())
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })

		Eventually(func(g Gomega) {
			g.Expect(container(g, getDeployment(ns, "web")(g)).Image).To(Equal("nginx:1.28"))
			a := getMyApp(ns, "web")(g)
			g.Expect(condition(g, a, examplev1.ConditionStalled).Reason).To(Equal(examplev1.ReasonChildNotOwned))
			g.Expect(a.Status.ReadyReplicas).To(Equal(int32(2)), "the pods still serve")
			g.Expect(a.Status.AvailableReplicas).To(Equal(int32(2)))
		}).Should(Succeed())
		Expect(getService(ns, "web")(Default).ResourceVersion).To(Equal(foreign.ResourceVersion))
	})

	It("waits for the garbage collector when recreated under the same name", func() {
		old := createMyApp(ns, "web", nil)
		Eventually(getDeployment(ns, "web")).Should(Not(BeNil()))
		Eventually(getService(ns, "web")).Should(Not(BeNil()))
		// envtest runs no garbage collector: the children of the deleted MyApp stay until the
		// test removes them, as the collector would.
		Expect(k8s.Delete(suiteCtx, old)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(suiteCtx, key(ns, "web"), &examplev1.MyApp{})) }).Should(BeTrue())
		app := createMyApp(ns, "web", nil)

		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			g.Expect(condition(g, a, examplev1.ConditionReconciling).Reason).To(Equal(examplev1.ReasonWaitingForPredecessor))
			g.Expect(condition(g, a, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())

		By("playing the garbage collector")
		Expect(k8s.Delete(suiteCtx, getDeployment(ns, "web")(Default))).To(Succeed())
		Expect(k8s.Delete(suiteCtx, getService(ns, "web")(Default))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(metav1.IsControlledBy(getDeployment(ns, "web")(g), app)).To(BeTrue())
			g.Expect(metav1.IsControlledBy(getService(ns, "web")(g), app)).To(BeTrue())
		}).Should(Succeed())
	})

	It("keeps a sidecar and an extra port others added, through a repair of its own port", func() {
		app := createMyApp(ns, "web", nil)
		Eventually(getService(ns, "web")).Should(Not(BeNil()))

		By("a mesh injecting a sidecar and someone adding a Service port")
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers,
				corev1.Container{Name: "mesh-proxy", Image: "proxy:1", Ports: []corev1.ContainerPort{{Name: "mesh", ContainerPort: 15001}}})
			g.Expect(k8s.Update(suiteCtx, d, client.FieldOwner("mesh-injector"))).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			s := getService(ns, "web")(g)
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "metrics", Port: 9100, TargetPort: intstr.FromInt32(9100)})
			g.Expect(k8s.Update(suiteCtx, s, client.FieldOwner("monitoring"))).To(Succeed())
		}).Should(Succeed())

		By("a hand edit of our own port's number, which only the repair can undo")
		editContainerPort(ns, "web", 7070)
		Eventually(func(g Gomega) {
			s := getService(ns, "web")(g)
			s.Spec.Ports[0].Port = 7070
			g.Expect(k8s.Update(suiteCtx, s, client.FieldOwner("someone"))).To(Succeed())
		}).Should(Succeed())

		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			g.Expect(d.Spec.Template.Spec.Containers).To(HaveLen(2))
			g.Expect(d.Spec.Template.Spec.Containers[0].Ports).To(ConsistOf(HaveField("ContainerPort", int32(8080))))
			g.Expect(d.Spec.Template.Spec.Containers[1].Name).To(Equal("mesh-proxy"))
			s := getService(ns, "web")(g)
			g.Expect(s.Spec.Ports).To(ConsistOf(HaveField("Port", int32(8080)), HaveField("Port", int32(9100))))
		}).Should(Succeed())

		By("following the MyApp afterwards, sidecar still there")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			g.Expect(container(g, &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{Containers: d.Spec.Template.Spec.Containers[:1]}}}}).Image).To(Equal("nginx:1.28"))
			g.Expect(d.Spec.Template.Spec.Containers).To(HaveLen(2))
		}).Should(Succeed())
	})

	It("reports pods the Deployment cannot create as Stalled, with what to change and none of the API server's words", func() {
		createMyApp(ns, "web", nil)
		Eventually(getDeployment(ns, "web")).Should(Not(BeNil()))
		msg := `pods "web-5d4b8" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: msg}}}
			g.Expect(k8s.Status().Update(suiteCtx, d)).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			stalled := condition(g, getMyApp(ns, "web")(g), examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonReplicaFailure))
			// The message is built from the condition's reason and the kind of refusal; the
			// pod's name and the admission's wording stay out.
			g.Expect(stalled.Message).To(ContainSubstring("(FailedCreate)"))
			g.Expect(stalled.Message).To(ContainSubstring("Pod Security level refuses the pods"))
			g.Expect(stalled.Message).NotTo(ContainSubstring("web-5d4b8"))
			g.Expect(stalled.Message).NotTo(ContainSubstring("runAsNonRoot != true"))
		}).Should(Succeed())
	})

	It("reports an autoscaler without metrics as Degraded only once that has lasted, with a message of its own", func() {
		createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MaxReplicas: ptrTo(int32(4))}
		})
		rollOut(ns, "web")
		noMetricsSince := func(since time.Time, pod string) {
			Eventually(func(g Gomega) {
				h := getHPA(ns, "web")(g)
				h.Status.Conditions = []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.ScalingActive,
					Status: corev1.ConditionFalse, Reason: "FailedGetResourceMetric",
					Message:            "failed to get cpu utilization: missing request for cpu in container app of Pod " + pod,
					LastTransitionTime: metav1.NewTime(since)}}
				g.Expect(k8s.Status().Update(suiteCtx, h)).To(Succeed())
			}).Should(Succeed())
		}
		degraded := func(g Gomega) metav1.Condition {
			return condition(g, getMyApp(ns, "web")(g), examplev1.ConditionDegraded)
		}

		By("a new autoscaler without metrics: no alarm")
		noMetricsSince(time.Now(), "web-1")
		// The MyApp's first status, which the Consistently below reads, is written once the
		// operator saw the rollout.
		Eventually(func(g Gomega) metav1.ConditionStatus { return degraded(g).Status }).Should(Equal(metav1.ConditionFalse))
		Consistently(func(g Gomega) metav1.ConditionStatus { return degraded(g).Status }, "2s").Should(Equal(metav1.ConditionFalse))

		By("the same a few seconds before the grace ends: Degraded when it ends, with no other event to wake the operator")
		since := time.Now().Add(-status.AutoscalerMetricsGrace + 3*time.Second)
		noMetricsSince(since, "web-1")
		Eventually(func(g Gomega) {
			d := degraded(g)
			g.Expect(d.Reason).To(Equal(examplev1.ReasonAutoscalerUnableToScale))
			g.Expect(d.Message).To(ContainSubstring("FailedGetResourceMetric"))
			g.Expect(d.Message).NotTo(ContainSubstring("web-1"), "the autoscaler's message names a pod")
			a := getMyApp(ns, "web")(g)
			g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, a, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		before := degraded(Default)

		By("another pod named in the autoscaler's message changes nothing")
		noMetricsSince(since, "web-2")
		Consistently(func(g Gomega) metav1.Condition { return degraded(g) }, "2s").Should(Equal(before))
	})

	It("scales to zero and is Ready with 0 of 0", func() {
		createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.Replicas = ptrTo(int32(0)) })
		Eventually(func(g Gomega) *int32 { return getDeployment(ns, "web")(g).Spec.Replicas }).Should(HaveValue(BeZero()))
		rollOut(ns, "web")
		Eventually(readyIs(metav1.ConditionTrue)).Should(Succeed())
	})

	It("reconciles on request and says which request it handled", func() {
		createMyApp(ns, "web", nil)
		Eventually(getDeployment(ns, "web")).Should(Not(BeNil()))
		Eventually(func() error {
			a := getMyApp(ns, "web")(Default)
			a.Annotations = map[string]string{examplev1.ReconcileRequestAnnotation: "2026-11-22T10:00:00Z"}
			return k8s.Update(suiteCtx, a)
		}).Should(Succeed())
		Eventually(func(g Gomega) string { return getMyApp(ns, "web")(g).Status.LastHandledReconcileAt }).Should(Equal("2026-11-22T10:00:00Z"))
	})

	It("says Updated only when a field it owns changed, not at a status write", func() {
		app := createMyApp(ns, "web", nil)
		Eventually(getDeployment(ns, "web")).Should(Not(BeNil()))
		Eventually(func(g Gomega) []string { return eventReasons(g, app) }).Should(ContainElement("Created"))
		rollOut(ns, "web")
		Eventually(readyIs(metav1.ConditionTrue)).Should(Succeed())
		Consistently(func(g Gomega) []string { return eventReasons(g, app) }, "2s").ShouldNot(ContainElement("Updated"))
	})
})

// ownsReplicas tells whether the operator's field manager owns the Deployment's replicas.
func ownsReplicas(d *appsv1.Deployment) bool {
	return testutil.OwnsField(d, FieldOwner, "f:spec", "f:replicas")
}
