package realnode

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/test/traffic"
)

// The stories of a real edge share one container, in order: the first starts without the
// Gateway API and installs it, the second uses it. A failure of one still runs the other.
var _ = Describe("MyApps exposed through a real Gateway API and Ingress implementation (Traefik)", Ordered, ContinueOnFailure, Label("realnode", "expose"), func() {
	BeforeAll(func() { deployOperatorAgain() })

	const host = "shop.example.com"

	It("answers through the Ingress of the cluster's default class while the Gateway API is not installed, then moves to an HTTPRoute of the Gateway and rolls out with a preStop sleep, dropping no request through the edge", func() {
		withoutGatewayAPI()
		ns := newNamespace()
		v1, v2 := appImage+":"+appVersions[0], appImage+":"+appVersions[1]
		app := &examplev1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: examplev1.MyAppSpec{Image: v1, Replicas: ptr.To[int32](2), Port: ptr.To[int32](appPort),
				// The edge drops a pod from its endpoints before the pod stops: Traefik sent
				// requests to an old pod more than 5 s after its deletion in a fresh-clone run
				// (docs/reliability.md, "Flakes found in fresh-clone runs").
				TerminationGracePeriodSeconds: ptr.To[int64](20),
				Lifecycle:                     &examplev1.Lifecycle{PreStop: &examplev1.LifecycleHandler{Sleep: &examplev1.SleepAction{Seconds: 10}}},
				Expose:                        &examplev1.Expose{Hosts: []examplev1.Hostname{host}},
			},
		}
		Expect(k8s.Create(ctx, app)).To(Succeed())
		expectReadyAndAnswering(ns, app.Name, appVersions[0], 2)
		Eventually(func(g Gomega) string { return myApp(g, ns).Status.URL }).Should(Equal("http://" + host + "/"))

		By("the Ingress, of the class the API server gave it, routes the host to the app")
		ingress := &networkingv1.Ingress{}
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: app.Name}, ingress)).To(Succeed())
		Expect(ingress.Spec.IngressClassName).To(Equal(ptr.To("traefik")))
		edge := traefikURL()
		Eventually(answerFrom).WithArguments(edge, host).Should(HavePrefix("myapp test app " + appVersions[0]))
		Expect(traffic.GetHost(edge, "other.example.com")).To(MatchError(ContainSubstring("404")),
			"the edge routes by host: another host is not the app")

		By("the Gateway API installed, the MyApp names a Gateway that does not exist yet: the Ingress stays and serves")
		withGatewayAPI()
		// Traefik restarted with its Gateway provider: the Ingress is served again first.
		Eventually(answerFrom).WithArguments(edge, host).Should(HavePrefix("myapp test app " + appVersions[0]))
		started := time.Now()
		stream := traffic.StartHost(edge, host, perSecond, 5*time.Minute)
		// A story that fails half-way stops its stream before the next one measures.
		DeferCleanup(func() { stream.Stop() })
		updateSpec(app, func(s *examplev1.MyAppSpec) {
			s.Expose.Gateway = &examplev1.GatewayReference{Namespace: traefikNamespace, Name: gatewayName}
		})
		Eventually(getRoute).WithArguments(ns, app.Name).Should(Succeed())
		// No Gateway answers for the route: the MyApp waits for one, not Ready, and keeps its
		// Ingress. (Before the operator's next look at discovery, within 10 s, it may say
		// GatewayAPINotInstalled first.)
		waiting := func(g Gomega) {
			a := myApp(g, ns)
			ready := meta.FindStatusCondition(a.Status.Conditions, examplev1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.ObservedGeneration).To(Equal(a.Generation))
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(examplev1.ReasonWaitingForGateway))
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: app.Name}, &networkingv1.Ingress{})).To(Succeed())
		}
		Eventually(waiting).Should(Succeed())
		Consistently(waiting).WithTimeout(5 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())

		By("the Gateway made: Traefik accepts the route, the MyApp is Ready, and the Ingress goes")
		ensureGateway()
		Eventually(func(g Gomega) {
			a := myApp(g, ns)
			ready := meta.FindStatusCondition(a.Status.Conditions, examplev1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.ObservedGeneration).To(Equal(a.Generation))
			g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "Ready: %s: %s", ready.Reason, ready.Message)
			// Ready through a Gateway means the Gateway accepted the route.
			route := &gatewayv1.HTTPRoute{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: app.Name}, route)).To(Succeed())
			g.Expect(route.Status.Parents).To(ContainElement(HaveField("Conditions",
				ContainElement(And(HaveField("Type", string(gatewayv1.RouteConditionAccepted)), HaveField("Status", metav1.ConditionTrue))))))
			err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: app.Name}, &networkingv1.Ingress{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Ingress is still there: %v", err)
		}).Should(Succeed())

		By("a rollout through the Gateway")
		setImage(app, v2)
		after := expectReadyAndAnswering(ns, app.Name, appVersions[1], 2)
		expectOnlyPods(ns, len(after))
		Eventually(answerFrom).WithArguments(edge, host).Should(HavePrefix("myapp test app " + appVersions[1]))

		expectNoRequestLostAtEdge("traffic through the edge: the move from Ingress to HTTPRoute and a rollout", stream.Stop(), started)
	})

	It("rolls back an image that cannot be pulled, a file and a ConfigMap value that make the new pods crash, dropping no request through the Service or the Gateway, then rolls a good change forward", Label("rollback"), rollsBackUnderTraffic)

	It("keeps a host with the namespace that claimed it first: another namespace's MyApp on a path of it gets no request through Traefik, and is Stalled naming the holder", Label("host-claims"), func() {
		withGatewayAPI() // Traefik serves Ingresses with either provider set
		const claimed = "claims.example.com"
		// Each app says whose it is at /env?name=OWNER; the claimant asks for /env, where
		// Traefik's longest-prefix match would send it every such request.
		exposed := func(ns, path string) {
			Expect(k8s.Create(ctx, &examplev1.MyApp{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
				Spec: examplev1.MyAppSpec{Image: appImage + ":" + appVersions[0], Replicas: ptr.To[int32](1), Port: ptr.To[int32](appPort),
					Env:    []examplev1.EnvVar{{Name: "OWNER", Value: ptr.To(ns)}},
					Expose: &examplev1.Expose{Hosts: []examplev1.Hostname{claimed}, Path: path}},
			})).To(Succeed())
		}
		teamA, teamB := newNamespace(), newNamespace()
		exposed(teamA, "/")
		expectReadyAndAnswering(teamA, "web", appVersions[0], 1)
		owner := traefikURL() + "env?name=OWNER"
		Eventually(answerFrom).WithArguments(owner, claimed).Should(Equal(teamA), "the holder answers every path of its host")

		By("another namespace asking for the host's /env")
		exposed(teamB, "/env")
		// The claimant's pod is up and would answer: only the claim keeps the requests from it.
		Eventually(func(g Gomega) int32 {
			d := &appsv1.Deployment{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: teamB, Name: "web"}, d)).To(Succeed())
			return d.Status.AvailableReplicas
		}).Should(Equal(int32(1)))
		Consistently(answerFrom).WithArguments(owner, claimed).WithTimeout(10*time.Second).WithPolling(250*time.Millisecond).
			Should(Equal(teamA), "a request of the claimed path reaches the holder, never the claimant")
		Eventually(func(g Gomega) {
			stalled := meta.FindStatusCondition(myApp(g, teamB).Status.Conditions, examplev1.ConditionStalled)
			g.Expect(stalled).NotTo(BeNil())
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonHostClaimed))
			g.Expect(stalled.Message).To(ContainSubstring("spec.expose.hosts[0] " + claimed + " is exposed by MyApp " + teamA + "/web"))
		}).Should(Succeed())
		err := k8s.Get(ctx, types.NamespacedName{Namespace: teamB, Name: "web"}, &networkingv1.Ingress{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the claimant has an Ingress: %v", err)
		holder := meta.FindStatusCondition(myApp(Default, teamA).Status.Conditions, examplev1.ConditionReady)
		Expect(holder).To(HaveField("Status", metav1.ConditionTrue), "the holder is unaffected")
	})

	It("asks cert-manager for the certificate of its hosts, is Ready once cert-manager's own controllers issued it, and Traefik serves HTTPS with it to a client that verifies it against the issuer's CA", Label("certificates"), servesIssuedCertificate)
})

// getRoute fails unless the namespace holds the HTTPRoute of that name.
func getRoute(ns, name string) error {
	return k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &gatewayv1.HTTPRoute{})
}

// answerFrom asks the edge for host once and returns the answer's body.
func answerFrom(edge, host string) (string, error) {
	body, err := httpGetHost(edge, host)
	return strings.TrimSpace(body), err
}
