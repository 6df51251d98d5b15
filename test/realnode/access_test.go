package realnode

import (
	"net/url"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// The real node enforces NetworkPolicies (localcluster --network-policy runs kube-router's
// policy controller, hack/tools/netpol), so an access policy is proven by what it refuses:
// a client is a pod of the test app asked, through its own Service, to call the guarded app
// (`/call`), and the edge is Traefik's pod. Requests from the node itself (this test, the
// kubelet's probes) are always allowed, as NetworkPolicy implementations allow them.
var _ = Describe("Access policies on a real node that enforces NetworkPolicies", Ordered, Label("realnode", "access"), func() {
	BeforeAll(func() {
		deployOperatorAgain()
		withGatewayAPI()
		ensureGateway()
	})

	It("serves the apps and the edge the policy names, through the Service and through Traefik, and refuses every other pod", func() {
		const host = "guarded.example.com"
		ns, clients := newNamespace(), newNamespace()
		image := appImage + ":" + appVersions[0]
		newApp := func(ns, name string) *examplev1.MyApp {
			return &examplev1.MyApp{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec:       examplev1.MyAppSpec{Image: image, Replicas: ptr.To[int32](1), Port: ptr.To[int32](appPort)},
			}
		}
		guarded := newApp(ns, "api")
		guarded.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{host},
			Gateway: &examplev1.GatewayReference{Namespace: traefikNamespace, Name: gatewayName}}
		// Traefik's namespace is left out first: an implementation lets a connection it
		// allowed go on (conntrack), and Traefik keeps its connections to a backend open, so a
		// refusal of the edge is shown before it ever reached the app.
		guarded.Spec.AccessPolicy = &examplev1.AccessPolicy{Inbound: &examplev1.AccessRules{
			Apps: []examplev1.AppReference{{Namespace: examplev1.NamespaceName(clients), Name: "friend"}},
		}}
		friend, stranger, neighbour := newApp(clients, "friend"), newApp(clients, "stranger"), newApp(ns, "neighbour")
		for _, app := range []*examplev1.MyApp{guarded, friend, stranger, neighbour} {
			Expect(k8s.Create(ctx, app)).To(Succeed())
		}
		for _, app := range []*examplev1.MyApp{guarded, friend, stranger, neighbour} {
			expectReadyAndAnswering(app.Namespace, app.Name, appVersions[0], 1)
		}
		target := serviceURL(ns, guarded.Name)
		// callFrom asks a client app's pod to GET the guarded app's Service, and returns what
		// the client got ("200 <body>"), or the client's error (502: refused or timed out).
		callFrom := func(client *examplev1.MyApp) (string, error) {
			return httpGet(serviceURL(client.Namespace, client.Name) + "call?url=" + url.QueryEscape(target))
		}
		// callErr is callFrom's error alone: Eventually matches the error of a function that
		// returns nothing else.
		callErr := func(client *examplev1.MyApp) error { _, err := callFrom(client); return err }
		served, refused := HavePrefix("200 myapp test app "+appVersions[0]), MatchError(ContainSubstring("502"))

		By("the app the policy names is served through the Service; another app of its namespace, and an app of the guarded app's own namespace, are refused")
		Eventually(callFrom).WithArguments(friend).Should(served)
		Eventually(callErr).WithArguments(stranger).Should(refused)
		Eventually(callErr).WithArguments(neighbour).Should(refused)
		Expect(callFrom(friend)).To(served, "the allowed client is still served beside the refused ones")

		By("Traefik's namespace is not named: the edge routes the host, and its requests are refused")
		edge := traefikURL()
		Eventually(func() error { _, err := answerFrom(edge, host); return err }).Should(MatchError(ContainSubstring("502")))

		By("the policy names Traefik's namespace: the edge serves the host, and the named app is still served")
		updateSpec(guarded, func(s *examplev1.MyAppSpec) {
			s.AccessPolicy.Inbound.Namespaces = []examplev1.NamespaceName{traefikNamespace}
		})
		Eventually(answerFrom).WithArguments(edge, host).Should(HavePrefix("myapp test app " + appVersions[0]))
		Expect(callFrom(friend)).To(served)

		By("ownNamespace: the neighbour is served; the stranger is still refused")
		updateSpec(guarded, func(s *examplev1.MyAppSpec) { s.AccessPolicy.Inbound.OwnNamespace = true })
		Eventually(callFrom).WithArguments(neighbour).Should(served)
		Expect(callErr(stranger)).To(refused)

		By("the policy removed: every pod is served again, so the refusals were the policy's")
		updateSpec(guarded, func(s *examplev1.MyAppSpec) { s.AccessPolicy = nil })
		Eventually(callFrom).WithArguments(stranger).Should(served)
	})
})
