package controller

import (
	"strings"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmetav1 "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

var getCertificate = get[cmv1.Certificate]

// reportCertificate plays cert-manager: the Certificate's conditions for its current
// generation.
func reportCertificate(ns, name string, conditions ...cmv1.CertificateCondition) {
	Eventually(func(g Gomega) {
		c := getCertificate(ns, name)(g)
		now := metav1.Now()
		for i := range conditions {
			conditions[i].ObservedGeneration, conditions[i].LastTransitionTime = c.Generation, &now
		}
		c.Status.Conditions = conditions
		g.Expect(k8s.Status().Update(suiteCtx, c)).To(Succeed())
	}).Should(Succeed())
}

var _ = Describe("Certificates for exposed hosts (spec.expose.tls.issuerRef)", Ordered, func() {
	It("is Stalled without cert-manager's CRDs and serves on; once they are installed the Certificate names the hosts and issuer, Ready waits for cert-manager to issue it, a failed attempt is Degraded, and it goes with the field", func() {
		// Another story of this process may have installed the CRD: the story starts without it
		// (the operator then may have found it before, and must see it gone).
		crd, err := testutil.CertificateCRD()
		Expect(err).NotTo(HaveOccurred())
		crds := envtest.CRDInstallOptions{Paths: []string{crd}, ErrorIfPathMissing: true, MaxTime: crdServedWithin}
		Expect(envtest.UninstallCRDs(cfg, crds)).To(Succeed())
		Eventually(func() error {
			c := &metav1.PartialObjectMetadata{}
			c.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
			return k8s.Get(suiteCtx, key("", "certificates.cert-manager.io"), c)
		}).Should(Satisfy(apierrors.IsNotFound))

		ns := newNamespace()
		app := createMyApp(ns, "shop", func(a *examplev1.MyApp) {
			a.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"secure.certificates.test", "*.secure.certificates.test"},
				TLS: &examplev1.ExposeTLS{SecretName: "shop-tls", IssuerRef: &examplev1.IssuerReference{Name: "letsencrypt", Kind: "ClusterIssuer"}}}
		})
		rollOut(ns, "shop")
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "shop")(g)
			stalled := condition(g, a, examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonCertManagerNotInstalled))
			g.Expect(stalled.Message).To(ContainSubstring("spec.expose.tls.issuerRef"))
		}).Should(Succeed())
		Expect(getIngress(ns, "shop")(Default).Spec.TLS).To(ConsistOf(networkingv1.IngressTLS{
			Hosts: []string{"secure.certificates.test", "*.secure.certificates.test"}, SecretName: "shop-tls"}), "the Ingress serves without the certificate")

		By("installing the Certificate CRD of the cert-manager release whose types the operator builds on")
		_, err = envtest.InstallCRDs(cfg, crds)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			c := getCertificate(ns, "shop")(g)
			g.Expect(metav1.IsControlledBy(c, getMyApp(ns, "shop")(g))).To(BeTrue())
			g.Expect(c.Spec.DNSNames).To(Equal([]string{"secure.certificates.test", "*.secure.certificates.test"}))
			g.Expect(c.Spec.SecretName).To(Equal("shop-tls"))
			g.Expect(c.Spec.IssuerRef).To(Equal(cmmetav1.IssuerReference{Name: "letsencrypt", Kind: "ClusterIssuer", Group: "cert-manager.io"}))
		}).WithTimeout(2 * certificateRetry).Should(Succeed())

		By("cert-manager at work: Ready waits for the certificate")
		reportCertificate(ns, "shop",
			cmv1.CertificateCondition{Type: cmv1.CertificateConditionReady, Status: cmmetav1.ConditionFalse, Reason: "DoesNotExist", Message: "Issuing certificate as Secret does not exist"},
			cmv1.CertificateCondition{Type: cmv1.CertificateConditionIssuing, Status: cmmetav1.ConditionTrue, Reason: "DoesNotExist"})
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "shop")(g)
			ready := condition(g, a, examplev1.ConditionReady)
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(examplev1.ReasonCertificateNotReady))
			g.Expect(ready.Message).To(ContainSubstring("Secret does not exist"))
			g.Expect(condition(g, a, examplev1.ConditionReconciling).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, a, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())

		By("a failed attempt: Degraded with cert-manager's message, still waiting")
		reportCertificate(ns, "shop",
			cmv1.CertificateCondition{Type: cmv1.CertificateConditionReady, Status: cmmetav1.ConditionFalse, Reason: "DoesNotExist", Message: "Issuing certificate as Secret does not exist"},
			cmv1.CertificateCondition{Type: cmv1.CertificateConditionIssuing, Status: cmmetav1.ConditionFalse, Reason: "Failed", Message: "The certificate request has failed to complete and will be retried: ACME server said no"})
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "shop")(g)
			degraded := condition(g, a, examplev1.ConditionDegraded)
			g.Expect(degraded.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(degraded.Reason).To(Equal(examplev1.ReasonCertificateIssueFailed))
			g.Expect(degraded.Message).To(ContainSubstring("ACME server said no"))
			g.Expect(condition(g, a, examplev1.ConditionReady).Reason).To(Equal(examplev1.ReasonCertificateNotReady))
			g.Expect(condition(g, a, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse), "cert-manager tries again")
		}).Should(Succeed())

		By("issued: Ready")
		reportCertificate(ns, "shop",
			cmv1.CertificateCondition{Type: cmv1.CertificateConditionReady, Status: cmmetav1.ConditionTrue, Reason: "Ready", Message: "Certificate is up to date and has not expired"})
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "shop")(g)
			g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, a, examplev1.ConditionDegraded).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())

		By("at rest: the Certificate reads back as the operator sent it, so no resync applies it again")
		n := managerRequests.count()
		Consistently(func() []string { return certificateWrites(managerRequests.since(n, ns)) }, 3*resyncPeriod, 200*time.Millisecond).
			Should(BeEmpty())

		By("a new host: the Certificate follows, and Ready waits for cert-manager to read the new spec")
		updateMyApp(app, func(a *examplev1.MyApp) {
			a.Spec.Expose.Hosts = append(a.Spec.Expose.Hosts, "secure.certificates.example")
		})
		Eventually(func(g Gomega) []string { return getCertificate(ns, "shop")(g).Spec.DNSNames }).Should(ContainElement("secure.certificates.example"))
		Eventually(func(g Gomega) string {
			return condition(g, getMyApp(ns, "shop")(g), examplev1.ConditionReady).Reason
		}).Should(Equal(examplev1.ReasonCertificateNotReady))

		By("the field removed: the Certificate goes, the Ingress keeps its Secret")
		updateMyApp(getMyApp(ns, "shop")(Default), func(a *examplev1.MyApp) { a.Spec.Expose.TLS.IssuerRef = nil })
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(suiteCtx, key(ns, "shop"), &cmv1.Certificate{}))
		}).Should(BeTrue())
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "shop")(g)
			g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
		Expect(getIngress(ns, "shop")(Default).Spec.TLS[0].SecretName).To(Equal("shop-tls"))
	})

	It("leaves a Certificate of that name it does not own alone, and says so", func() {
		ns := newNamespace()
		mine := &cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"},
			Spec: cmv1.CertificateSpec{SecretName: "theirs", DNSNames: []string{"theirs.example.com"}, IssuerRef: cmmetav1.IssuerReference{Name: "theirs"}}}
		Eventually(func() error { return k8s.Create(suiteCtx, mine) }).WithTimeout(2*optionalAPILookInterval + 20*time.Second).Should(Succeed())
		createMyApp(ns, "shop", func(a *examplev1.MyApp) {
			a.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"own.certificates.test"},
				TLS: &examplev1.ExposeTLS{SecretName: "shop-tls", IssuerRef: &examplev1.IssuerReference{Name: "ca"}}}
		})
		Eventually(func(g Gomega) {
			stalled := condition(g, getMyApp(ns, "shop")(g), examplev1.ConditionStalled)
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonChildNotOwned))
		}).Should(Succeed())
		Consistently(func(g Gomega) []string { return getCertificate(ns, "shop")(g).Spec.DNSNames }, 2*time.Second).
			Should(Equal([]string{"theirs.example.com"}))
	})
})

// certificateWrites are the requests that write a Certificate, of those given.
func certificateWrites(requests []string) []string {
	var out []string
	for _, r := range requests {
		if strings.Contains(r, "/certificates") && !strings.HasPrefix(r, "GET ") {
			out = append(out, r)
		}
	}
	return out
}
