package controller

import (
	"context"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmv1ac "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/status"
)

// The certificate of an exposed app's hosts (spec.expose.tls.issuerRef) is issued by
// cert-manager from a Certificate the operator owns, an optional kind: without its CRD the
// MyApp is Stalled, naming it, and its Ingress serves without the certificate; a CRD
// installed later is noticed within optionalAPILookInterval. The Secret is cert-manager's:
// the operator never reads nor deletes it, and the Ingress names it.

// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch;create;patch;delete

const kindCertificate = "Certificate"

var certificateKind = childKind[*cmv1.Certificate, *cmv1ac.CertificateApplyConfiguration]{name: kindCertificate,
	newObj: func() *cmv1.Certificate { return &cmv1.Certificate{} }, extract: cmv1ac.ExtractCertificate,
	cache: func(r *MyAppReconciler) client.Reader { return r.certificateCache }}

// certificateRetry is how soon a MyApp whose certificate waits for cert-manager's CRDs is
// reconciled again; their probe reconciles every MyApp as soon as it finds them.
const certificateRetry = gatewayAPIRetry

// reconcileCertificate brings the MyApp's Certificate to spec.expose.tls.issuerRef: applied
// for the hosts the MyApp holds (app carries only those) while its Ingress serves them and the
// cluster serves Certificates, deleted once nothing asks for it; and observes whether
// cert-manager issued it (status.CertificateProblem). It says whether a certificate asked for
// is not yet issued for the current spec: an HTTPRoute the Ingress replaces serves until it is.
func (r *MyAppReconciler) reconcileCertificate(ctx context.Context, app *examplev1.MyApp, want desired.Exposure, obs *status.Observed, out *outcome) (pending bool) {
	var cert *cmv1ac.CertificateApplyConfiguration
	if want.Ingress {
		cert = desired.Certificate(app)
	}
	applied, current := reconcileOptionalChild(ctx, r, app, obs, out, r.certificates, certificateKind, cert, cert != nil, &certManagerMissingError{})
	if !current {
		return cert != nil
	}
	unready, failed, recheck := status.CertificateProblem(applied.obj, appliedAt(applied.obj), r.now())
	out.retryWithin(recheck)
	if failed != nil {
		obs.Failures = append(obs.Failures, *failed)
	}
	switch {
	case unready == nil:
	case unready.Terminal:
		obs.Failures = append(obs.Failures, *unready)
	case obs.Unreachable == nil:
		obs.Unreachable = unready
	}
	return unready != nil
}

// certManagerMissingError: the MyApp asks for a certificate and the cluster does not serve
// cert-manager's Certificates.
type certManagerMissingError struct{}

func (e *certManagerMissingError) Error() string {
	return "spec.expose.tls.issuerRef asks cert-manager for a certificate, and the cluster does not serve cert-manager's " +
		"Certificates (cert-manager.io/v1): install cert-manager, or remove spec.expose.tls.issuerRef. The Ingress serves " +
		"without it meanwhile"
}

// setupCertificates gives the reconciler its reads of Certificates, from the cache of the
// optional kinds, and the watch that starts once the cluster serves them.
func (r *MyAppReconciler) setupCertificates(optional optionalKinds) (err error) {
	r.certificateCache = boundedReader{Reader: optional.cache, what: "Certificates", wait: cacheSyncWait}
	r.certificates, err = optional.api(cmv1.SchemeGroupVersion.WithKind(kindCertificate), "cert-manager's Certificates",
		&cmv1.Certificate{}, certificateStatusChanged)
	return err
}

// certificateStatusChanged picks the Certificate's conditions, where cert-manager says
// whether it issued the certificate.
var certificateStatusChanged = statusPartChanged(func(c *cmv1.Certificate) []cmv1.CertificateCondition {
	return c.Status.Conditions
})
