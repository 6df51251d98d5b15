package controller

import (
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/hostclaims"
)

// ingressHosts are the hosts of the MyApp's Ingress, in its order.
func ingressHosts(g Gomega, ns, name string) []string {
	rules := getIngress(ns, name)(g).Spec.Rules
	hosts := make([]string, 0, len(rules))
	for _, r := range rules {
		hosts = append(hosts, r.Host)
	}
	return hosts
}

// exposing makes a MyApp exposed at the hosts and path through an Ingress.
func exposing(path string, hosts ...examplev1.Hostname) func(*examplev1.MyApp) {
	return func(a *examplev1.MyApp) { a.Spec.Expose = &examplev1.Expose{Hosts: hosts, Path: path} }
}

var _ = Describe("Hosts belong to someone", func() {
	It("keeps a host with the namespace of its oldest claim: a later MyApp of another namespace is Stalled naming the holder, serves its other hosts, and gets the host once the holder lets it go", func() {
		teamA, teamB := newNamespace(), newNamespace()
		holder := createMyApp(teamA, "shop", exposing("", "shop.claims.test"))
		Eventually(func(g Gomega) {
			g.Expect(ingressHosts(g, teamA, "shop")).To(Equal([]string{"shop.claims.test"}))
			a := getMyApp(teamA, "shop")(g)
			g.Expect(a.Status.Exposure).NotTo(BeNil())
			g.Expect(a.Status.Exposure.Claims).To(HaveLen(1))
			g.Expect(a.Status.Exposure.Claims[0].Host).To(BeEquivalentTo("shop.claims.test"))
			g.Expect(a.Status.Exposure.Claims[0].Path).To(Equal("/"))
		}).Should(Succeed())
		since := getMyApp(teamA, "shop")(Default).Status.Exposure.Claims[0].Since
		holderIngress := getIngress(teamA, "shop")(Default).ResourceVersion

		By("another namespace asking for the host on another path, beside a host of its own")
		claimant := createMyApp(teamB, "shop", exposing("/api", "shop.claims.test", "b.claims.test"))
		Eventually(func(g Gomega) {
			a := getMyApp(teamB, "shop")(g)
			stalled := condition(g, a, examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonHostClaimed))
			g.Expect(stalled.Message).To(ContainSubstring("spec.expose.hosts[0] shop.claims.test is exposed by MyApp " + teamA + "/shop at path / since " +
				since.UTC().Format("2006-01-02T15:04:05Z")))
			g.Expect(ingressHosts(g, teamB, "shop")).To(Equal([]string{"b.claims.test"}), "its other host is served")
			g.Expect(a.Status.Exposure.Claims).To(HaveLen(1))
			g.Expect(a.Status.Exposure.Claims[0].Host).To(BeEquivalentTo("b.claims.test"))
		}).Should(Succeed())
		Eventually(func(g Gomega) int { return countEvents(g, claimant, examplev1.ReasonHostClaimed) }).Should(Equal(1))

		By("the holder unaffected")
		Eventually(func(g Gomega) metav1.ConditionStatus {
			return condition(g, getMyApp(teamA, "shop")(g), examplev1.ConditionStalled).Status
		}).Should(Equal(metav1.ConditionFalse))
		Consistently(func(g Gomega) {
			a := getMyApp(teamA, "shop")(g)
			g.Expect(condition(g, a, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(a.Status.Exposure.Claims[0].Since).To(Equal(since))
			g.Expect(getIngress(teamA, "shop")(g).ResourceVersion).To(Equal(holderIngress))
		}, "2s").Should(Succeed())

		By("a wildcard over the host, asked for by a third namespace: refused too")
		teamC := newNamespace()
		createMyApp(teamC, "edge", exposing("", "*.claims.test"))
		Eventually(func(g Gomega) {
			stalled := condition(g, getMyApp(teamC, "edge")(g), examplev1.ConditionStalled)
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonHostClaimed))
			g.Expect(stalled.Message).To(ContainSubstring("spec.expose.hosts[0] *.claims.test meets "))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(suiteCtx, key(teamC, "edge"), &networkingv1.Ingress{})).NotTo(Succeed(), "no host held: no Ingress")
		}).Should(Succeed())

		By("the holder letting the host go: the claimant that asked first gets it")
		updateMyApp(holder, func(a *examplev1.MyApp) { a.Spec.Expose.Hosts = []examplev1.Hostname{"a.other.test"} })
		Eventually(func(g Gomega) {
			g.Expect(ingressHosts(g, teamB, "shop")).To(ConsistOf("shop.claims.test", "b.claims.test"))
			g.Expect(condition(g, getMyApp(teamB, "shop")(g), examplev1.ConditionStalled).Reason).NotTo(Equal(examplev1.ReasonHostClaimed))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(condition(g, getMyApp(teamC, "edge")(g), examplev1.ConditionStalled).Reason).To(Equal(examplev1.ReasonHostClaimed),
				"now held by the claimant that got it")
		}, "2s").Should(Succeed())
	})

	It("records a claim before the Ingress that serves it", func() {
		ns := newNamespace()
		createMyApp(ns, "first", exposing("", "first.claims.test"))
		// The Ingress is read first: whenever it serves the host, the record it follows was
		// written before, so the MyApp read after it holds the claim.
		served := false
		Consistently(func(g Gomega) {
			ing := &networkingv1.Ingress{}
			if k8s.Get(suiteCtx, key(ns, "first"), ing) != nil || len(ing.Spec.Rules) == 0 {
				return
			}
			served = true
			a := getMyApp(ns, "first")(g)
			g.Expect(a.Status.Exposure).NotTo(BeNil(), "the Ingress serves the host, and the status records no claim")
			g.Expect(a.Status.Exposure.Claims).NotTo(BeEmpty())
		}, "3s", "20ms").Should(Succeed())
		Expect(served).To(BeTrue(), "the Ingress never served the host: nothing was measured")
	})

	It("shares a host within a namespace on other paths, and refuses a second MyApp on the same path", func() {
		ns := newNamespace()
		createMyApp(ns, "web", exposing("/", "team.claims.test"))
		Eventually(func(g Gomega) []string { return ingressHosts(g, ns, "web") }).Should(Equal([]string{"team.claims.test"}))
		createMyApp(ns, "api", exposing("/api", "team.claims.test"))
		Eventually(func(g Gomega) []string { return ingressHosts(g, ns, "api") }).Should(Equal([]string{"team.claims.test"}))
		// The Ingress is applied before the status is written: wait for the status first.
		Eventually(func(g Gomega) metav1.ConditionStatus {
			return condition(g, getMyApp(ns, "api")(g), examplev1.ConditionStalled).Status
		}).Should(Equal(metav1.ConditionFalse))
		Consistently(func(g Gomega) string {
			return condition(g, getMyApp(ns, "api")(g), examplev1.ConditionStalled).Reason
		}, "2s").ShouldNot(Equal(examplev1.ReasonHostClaimed))

		createMyApp(ns, "api2", exposing("/api/", "team.claims.test"))
		Eventually(func(g Gomega) {
			stalled := condition(g, getMyApp(ns, "api2")(g), examplev1.ConditionStalled)
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonHostClaimed))
			g.Expect(stalled.Message).To(ContainSubstring("is exposed by MyApp " + ns + "/api at path /api since"))
		}).Should(Succeed())
	})
})

