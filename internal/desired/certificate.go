package desired

import (
	"cmp"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmv1ac "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	cmmetav1ac "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// The issuer a certificate comes from when spec.expose.tls.issuerRef names only its name, as
// cert-manager itself reads a Certificate's issuerRef.
const (
	DefaultIssuerKind  = "Issuer"
	DefaultIssuerGroup = "cert-manager.io"
)

// Certificate is the cert-manager Certificate that spec.expose.tls.issuerRef asks for: named
// after the MyApp, for the hosts of its spec.expose (those it holds: the caller passes the
// MyApp with only those), issued by that issuer into the Secret tls.secretName names, which
// the Ingress serves. Nil when the MyApp asks for no certificate or holds no host, since a
// certificate names at least one.
func Certificate(app *examplev1.MyApp) *cmv1ac.CertificateApplyConfiguration {
	e := app.Spec.Expose
	if e == nil || e.TLS == nil || e.TLS.IssuerRef == nil || len(e.Hosts) == 0 {
		return nil
	}
	ref := e.TLS.IssuerRef
	hosts := make([]string, 0, len(e.Hosts))
	for _, h := range e.Hosts {
		hosts = append(hosts, string(h))
	}
	return cmv1ac.Certificate(app.Name, app.Namespace).
		WithLabels(Labels(app)).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(cmv1ac.CertificateSpec().
			WithSecretName(e.TLS.SecretName).
			WithDNSNames(hosts...).
			// A new private key at every issuance, cert-manager's default since 1.18, said
			// so that a cert-manager of any release does the same and none warns of the change.
			WithPrivateKey(cmv1ac.CertificatePrivateKey().WithRotationPolicy(cmv1.RotationPolicyAlways)).
			WithIssuerRef(cmmetav1ac.IssuerReference().
				WithName(ref.Name).
				WithKind(IssuerKind(ref)).
				WithGroup(IssuerGroup(ref))))
}

// IssuerKind is the issuer's kind, DefaultIssuerKind unless the reference names one.
func IssuerKind(ref *examplev1.IssuerReference) string { return cmp.Or(ref.Kind, DefaultIssuerKind) }

// IssuerGroup is the issuer's API group, DefaultIssuerGroup unless the reference names one.
func IssuerGroup(ref *examplev1.IssuerReference) string { return cmp.Or(ref.Group, DefaultIssuerGroup) }
