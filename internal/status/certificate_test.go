package status

import (
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmetav1 "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestCertificateProblem(t *testing.T) {
	applied := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	cond := func(typ cmv1.CertificateConditionType, status cmmetav1.ConditionStatus, reason string, gen int64) cmv1.CertificateCondition {
		return cmv1.CertificateCondition{Type: typ, Status: status, Reason: reason, Message: "the issuer's words", ObservedGeneration: gen}
	}
	ready := func(s cmmetav1.ConditionStatus, gen int64) cmv1.CertificateCondition {
		return cond(cmv1.CertificateConditionReady, s, "Ready", gen)
	}
	failed := cond(cmv1.CertificateConditionIssuing, cmmetav1.ConditionFalse, "Failed", 2)
	cases := map[string]struct {
		conditions      []cmv1.CertificateCondition
		after           time.Duration
		unready, failed string
		terminal        bool
		recheck         time.Duration
	}{
		"issued for the current spec": {conditions: []cmv1.CertificateCondition{ready(cmmetav1.ConditionTrue, 2)}},
		"issued for an older spec: new hosts wait": {conditions: []cmv1.CertificateCondition{ready(cmmetav1.ConditionTrue, 1)}, after: time.Minute,
			unready: examplev1.ReasonCertificateNotReady, recheck: 4 * time.Minute},
		"issuing": {conditions: []cmv1.CertificateCondition{ready(cmmetav1.ConditionFalse, 2),
			cond(cmv1.CertificateConditionIssuing, cmmetav1.ConditionTrue, "Issuing", 2)}, after: 9 * time.Minute,
			unready: examplev1.ReasonCertificateNotReady, recheck: time.Minute},
		"still issuing after the deadline: a pending request, such as of an issuer that does not exist": {conditions: []cmv1.CertificateCondition{
			ready(cmmetav1.ConditionFalse, 2), cond(cmv1.CertificateConditionIssuing, cmmetav1.ConditionTrue, "Issuing", 2)}, after: 10 * time.Minute,
			unready: examplev1.ReasonCertificateNotReady, failed: examplev1.ReasonCertificateNotIssued},
		"denied by the approver": {conditions: []cmv1.CertificateCondition{ready(cmmetav1.ConditionFalse, 2),
			cond(cmv1.CertificateConditionIssuing, cmmetav1.ConditionFalse, "Denied", 2)},
			unready: examplev1.ReasonCertificateNotReady, failed: examplev1.ReasonCertificateIssueFailed},
		"issued, Issuing False with reason Issued, and Ready not yet read again": {conditions: []cmv1.CertificateCondition{
			ready(cmmetav1.ConditionFalse, 2), cond(cmv1.CertificateConditionIssuing, cmmetav1.ConditionFalse, "Issued", 2)},
			unready: examplev1.ReasonCertificateNotReady, recheck: 10 * time.Minute},
		"the last attempt failed, none issued": {conditions: []cmv1.CertificateCondition{ready(cmmetav1.ConditionFalse, 2), failed},
			unready: examplev1.ReasonCertificateNotReady, failed: examplev1.ReasonCertificateIssueFailed},
		"a renewal failed, the old certificate still serves": {conditions: []cmv1.CertificateCondition{ready(cmmetav1.ConditionTrue, 2), failed},
			failed: examplev1.ReasonCertificateIssueFailed},
		"a failure of an older spec is not this one's": {conditions: []cmv1.CertificateCondition{ready(cmmetav1.ConditionTrue, 2),
			cond(cmv1.CertificateConditionIssuing, cmmetav1.ConditionFalse, "Failed", 1)}},
		"cert-manager has not answered yet":          {after: 4 * time.Minute, unready: examplev1.ReasonCertificateNotReady, recheck: time.Minute},
		"cert-manager has not answered in 5 minutes": {after: 5 * time.Minute, unready: examplev1.ReasonCertManagerNotResponding, terminal: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cert := &cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", Generation: 2},
				Spec: cmv1.CertificateSpec{SecretName: "web-tls"}, Status: cmv1.CertificateStatus{Conditions: tc.conditions}}
			unready, failed, recheck := CertificateProblem(cert, applied, applied.Add(tc.after))
			if reasonOf(unready) != tc.unready || reasonOf(failed) != tc.failed || recheck != tc.recheck {
				t.Fatalf("unready %q failed %q recheck %s, want %q %q %s", reasonOf(unready), reasonOf(failed), recheck, tc.unready, tc.failed, tc.recheck)
			}
			if unready != nil && unready.Terminal != tc.terminal {
				t.Errorf("terminal %v, want %v", unready.Terminal, tc.terminal)
			}
			if failed != nil && (!failed.Terminal || !failed.ServedWithout) {
				t.Errorf("%+v: a failed issuance is Degraded only (Terminal and ServedWithout): the app is served in spite of it, "+
					"and a retried failure must not keep the MyApp Reconciling", failed)
			}
		})
	}
}

func reasonOf(f *Failure) string {
	if f == nil {
		return ""
	}
	return f.Reason
}