var _ = Describe("Hosts an administrator allows a namespace (--expose-host-suffixes)", func() {
	It("serves only the hosts under the namespace's suffixes, Stalled naming the field and the suffixes, and a host refused holds nothing against the namespace it belongs to", func() {
		teamA, teamB, teamC := newNamespace(), newNamespace(), newNamespace()
		suffixes, err := hostclaims.ParseSuffixes(teamA + "=a.suffixes.test," + teamC + "=c.suffixes.test,*=shared.suffixes.test")
		Expect(err).NotTo(HaveOccurred())
		sel, err := labels.Parse(unwatchedLabel + "=suffixes")
		Expect(err).NotTo(HaveOccurred())
		startManager(managerOptions{myApps: sel, hostSuffixes: suffixes})
		inStory := func(path string, hosts ...examplev1.Hostname) func(*examplev1.MyApp) {
			return func(a *examplev1.MyApp) {
				a.Labels = map[string]string{unwatchedLabel: "suffixes"}
				exposing(path, hosts...)(a)
			}
		}

		web := createMyApp(teamA, "web", inStory("", "web.a.suffixes.test", "web.c.suffixes.test"))
		Eventually(func(g Gomega) {
			a := getMyApp(teamA, "web")(g)
			stalled := condition(g, a, examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonHostNotAllowed))
			g.Expect(stalled.Message).To(ContainSubstring("spec.expose.hosts[1] web.c.suffixes.test is not allowed: namespace " + teamA +
				" may claim only hosts under a.suffixes.test"))
			g.Expect(ingressHosts(g, teamA, "web")).To(Equal([]string{"web.a.suffixes.test"}), "its allowed host is served")
			g.Expect(a.Status.Exposure.Claims).To(HaveLen(1), "the host refused is not recorded")
		}).Should(Succeed())
		Eventually(func(g Gomega) int { return countEvents(g, web, examplev1.ReasonHostNotAllowed) }).Should(Equal(1))

		By("the namespace the host is under asking for it later: it gets it")
		createMyApp(teamC, "web", inStory("", "web.c.suffixes.test"))
		Eventually(func(g Gomega) []string { return ingressHosts(g, teamC, "web") }).Should(Equal([]string{"web.c.suffixes.test"}))
		Expect(condition(Default, getMyApp(teamC, "web")(Default), examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))

		By("a namespace the flag does not name: the suffixes of *; a wildcard wider than them is refused")
		createMyApp(teamB, "web", inStory("", "web.shared.suffixes.test", "*.suffixes.test"))
		Eventually(func(g Gomega) {
			stalled := condition(g, getMyApp(teamB, "web")(g), examplev1.ConditionStalled)
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonHostNotAllowed))
			g.Expect(stalled.Message).To(ContainSubstring("spec.expose.hosts[1] *.suffixes.test is not allowed"))
			g.Expect(ingressHosts(g, teamB, "web")).To(Equal([]string{"web.shared.suffixes.test"}))
		}).Should(Succeed())

		By("the host dropped: no longer Stalled")
		updateMyApp(web, func(a *examplev1.MyApp) { a.Spec.Expose.Hosts = a.Spec.Expose.Hosts[:1] })
		Eventually(func(g Gomega) string {
			return condition(g, getMyApp(teamA, "web")(g), examplev1.ConditionStalled).Reason
		}).ShouldNot(Equal(examplev1.ReasonHostNotAllowed))
	})
})

