package status

import (
	"fmt"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmetav1 "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// cert-manager says on a Certificate whether the Secret it names holds a certificate for the
// Certificate's current spec (Ready, with the generation it read), and whether an issuance
// runs or its last one failed (Issuing; reason Failed after a failure, retried with backoff).

// issuingFailed is the reason of cert-manager's Issuing condition after a failed attempt.
const issuingFailed = "Failed"

// CertificateProblem reads the Certificate cert-manager issues for the MyApp's Ingress, and
// returns what keeps its hosts from being served with it and, when the answer can change with
// time alone, how soon to look again:
//   - unready (Ready waits for it, the MyApp is Reconciling meanwhile) while cert-manager's
//     Ready condition is not True for the Certificate's current generation: the Ingress serves
//     the ingress controller's default certificate, or an older one, until it is;
//   - failed (Degraded, not Stalled: cert-manager tries again) when cert-manager reports its
//     last issuance failed, even while an earlier certificate is still Ready;
//   - a terminal CertManagerNotResponding as unready once cert-manager has said nothing of
//     the current generation AnswerDeadline after the operator applied it (appliedAt).
//
// Messages carry cert-manager's message: it names the issuer's or the ACME server's answer.
func CertificateProblem(cert *cmv1.Certificate, appliedAt, now time.Time) (unready, failed *Failure, recheck time.Duration) {
	ready := certificateCondition(cert, cmv1.CertificateConditionReady)
	issuing := certificateCondition(cert, cmv1.CertificateConditionIssuing)
	if issuing != nil && issuing.Status == cmmetav1.ConditionFalse && issuing.Reason == issuingFailed {
		failed = &Failure{Reason: examplev1.ReasonCertificateIssueFailed, Message: fmt.Sprintf(
			"cert-manager could not issue Certificate %s and tries again later: %s (kubectl describe certificate -n %s %s)",
			cert.Name, issuing.Message, cert.Namespace, cert.Name)}
	}
	switch {
	case ready != nil && ready.Status == cmmetav1.ConditionTrue:
		return nil, failed, 0
	case ready != nil:
		return &Failure{Reason: examplev1.ReasonCertificateNotReady, Message: fmt.Sprintf(
			"Waiting for cert-manager to issue Certificate %s into Secret %s: %s", cert.Name, cert.Spec.SecretName, ready.Message)}, failed, 0
	}
	if left := appliedAt.Add(AnswerDeadline).Sub(now); left > 0 {
		return &Failure{Reason: examplev1.ReasonCertificateNotReady, Message: fmt.Sprintf(
			"Waiting for cert-manager to issue Certificate %s into Secret %s", cert.Name, cert.Spec.SecretName)}, failed, left
	}
	return &Failure{Reason: examplev1.ReasonCertManagerNotResponding, Terminal: true, Message: fmt.Sprintf(
		"cert-manager has not answered Certificate %s within %s of its last change: check that cert-manager's controller runs "+
			"and watches namespace %s (kubectl get certificate -n %s %s shows no Ready condition)",
		cert.Name, minutes(AnswerDeadline), cert.Namespace, cert.Namespace, cert.Name)}, failed, 0
}

// certificateCondition is the Certificate's condition of that type when cert-manager wrote it
// for the Certificate's current generation, else nil.
func certificateCondition(cert *cmv1.Certificate, typ cmv1.CertificateConditionType) *cmv1.CertificateCondition {
	for i := range cert.Status.Conditions {
		c := &cert.Status.Conditions[i]
		if c.Type == typ && c.ObservedGeneration >= cert.Generation {
			return c
		}
	}
	return nil
}
