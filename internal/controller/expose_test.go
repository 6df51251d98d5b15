package controller

import (
	"path/filepath"
	"sync/atomic"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmetav1 "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/status"
	"github.com/example/myapp-operator/internal/testutil"
)

var (
	getIngress = get[networkingv1.Ingress]
	getRoute   = get[gatewayv1.HTTPRoute]
)

// The Gateway API is not installed when the suite starts: the operator must start and work
// without it. These stories install its HTTPRoute CRD half-way, in order; no other story
// depends on it.
var _ = Describe("Exposing a MyApp", Ordered, func() {
	var ns string
	BeforeAll(func() { ns = newNamespace() })
	// The Gateway the stories attach to serves every story after the one that makes it.
	AfterAll(func() {
		err := k8s.Delete(suiteCtx, &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: gatewayClassOf(ns, "public")}})
		if !meta.IsNoMatchError(err) {
			Expect(client.IgnoreNotFound(err)).To(Succeed())
		}
	})

	expectGone := func(obj func(Gomega)) {
		Eventually(func(g Gomega) { obj(g) }).Should(Succeed())
	}

	It("makes an Ingress to its Service and says where the app is reached, and Ready does not wait for the Ingress", func() {
		createMyApp(ns, "shop", func(a *examplev1.MyApp) {
			a.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"*.shop.example.com", "shop.example.com"},
				Path: "/store", TLS: &examplev1.ExposeTLS{SecretName: "shop-tls"}}
		})
		Eventually(func(g Gomega) {
			ing := getIngress(ns, "shop")(g)
			g.Expect(ing.Spec.IngressClassName).To(BeNil(), "no class named: the cluster's default")
			g.Expect(ing.Spec.Rules).To(HaveLen(2))
			for i, host := range []string{"*.shop.example.com", "shop.example.com"} {
				rule := ing.Spec.Rules[i]
				g.Expect(rule.Host).To(Equal(host))
				g.Expect(rule.HTTP.Paths).To(HaveLen(1))
				p := rule.HTTP.Paths[0]
				g.Expect(p.Path).To(Equal("/store"))
				g.Expect(*p.PathType).To(Equal(networkingv1.PathTypePrefix))
				g.Expect(p.Backend.Service.Name).To(Equal("shop"))
				g.Expect(p.Backend.Service.Port.Number).To(BeEquivalentTo(desired.DefaultPort))
			}
			g.Expect(ing.Spec.TLS).To(ConsistOf(networkingv1.IngressTLS{
				Hosts: []string{"*.shop.example.com", "shop.example.com"}, SecretName: "shop-tls"}))
			g.Expect(ing.Labels).To(HaveKeyWithValue(desired.LabelManagedBy, desired.ManagedBy))
			g.Expect(metav1.GetControllerOf(ing).Name).To(Equal("shop"))
		}).Should(Succeed())
		rollOut(ns, "shop")
		Eventually(func(g Gomega) {
			app := getMyApp(ns, "shop")(g)
			g.Expect(app.Status.URL).To(Equal("https://shop.example.com/store"), "the first host that is not a wildcard")
			g.Expect(condition(g, app, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())

		By("naming an ingress class")
		updateMyApp(getMyApp(ns, "shop")(Default), func(a *examplev1.MyApp) { a.Spec.Expose.IngressClassName = ptrTo("internal") })
		Eventually(func(g Gomega) {
			g.Expect(getIngress(ns, "shop")(g).Spec.IngressClassName).To(HaveValue(Equal("internal")))
		}).Should(Succeed())
	})

	It("removes the Ingress when the MyApp no longer asks to be exposed", func() {
		updateMyApp(getMyApp(ns, "shop")(Default), func(a *examplev1.MyApp) { a.Spec.Expose = nil })
		expectGone(func(g Gomega) {
			err := k8s.Get(suiteCtx, key(ns, "shop"), &networkingv1.Ingress{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Ingress is still there: %v", err)
		})
		Eventually(func(g Gomega) { g.Expect(getMyApp(ns, "shop")(g).Status.URL).To(BeEmpty()) }).Should(Succeed())
	})

	It("is Stalled while the cluster does not serve the Gateway API, and notices its CRD once installed", func() {
		createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"web.example.com"},
				Gateway: &examplev1.GatewayReference{Name: "public", SectionName: "http"}}
		})
		rollOut(ns, "web")
		Eventually(func(g Gomega) {
			app := getMyApp(ns, "web")(g)
			stalled := condition(g, app, examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonGatewayAPINotInstalled))
			g.Expect(stalled.Message).To(ContainSubstring("Gateway " + ns + "/public"))
			g.Expect(condition(g, app, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(app.Status.URL).To(BeEmpty())
		}).Should(Succeed())
		Expect(k8s.Get(suiteCtx, key(ns, "web"), &networkingv1.Ingress{})).NotTo(Succeed(), "a Gateway was asked for: no Ingress")

		By("installing the Gateway API's CRDs, with the operator running, and a Gateway of a class")
		crd, err := testutil.HTTPRouteCRD()
		Expect(err).NotTo(HaveOccurred())
		// The Gateways' and GatewayClasses' first: the operator reads them once it finds HTTPRoutes.
		dir := filepath.Dir(crd)
		_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{ErrorIfPathMissing: true, MaxTime: crdServedWithin, Paths: []string{
			filepath.Join(dir, "gateway.networking.k8s.io_gatewayclasses.yaml"), filepath.Join(dir, "gateway.networking.k8s.io_gateways.yaml")}})
		Expect(err).NotTo(HaveOccurred())
		createGateway(ns, "public", gatewayController)
		_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{crd}, ErrorIfPathMissing: true, MaxTime: crdServedWithin})
		Expect(err).NotTo(HaveOccurred())
		// The operator looks again within optionalAPILookInterval; nothing about the MyApp changes.
		Eventually(func(g Gomega) {
			route := getRoute(ns, "web")(g)
			g.Expect(route.Spec.ParentRefs).To(HaveLen(1))
			parent := route.Spec.ParentRefs[0]
			g.Expect(*parent.Namespace).To(Equal(gatewayv1.Namespace(ns)))
			g.Expect(parent.Name).To(Equal(gatewayv1.ObjectName("public")))
			g.Expect(*parent.SectionName).To(Equal(gatewayv1.SectionName("http")))
			g.Expect(route.Spec.Hostnames).To(ConsistOf(gatewayv1.Hostname("web.example.com")))
			g.Expect(route.Spec.Rules).To(HaveLen(1))
			g.Expect(*route.Spec.Rules[0].Matches[0].Path.Value).To(Equal("/"))
			backend := route.Spec.Rules[0].BackendRefs[0]
			g.Expect(backend.Name).To(Equal(gatewayv1.ObjectName("web")))
			g.Expect(*backend.Port).To(BeEquivalentTo(desired.DefaultPort))
			g.Expect(metav1.GetControllerOf(route).Name).To(Equal("web"))
		}).WithTimeout(2 * optionalAPILookInterval).Should(Succeed())

		By("waiting for the Gateway's answer: not Ready, not Stalled")
		Eventually(func(g Gomega) {
			app := getMyApp(ns, "web")(g)
			ready := condition(g, app, examplev1.ConditionReady)
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(examplev1.ReasonWaitingForGateway))
			g.Expect(condition(g, app, examplev1.ConditionReconciling).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, app, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(app.Status.URL).To(Equal("http://web.example.com/"))
		}).Should(Succeed())
	})

	// reportRoute plays the Gateway's controller: it reports the route's current generation
	// Accepted (or not, for reason) on the MyApp's Gateway and listener.
	reportRoute := func(name string, accepted bool, reason string) {
		answer := metav1.ConditionTrue
		if !accepted {
			answer = metav1.ConditionFalse
		}
		reportRouteParents(ns, name, parentEntry{controller: gatewayController, accepted: answer, acceptedReason: reason,
			resolved: metav1.ConditionTrue, resolvedReason: string(gatewayv1.RouteReasonResolvedRefs)})
	}

	It("is Stalled when the Gateway refuses the route, naming its reason, and Ready once it accepts it", func() {
		reportRoute("web", false, string(gatewayv1.RouteReasonNotAllowedByListeners))
		Eventually(func(g Gomega) {
			app := getMyApp(ns, "web")(g)
			stalled := condition(g, app, examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonRouteNotAccepted))
			g.Expect(stalled.Message).To(ContainSubstring("NotAllowedByListeners"))
			g.Expect(eventReasons(g, app)).To(ContainElement(examplev1.ReasonRouteNotAccepted))
		}).Should(Succeed())

		reportRoute("web", true, string(gatewayv1.RouteReasonAccepted))
		Eventually(func(g Gomega) {
			app := getMyApp(ns, "web")(g)
			g.Expect(condition(g, app, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, app, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())

		By("then the route, as the API server defaulted it, reads as carrying the spec: resyncs send nothing")
		expectQuietThroughResyncs(ns)

		By("a new hostname makes a new generation of the route, which waits for the Gateway again")
		updateMyApp(getMyApp(ns, "web")(Default), func(a *examplev1.MyApp) {
			a.Spec.Expose.Hosts = append(a.Spec.Expose.Hosts, "www.example.com")
		})
		Eventually(func(g Gomega) {
			g.Expect(condition(g, getMyApp(ns, "web")(g), examplev1.ConditionReady).Reason).To(Equal(examplev1.ReasonWaitingForGateway))
		}).Should(Succeed())
	})

	It("waits, not Stalled, while the Gateway reports the route's backend missing for a moment, and is Stalled once that lasts", func() {
		// A manager without resyncs: only the recheck at the grace's end can make it Stalled.
		startQuietManager()
		createMyApp(ns, "backend", func(a *examplev1.MyApp) {
			a.Labels = map[string]string{unwatchedLabel: "quiet"}
			a.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"backend.example.com"},
				Gateway: &examplev1.GatewayReference{Name: "public", SectionName: "http"}}
		})
		rollOut(ns, "backend")
		Eventually(getRoute(ns, "backend")).Should(Not(BeNil()))

		By("the Gateway saw the route before the Service: ResolvedRefs False, BackendNotFound, a few seconds of the grace left")
		left := 6 * time.Second
		reportRouteParents(ns, "backend", parentEntry{controller: gatewayController, accepted: metav1.ConditionTrue,
			acceptedReason: string(gatewayv1.RouteReasonAccepted), resolved: metav1.ConditionFalse,
			resolvedReason: string(gatewayv1.RouteReasonBackendNotFound), since: time.Now().Add(left - status.BackendGrace)})
		waiting := func(g Gomega) {
			app := getMyApp(ns, "backend")(g)
			ready := condition(g, app, examplev1.ConditionReady)
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(examplev1.ReasonWaitingForGateway))
			g.Expect(ready.Message).To(ContainSubstring("BackendNotFound"))
			g.Expect(condition(g, app, examplev1.ConditionReconciling).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, app, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		}
		Eventually(waiting).Should(Succeed())
		Consistently(waiting, left/2).Should(Succeed(), "Stalled within the grace")

		By("the backend still missing at the grace's end: Stalled, with no other event to look again")
		Eventually(func(g Gomega) {
			stalled := condition(g, getMyApp(ns, "backend")(g), examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonRouteNotAccepted))
			g.Expect(stalled.Message).To(ContainSubstring("BackendNotFound"))
		}).WithTimeout(left + 10*time.Second).Should(Succeed())

		By("the Gateway resolves it")
		reportRouteParents(ns, "backend", parentEntry{controller: gatewayController, accepted: metav1.ConditionTrue,
			acceptedReason: string(gatewayv1.RouteReasonAccepted), resolved: metav1.ConditionTrue,
			resolvedReason: string(gatewayv1.RouteReasonResolvedRefs)})
		Eventually(func(g Gomega) {
			g.Expect(condition(g, getMyApp(ns, "backend")(g), examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
	})

	It("decides from the entries of the Gateway's own controller: another controller's entry for the same Gateway decides nothing", func() {
		// The route web waits for the Gateway's answer to its new hostname.
		Eventually(func(g Gomega) {
			g.Expect(condition(g, getMyApp(ns, "web")(g), examplev1.ConditionReady).Reason).To(Equal(examplev1.ReasonWaitingForGateway))
		}).Should(Succeed())
		refusedByAnother := parentEntry{controller: otherGatewayController, accepted: metav1.ConditionFalse,
			acceptedReason: string(gatewayv1.RouteReasonNotAllowedByListeners), resolved: metav1.ConditionTrue,
			resolvedReason: string(gatewayv1.RouteReasonResolvedRefs)}
		reportRouteParents(ns, "web", refusedByAnother)
		Consistently(func(g Gomega) {
			app := getMyApp(ns, "web")(g)
			g.Expect(condition(g, app, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(condition(g, app, examplev1.ConditionReady).Reason).To(Equal(examplev1.ReasonWaitingForGateway))
		}, 2*resyncPeriod).Should(Succeed(), "another controller's refusal made the MyApp Stalled")

		By("another controller accepting it does not make it Ready either")
		acceptedByAnother := refusedByAnother
		acceptedByAnother.accepted, acceptedByAnother.acceptedReason = metav1.ConditionTrue, string(gatewayv1.RouteReasonAccepted)
		reportRouteParents(ns, "web", acceptedByAnother)
		Consistently(func(g Gomega) {
			g.Expect(condition(g, getMyApp(ns, "web")(g), examplev1.ConditionReady).Reason).To(Equal(examplev1.ReasonWaitingForGateway))
		}, 2*resyncPeriod).Should(Succeed(), "another controller's acceptance made the MyApp Ready")

		By("the Gateway's own controller accepts it, beside the other's refusal")
		reportRouteParents(ns, "web", refusedByAnother, parentEntry{controller: gatewayController, accepted: metav1.ConditionTrue,
			acceptedReason: string(gatewayv1.RouteReasonAccepted), resolved: metav1.ConditionTrue,
			resolvedReason: string(gatewayv1.RouteReasonResolvedRefs)})
		Eventually(func(g Gomega) {
			app := getMyApp(ns, "web")(g)
			g.Expect(condition(g, app, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, app, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())
	})

	It("moves from the route to an Ingress before it breaks: the route goes once an ingress controller published the Ingress's address", func() {
		class := createIngressClass("stories-public-" + ns)
		updateMyApp(getMyApp(ns, "web")(Default), func(a *examplev1.MyApp) {
			a.Spec.Expose.Gateway, a.Spec.Expose.IngressClassName = nil, ptrTo(class)
		})
		Eventually(func(g Gomega) {
			g.Expect(getIngress(ns, "web")(g).Spec.IngressClassName).To(HaveValue(Equal(class)))
			g.Expect(condition(g, getMyApp(ns, "web")(g), examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
		Consistently(func(g Gomega) { g.Expect(getRoute(ns, "web")(g)).NotTo(BeNil()) }, 2*resyncPeriod).Should(Succeed(),
			"the route serves until an ingress controller serves the Ingress")

		By("playing the ingress controller: it publishes the Ingress's address")
		publishAddress(ns, "web")
		// A controller's proxies may route a moment after it publishes: the route stays MoveGrace more.
		Consistently(func(g Gomega) { g.Expect(getRoute(ns, "web")(g)).NotTo(BeNil()) }, status.MoveGrace/2).Should(Succeed(),
			"the route stays a while after the Ingress got its address")
		Eventually(func(g Gomega) {
			err := k8s.Get(suiteCtx, key(ns, "web"), &gatewayv1.HTTPRoute{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the HTTPRoute is still there: %v", err)
		}).WithTimeout(status.MoveGrace + 20*time.Second).Should(Succeed())
		Expect(condition(Default, getMyApp(ns, "web")(Default), examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
	})

	It("moves from an Ingress to a Gateway before it breaks: the Ingress goes once the Gateway accepted the route", func() {
		updateMyApp(getMyApp(ns, "web")(Default), func(a *examplev1.MyApp) {
			a.Spec.Expose.IngressClassName, a.Spec.Expose.Gateway = nil, &examplev1.GatewayReference{Name: "public", SectionName: "http"}
		})
		Eventually(func(g Gomega) {
			g.Expect(condition(g, getMyApp(ns, "web")(g), examplev1.ConditionReady).Reason).To(Equal(examplev1.ReasonWaitingForGateway))
		}).Should(Succeed())
		Consistently(func(g Gomega) { g.Expect(getIngress(ns, "web")(g)).NotTo(BeNil()) }, 2*resyncPeriod).Should(Succeed(),
			"the Ingress serves until the route does")
		reportRoute("web", true, string(gatewayv1.RouteReasonAccepted))
		// A Gateway may route a moment after it reports: the Ingress stays MoveGrace more.
		Consistently(func(g Gomega) { g.Expect(getIngress(ns, "web")(g)).NotTo(BeNil()) }, status.MoveGrace/2).Should(Succeed(),
			"the Ingress stays a while after the Gateway accepted the route")
		Eventually(func(g Gomega) {
			err := k8s.Get(suiteCtx, key(ns, "web"), &networkingv1.Ingress{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Ingress is still there: %v", err)
		}).WithTimeout(status.MoveGrace + 20*time.Second).Should(Succeed())
	})

	It("moves from the route to an Ingress with a certificate from cert-manager: the route goes only once the certificate is issued", func() {
		crd, err := testutil.CertificateCRD()
		Expect(err).NotTo(HaveOccurred())
		_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{crd}, ErrorIfPathMissing: true, MaxTime: crdServedWithin})
		Expect(err).NotTo(HaveOccurred())
		class := createIngressClass("stories-tls-" + ns)
		updateMyApp(getMyApp(ns, "web")(Default), func(a *examplev1.MyApp) {
			a.Spec.Expose.Gateway, a.Spec.Expose.IngressClassName = nil, ptrTo(class)
			a.Spec.Expose.TLS = &examplev1.ExposeTLS{SecretName: "web-tls", IssuerRef: &examplev1.IssuerReference{Name: "ca"}}
		})
		Eventually(getCertificate(ns, "web")).WithTimeout(2*optionalAPILookInterval + 20*time.Second).Should(Not(BeNil()))
		publishAddress(ns, "web")
		Consistently(func(g Gomega) { g.Expect(getRoute(ns, "web")(g)).NotTo(BeNil()) }, status.MoveGrace+5*time.Second).Should(Succeed(),
			"the route serves until the Ingress serves the certificate, not only an address")

		By("playing cert-manager: the certificate issued")
		reportCertificate(ns, "web",
			cmv1.CertificateCondition{Type: cmv1.CertificateConditionReady, Status: cmmetav1.ConditionTrue, Reason: "Ready", Message: "Certificate is up to date and has not expired"})
		Eventually(func(g Gomega) {
			err := k8s.Get(suiteCtx, key(ns, "web"), &gatewayv1.HTTPRoute{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the HTTPRoute is still there: %v", err)
		}).WithTimeout(status.MoveGrace + 20*time.Second).Should(Succeed())
		Expect(condition(Default, getMyApp(ns, "web")(Default), examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))

		By("back to the Gateway, as the stories after this one expect: the Certificate goes")
		updateMyApp(getMyApp(ns, "web")(Default), func(a *examplev1.MyApp) {
			a.Spec.Expose.IngressClassName, a.Spec.Expose.TLS = nil, nil
			a.Spec.Expose.Gateway = &examplev1.GatewayReference{Name: "public", SectionName: "http"}
		})
		reportRoute("web", true, string(gatewayv1.RouteReasonAccepted))
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(suiteCtx, key(ns, "web"), &cmv1.Certificate{})) }).Should(BeTrue())
		Eventually(func(g Gomega) {
			g.Expect(condition(g, getMyApp(ns, "web")(g), examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
	})

	It("keeps the class an Ingress has when the MyApp names none: the cluster's default at its creation, or the one named before", func() {
		class := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "story-default-" + ns,
			Annotations: map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}},
			Spec: networkingv1.IngressClassSpec{Controller: "example.com/ingress-controller"}}
		Expect(k8s.Create(suiteCtx, class)).To(Succeed())
		DeferCleanup(func() { Expect(k8s.Delete(suiteCtx, class)).To(Succeed()) })
		createMyApp(ns, "classless", func(a *examplev1.MyApp) {
			a.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"classless.example.com"}}
		})
		Eventually(func(g Gomega) {
			g.Expect(getIngress(ns, "classless")(g).Spec.IngressClassName).To(HaveValue(Equal(class.Name)))
		}).Should(Succeed())
		updateMyApp(getMyApp(ns, "classless")(Default), func(a *examplev1.MyApp) { a.Spec.Expose.Path = "/v2" })
		Eventually(func(g Gomega) {
			ing := getIngress(ns, "classless")(g)
			g.Expect(ing.Spec.Rules[0].HTTP.Paths[0].Path).To(Equal("/v2"))
			g.Expect(ing.Spec.IngressClassName).To(HaveValue(Equal(class.Name)), "the apply took the class away")
		}).Should(Succeed())

		By("a class the MyApp named, then left out, stays: the operator owned it, and an apply without it would remove it")
		updateMyApp(getMyApp(ns, "classless")(Default), func(a *examplev1.MyApp) { a.Spec.Expose.IngressClassName = ptrTo("internal") })
		Eventually(func(g Gomega) {
			g.Expect(getIngress(ns, "classless")(g).Spec.IngressClassName).To(HaveValue(Equal("internal")))
		}).Should(Succeed())
		updateMyApp(getMyApp(ns, "classless")(Default), func(a *examplev1.MyApp) { a.Spec.Expose.IngressClassName, a.Spec.Expose.Path = nil, "/v3" })
		Eventually(func(g Gomega) {
			ing := getIngress(ns, "classless")(g)
			g.Expect(ing.Spec.Rules[0].HTTP.Paths[0].Path).To(Equal("/v3"))
			g.Expect(ing.Spec.IngressClassName).To(HaveValue(Equal("internal")), "the apply took the class away")
		}).Should(Succeed())
	})

	It("attaches to the manager's default Gateway a MyApp that names neither a Gateway nor a class", func() {
		sel, err := labels.Parse(unwatchedLabel + "=defaults")
		Expect(err).NotTo(HaveOccurred())
		startManager(managerOptions{myApps: sel, syncPeriod: 10 * time.Hour, exposeDefaults: desired.ExposeDefaults{
			Gateway: &examplev1.GatewayReference{Namespace: "infra", Name: "shared"}, IngressClassName: "unused"}})
		createMyApp(ns, "plain", func(a *examplev1.MyApp) {
			a.Labels = map[string]string{unwatchedLabel: "defaults"}
			a.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"plain.example.com"}}
		})
		Eventually(func(g Gomega) {
			parent := getRoute(ns, "plain")(g).Spec.ParentRefs[0]
			g.Expect(*parent.Namespace).To(Equal(gatewayv1.Namespace("infra")))
			g.Expect(parent.Name).To(Equal(gatewayv1.ObjectName("shared")))
			g.Expect(parent.SectionName).To(BeNil())
		}).Should(Succeed())
		Expect(k8s.Get(suiteCtx, key(ns, "plain"), &networkingv1.Ingress{})).NotTo(Succeed())
	})

	// startClockManager runs a manager of its own, with resyncs, for the MyApps labelled
	// unwatched=label, on a clock the story moves forward by skew: the deadlines are counted
	// from times the API server stores, and a story cannot wait minutes for them.
	startClockManager := func(label string, skew *atomic.Int64) {
		sel, err := labels.Parse(unwatchedLabel + "=" + label)
		Expect(err).NotTo(HaveOccurred())
		startManager(managerOptions{myApps: sel,
			now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	}

	It("is Stalled with GatewayNotResponding once the Gateway has not answered the route for the deadline, naming the Gateway and what to check", func() {
		var skew atomic.Int64
		startClockManager("clock-gateway", &skew)
		createMyApp(ns, "typo", func(a *examplev1.MyApp) {
			a.Labels = map[string]string{unwatchedLabel: "clock-gateway"}
			a.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"typo.example.com"},
				Gateway: &examplev1.GatewayReference{Name: "pubilc"}}
		})
		rollOut(ns, "typo")
		waiting := func(g Gomega) {
			app := getMyApp(ns, "typo")(g)
			g.Expect(condition(g, app, examplev1.ConditionReady).Reason).To(Equal(examplev1.ReasonWaitingForGateway))
			g.Expect(condition(g, app, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		}
		Eventually(waiting).Should(Succeed())
		Consistently(waiting, 2*resyncPeriod).Should(Succeed())

		By("the deadline passed with no answer")
		skew.Store(int64(status.AnswerDeadline))
		Eventually(func(g Gomega) {
			app := getMyApp(ns, "typo")(g)
			stalled := condition(g, app, examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonGatewayNotResponding))
			g.Expect(stalled.Message).To(ContainSubstring("Gateway " + ns + "/pubilc"))
			g.Expect(stalled.Message).To(ContainSubstring("kubectl get gateway -n " + ns + " pubilc"))
			g.Expect(condition(g, app, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(eventReasons(g, app)).To(ContainElement(examplev1.ReasonGatewayNotResponding))
		}).Should(Succeed())

		By("the name fixed: a new generation of the route waits again, and the Gateway accepts it")
		skew.Store(0)
		updateMyApp(getMyApp(ns, "typo")(Default), func(a *examplev1.MyApp) { a.Spec.Expose.Gateway.Name = "public" })
		Eventually(waiting).Should(Succeed())
		reportRouteParents(ns, "typo", parentEntry{controller: gatewayController, accepted: metav1.ConditionTrue,
			acceptedReason: string(gatewayv1.RouteReasonAccepted), resolved: metav1.ConditionTrue,
			resolvedReason: string(gatewayv1.RouteReasonResolvedRefs)})
		Eventually(func(g Gomega) {
			g.Expect(condition(g, getMyApp(ns, "typo")(g), examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
	})

	It("is Stalled with IngressClassNotFound while the class its Ingress names does not exist, and Ready once the class is created", func() {
		// A manager without resyncs: only the watch of IngressClasses can notice the class.
		startQuietManager()
		class := "stories-missing-" + ns
		createMyApp(ns, "classy", func(a *examplev1.MyApp) {
			a.Labels = map[string]string{unwatchedLabel: "quiet"}
			a.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"classy.example.com"}, IngressClassName: ptrTo(class)}
		})
		rollOut(ns, "classy")
		Eventually(func(g Gomega) {
			app := getMyApp(ns, "classy")(g)
			stalled := condition(g, app, examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonIngressClassNotFound))
			g.Expect(stalled.Message).To(ContainSubstring("IngressClass " + class + " does not exist"))
			g.Expect(condition(g, app, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(app.Status.URL).To(Equal("http://classy.example.com/"))
			g.Expect(eventReasons(g, app)).To(ContainElement(examplev1.ReasonIngressClassNotFound))
		}).Should(Succeed())
		Expect(getIngress(ns, "classy")(Default).Spec.IngressClassName).To(HaveValue(Equal(class)), "the Ingress is made all the same")

		By("the class created, say by the ingress controller's chart")
		createIngressClass(class)
		Eventually(func(g Gomega) {
			app := getMyApp(ns, "classy")(g)
			g.Expect(condition(g, app, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(condition(g, app, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
	})

	It("is Degraded, and stays Ready, when no ingress controller has published its Ingress's address by the deadline", func() {
		var skew atomic.Int64
		startClockManager("clock-ingress", &skew)
		class := createIngressClass("stories-unadmitted-" + ns)
		createMyApp(ns, "unadmitted", func(a *examplev1.MyApp) {
			a.Labels = map[string]string{unwatchedLabel: "clock-ingress"}
			a.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"unadmitted.example.com"}, IngressClassName: ptrTo(class)}
		})
		rollOut(ns, "unadmitted")
		Eventually(func(g Gomega) {
			app := getMyApp(ns, "unadmitted")(g)
			g.Expect(condition(g, app, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, app, examplev1.ConditionDegraded).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())

		By("the deadline passed with no address")
		skew.Store(int64(status.AnswerDeadline))
		Eventually(func(g Gomega) {
			app := getMyApp(ns, "unadmitted")(g)
			degraded := condition(g, app, examplev1.ConditionDegraded)
			g.Expect(degraded.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(degraded.Reason).To(Equal(examplev1.ReasonIngressNotAdmitted))
			g.Expect(degraded.Message).To(ContainSubstring("Ingress unadmitted (class " + class + ")"))
			g.Expect(condition(g, app, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue), "no address is no proof nothing serves")
			g.Expect(condition(g, app, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())

		By("playing the ingress controller: it publishes the address")
		publishAddress(ns, "unadmitted")
		Eventually(func(g Gomega) {
			g.Expect(condition(g, getMyApp(ns, "unadmitted")(g), examplev1.ConditionDegraded).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())
	})

	It("splits the route of a canary exactly by its weights, and moves a share only to pods the Services list and a step on only once the Gateway accepted it", func() {
		app := createMyApp(ns, "store", func(a *examplev1.MyApp) {
			a.Spec.Replicas = ptrTo(int32(4))
			a.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"store.example.com"},
				Gateway: &examplev1.GatewayReference{Name: "public", SectionName: "http"}}
			a.Spec.Canary = &examplev1.Canary{Steps: []examplev1.CanaryStep{{SetWeight: ptrTo(int32(20))}, {Pause: &examplev1.CanaryPause{}}}}
		})
		stable := currentReplicaSet(ns, "store")
		rollOut(ns, "store")
		// weights reads the route's backends: each Service's weight.
		weights := func(g Gomega) map[string]int32 {
			route := getRoute(ns, "store")(g)
			g.Expect(route.Spec.Rules).To(HaveLen(1))
			w := map[string]int32{}
			for _, b := range route.Spec.Rules[0].BackendRefs {
				g.Expect(b.Weight).NotTo(BeNil())
				w[string(b.Name)] = *b.Weight
			}
			return w
		}
		step := func(g Gomega) int32 {
			c := getMyApp(ns, "store")(g).Status.Canary
			g.Expect(c).NotTo(BeNil())
			return c.Step
		}

		// backends names the route's backends.
		backends := func(g Gomega) []string {
			route := getRoute(ns, "store")(g)
			g.Expect(route.Spec.Rules).To(HaveLen(1))
			var names []string
			for _, b := range route.Spec.Rules[0].BackendRefs {
				names = append(names, string(b.Name))
			}
			return names
		}

		By("the route moves to the stable pods' Service, which selects the template that serves, only once that Service lists them")
		Eventually(func(g Gomega) {
			g.Expect(getService(ns, "store-stable")(g).Spec.Selector).To(HaveKeyWithValue(appsv1.DefaultDeploymentUniqueLabelKey, stable))
			g.Expect(getService(ns, "store-canary")(g).Spec.Selector).To(HaveKeyWithValue(desired.LabelTrack, desired.TrackCanary))
		}).Should(Succeed())
		Consistently(backends, time.Second, 100*time.Millisecond).Should(Equal([]string{"store"}))
		servePods(ns, "store-stable", podsOf(ns, "store", stable, 4)...)
		Eventually(weights).Should(Equal(map[string]int32{"store-stable": 100, "store-canary": 0}))
		reportRoute("store", true, string(gatewayv1.RouteReasonAccepted))
		Eventually(func(g Gomega) {
			g.Expect(condition(g, getMyApp(ns, "store")(g), examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())

		By("a new image: the canary's pods first, then its weight on the route")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
		Eventually(func(g Gomega) int32 { return *getDeployment(ns, "store-canary")(g).Spec.Replicas }).Should(Equal(int32(1)))
		Consistently(weights, time.Second, 100*time.Millisecond).Should(HaveKeyWithValue("store-canary", int32(0)),
			"no request before the canary's pods are available")
		canaryHash := currentReplicaSet(ns, "store-canary")
		rollOut(ns, "store-canary")
		canaryPods := podsOf(ns, "store-canary", canaryHash, 1)
		Consistently(weights, time.Second, 100*time.Millisecond).Should(HaveKeyWithValue("store-canary", int32(0)),
			"no request before the canary Service lists its available pods")
		servePods(ns, "store-canary", canaryPods...)
		Eventually(weights).Should(Equal(map[string]int32{"store-stable": 80, "store-canary": 20}))

		By("the step waits for the Gateway's word on the route's generation with those weights")
		Consistently(step, 2*time.Second, 200*time.Millisecond).Should(BeZero())
		reportRoute("store", true, string(gatewayv1.RouteReasonAccepted))
		Eventually(step).Should(Equal(int32(1)))
		Eventually(func(g Gomega) string { return getMyApp(ns, "store")(g).Status.Canary.Phase }).Should(Equal("Paused"))

		By("promoted: every request to the canary, then, once the stable pods run its template and serve, back to them")
		controlCanary(app, "promote")
		Eventually(func(g Gomega) int32 { return *getDeployment(ns, "store-canary")(g).Spec.Replicas }).Should(Equal(int32(4)))
		rollOut(ns, "store-canary")
		canaryPods = append(canaryPods, podsOf(ns, "store-canary", canaryHash, 3)...)
		Consistently(weights, time.Second, 100*time.Millisecond).Should(HaveKeyWithValue("store-canary", int32(20)),
			"every request to the canary only once its Service lists all its pods")
		servePods(ns, "store-canary", canaryPods...)
		Eventually(weights).Should(Equal(map[string]int32{"store-stable": 0, "store-canary": 100}))
		Expect(container(Default, getDeployment(ns, "store")(Default)).Image).To(Equal("nginx:1.27"), "the stable pods move only once every request left them")
		reportRoute("store", true, string(gatewayv1.RouteReasonAccepted))
		Eventually(func(g Gomega) string { return container(g, getDeployment(ns, "store")(g)).Image }).Should(Equal("nginx:1.28"))
		promoted := startRolloutOf(ns, "store")
		Consistently(weights, time.Second, 100*time.Millisecond).Should(HaveKeyWithValue("store-canary", int32(100)),
			"the stable pods take requests back only once they run the template")
		rollOut(ns, "store")
		Eventually(func(g Gomega) {
			g.Expect(getService(ns, "store-stable")(g).Spec.Selector).To(HaveKeyWithValue(appsv1.DefaultDeploymentUniqueLabelKey, promoted))
		}).Should(Succeed())
		Consistently(weights, time.Second, 100*time.Millisecond).Should(HaveKeyWithValue("store-canary", int32(100)),
			"the stable pods take requests back only once their Service lists them")
		servePods(ns, "store-stable", podsOf(ns, "store", promoted, 4)...)
		Eventually(weights).Should(Equal(map[string]int32{"store-stable": 100, "store-canary": 0}))
		reportRoute("store", true, string(gatewayv1.RouteReasonAccepted))
		expectCanaryEnded(ns, "store")
	})

	It("says the Gateway API is not installed when its CRD is removed after the operator found it, and makes the route again once it is back", func() {
		createMyApp(ns, "gone", func(a *examplev1.MyApp) {
			a.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"gone.example.com"},
				Gateway: &examplev1.GatewayReference{Name: "public"}}
		})
		rollOut(ns, "gone")
		Eventually(getRoute(ns, "gone")).Should(Not(BeNil()))

		By("removing the HTTPRoute CRD, with the operator running")
		path, err := testutil.HTTPRouteCRD()
		Expect(err).NotTo(HaveOccurred())
		crds := envtest.CRDInstallOptions{Paths: []string{path}, ErrorIfPathMissing: true, MaxTime: crdServedWithin}
		Expect(envtest.UninstallCRDs(cfg, crds)).To(Succeed())
		// The later stories and containers expect the CRD back, even if this one fails.
		DeferCleanup(func() error {
			_, err := envtest.InstallCRDs(cfg, crds)
			return err
		})
		Eventually(func() error {
			crd := &metav1.PartialObjectMetadata{}
			crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
			return k8s.Get(suiteCtx, key("", "httproutes.gateway.networking.k8s.io"), crd)
		}).Should(Satisfy(apierrors.IsNotFound))
		Eventually(func(g Gomega) {
			stalled := condition(g, getMyApp(ns, "gone")(g), examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonGatewayAPINotInstalled))
		}).Should(Succeed())

		By("installing it again")
		_, err = envtest.InstallCRDs(cfg, crds)
		Expect(err).NotTo(HaveOccurred())
		Eventually(getRoute(ns, "gone")).WithTimeout(2 * gatewayAPIRetry).Should(Not(BeNil()))
		Eventually(func(g Gomega) {
			app := getMyApp(ns, "gone")(g)
			g.Expect(condition(g, app, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(condition(g, app, examplev1.ConditionReady).Reason).To(Equal(examplev1.ReasonWaitingForGateway))
		}).Should(Succeed())
	})
})

// crdServedWithin is how long the stories wait for a CRD they install to be served (envtest's
// default is 10 s): under make test-all both cores are busy, and the API server took longer to
// serve the Gateway API's CRDs in a fresh-clone run.
const crdServedWithin = time.Minute

// The controllers of the stories' Gateway's class, and another implementation's.
const (
	gatewayController      = "example.com/gateway-controller"
	otherGatewayController = "other.example.com/gateway-controller"
)

// createGateway makes the Gateway ns/name, of a GatewayClass of its own (gatewayClassOf) whose
// controller is controller, with one listener named http. The namespace keeps the Gateway; the
// caller removes the class.
func createGateway(ns, name, controller string) {
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: gatewayClassOf(ns, name)},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewayv1.GatewayController(controller)}}
	Expect(k8s.Create(suiteCtx, class)).To(Succeed())
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class.Name),
			Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
	Expect(k8s.Create(suiteCtx, gw)).To(Succeed())
}

// gatewayClassOf names the GatewayClass of the Gateway createGateway makes.
func gatewayClassOf(ns, name string) string { return "stories-" + ns + "-" + name }

// createIngressClass makes an IngressClass of that name, removed at the story's end, and
// returns its name.
func createIngressClass(name string) string {
	class := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1.IngressClassSpec{Controller: "example.com/ingress-controller"}}
	Expect(k8s.Create(suiteCtx, class)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(suiteCtx, class))).To(Succeed()) })
	return name
}

// publishAddress plays an ingress controller that serves the Ingress: it publishes its address.
func publishAddress(ns, name string) {
	Eventually(func(g Gomega) {
		ing := getIngress(ns, name)(g)
		ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.10"}}
		g.Expect(k8s.Status().Update(suiteCtx, ing)).To(Succeed())
	}).Should(Succeed())
}

// parentEntry is what one controller reports of a route on its first parent.
type parentEntry struct {
	controller                     string
	accepted, resolved             metav1.ConditionStatus
	acceptedReason, resolvedReason string
	// since is the conditions' lastTransitionTime (now when zero).
	since time.Time
}

// reportRouteParents plays the Gateway's controllers: each entry reports the route's current
// generation on its first parent, and the entries replace what the route's status held.
func reportRouteParents(ns, name string, entries ...parentEntry) {
	Eventually(func(g Gomega) {
		route := getRoute(ns, name)(g)
		route.Status.Parents = nil
		for _, e := range entries {
			since := metav1.Now()
			if !e.since.IsZero() {
				since = metav1.NewTime(e.since)
			}
			route.Status.Parents = append(route.Status.Parents, gatewayv1.RouteParentStatus{
				ParentRef:      route.Spec.ParentRefs[0],
				ControllerName: gatewayv1.GatewayController(e.controller),
				Conditions: []metav1.Condition{
					{Type: string(gatewayv1.RouteConditionAccepted), Status: e.accepted, Reason: e.acceptedReason,
						ObservedGeneration: route.Generation, LastTransitionTime: since},
					{Type: string(gatewayv1.RouteConditionResolvedRefs), Status: e.resolved, Reason: e.resolvedReason,
						ObservedGeneration: route.Generation, LastTransitionTime: since},
				},
			})
		}
		g.Expect(k8s.Status().Update(suiteCtx, route)).To(Succeed())
	}).Should(Succeed())
}