var _ = Describe("A host claim across a manager restart", func() {
	It("keeps a claim recorded before the Ingress could be applied: after the restart the holder serves it, and a claimant that came meanwhile is refused", func() {
		teamA, teamB := newNamespace(), newNamespace()
		sel, err := labels.Parse(unwatchedLabel + "=claims-restart")
		Expect(err).NotTo(HaveOccurred())
		inStory := func(a *examplev1.MyApp) {
			a.Labels = map[string]string{unwatchedLabel: "claims-restart"}
			exposing("", "restart.claims.test")(a)
		}
		// The first manager stops while it applies the Ingress: the API server answers none of
		// its writes of Ingresses until the manager stops, so nothing the reconcile would write
		// after the apply is written.
		holdIngresses := func(rt http.RoundTripper) http.RoundTripper {
			return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
				if req.Method != http.MethodGet && strings.Contains(req.URL.Path, "/ingresses") {
					<-req.Context().Done()
					return nil, req.Context().Err()
				}
				return rt.RoundTrip(req)
			})
		}
		stop := startManager(managerOptions{myApps: sel, wrap: holdIngresses})
		createMyApp(teamA, "shop", inStory)
		Eventually(func(g Gomega) {
			a := getMyApp(teamA, "shop")(g)
			g.Expect(a.Status.Exposure).NotTo(BeNil())
			g.Expect(a.Status.Exposure.Claims).To(HaveLen(1))
		}).Should(Succeed())
		since := getMyApp(teamA, "shop")(Default).Status.Exposure.Claims[0].Since
		Expect(apierrors.IsNotFound(k8s.Get(suiteCtx, key(teamA, "shop"), &networkingv1.Ingress{}))).To(BeTrue(),
			"the first manager applied the Ingress: the restart falls after the apply, not between")
		stop()

		By("a claimant of another namespace created while no manager runs")
		createMyApp(teamB, "shop", inStory)
		startManager(managerOptions{myApps: sel})
		Eventually(func(g Gomega) {
			g.Expect(ingressHosts(g, teamA, "shop")).To(Equal([]string{"restart.claims.test"}))
			stalled := condition(g, getMyApp(teamB, "shop")(g), examplev1.ConditionStalled)
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonHostClaimed))
			g.Expect(stalled.Message).To(ContainSubstring("is exposed by MyApp " + teamA + "/shop"))
		}).Should(Succeed())
		Expect(getMyApp(teamA, "shop")(Default).Status.Exposure.Claims[0].Since).To(Equal(since), "the decision recorded is kept, not made again")
		Expect(k8s.Get(suiteCtx, key(teamB, "shop"), &networkingv1.Ingress{})).NotTo(Succeed(), "the claimant has no Ingress")
	})
})
