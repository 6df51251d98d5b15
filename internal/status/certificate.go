package status

import (
	"fmt"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmetav1 "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// cert-manager says on a Certificate whether the Secret it names holds a certificate for the
// Certificate's current spec (Ready, with the generation it read), and how its last issuance
// went (Issuing: True while one runs; False with reason Issued after a success, or with the
// CertificateRequest's reason, such as Failed, Denied or InvalidRequest, after a failure,
// retried with backoff). A CertificateRequest whose issuer does not exist stays pending:
// Issuing stays True, and only the time it takes says so.

// issued is the reason of cert-manager's Issuing condition after a successful issuance.
const issued = "Issued"

// CertificateIssueDeadline is how long after the operator last changed the Certificate the
// MyApp waits for cert-manager to issue it before it is also Degraded (CertificateNotIssued):
// longer than an ACME issuance with a DNS-01 challenge's propagation takes, and what an issuer
// that does not exist (a pending request, no failure) otherwise never shows.
const CertificateIssueDeadline = 10 * time.Minute

// CertificateProblem reads the Certificate cert-manager issues for the MyApp's Ingress, and
// returns what keeps its hosts from being served with it and, when the answer can change with
// time alone, how soon to look again:
//   - unready (Ready waits for it, the MyApp is Reconciling meanwhile) while cert-manager's
//     Ready condition is not True for the Certificate's current generation: the Ingress serves
//     the ingress controller's default certificate, or an older one, until it is;
//   - failed, which the app is served in spite of (Degraded only: cert-manager tries again),
//     when cert-manager reports that its last issuance failed (CertificateIssueFailed), even
//     while an earlier certificate is still Ready; or, without such a report, when it has not
//     issued one CertificateIssueDeadline after the operator applied it (appliedAt,
//     CertificateNotIssued);
//   - a terminal CertManagerNotResponding as unready once cert-manager has said nothing of
//     the current generation AnswerDeadline after the operator applied it.
//
// Messages carry cert-manager's message: it names the issuer's or the ACME server's answer.
func CertificateProblem(cert *cmv1.Certificate, appliedAt, now time.Time) (unready, failed *Failure, recheck time.Duration) {
	ready := certificateCondition(cert, cmv1.CertificateConditionReady)
	issuing := certificateCondition(cert, cmv1.CertificateConditionIssuing)
	if issuing != nil && issuing.Status == cmmetav1.ConditionFalse && issuing.Reason != issued {
		failed = &Failure{Reason: examplev1.ReasonCertificateIssueFailed, Terminal: true, ServedWithout: true, Message: fmt.Sprintf(
			"cert-manager could not issue Certificate %s (%s) and tries again later: %s (kubectl describe certificate -n %s %s)",
			cert.Name, issuing.Reason, issuing.Message, cert.Namespace, cert.Name)}
	}
	switch {
	case ready != nil && ready.Status == cmmetav1.ConditionTrue:
		return nil, failed, 0
	case ready != nil:
		unready = &Failure{Reason: examplev1.ReasonCertificateNotReady, Message: fmt.Sprintf(
			"Waiting for cert-manager to issue Certificate %s into Secret %s: %s", cert.Name, cert.Spec.SecretName, ready.Message)}
		if failed != nil {
			return unready, failed, 0
		}
		if left := appliedAt.Add(CertificateIssueDeadline).Sub(now); left > 0 {
			return unready, nil, left
		}
		return unready, &Failure{Reason: examplev1.ReasonCertificateNotIssued, Terminal: true, ServedWithout: true, Message: fmt.Sprintf(
			"cert-manager has not issued Certificate %s within %s of its last change: %s. An issuer that does not exist, or of "+
				"another kind, leaves its CertificateRequest pending: kubectl describe certificaterequest -n %s",
			cert.Name, minutes(CertificateIssueDeadline), ready.Message, cert.Namespace)}, 0
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
