package controller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// recordProblem records one Warning event per distinct problem: when the Degraded condition
// (which carries the Stalled problem when there is one, and any other problem otherwise)
// turns True, or moves to another reason or message. It runs after the status that says so
// was written, so that a reconcile that repeats the same problem, a retry after a failed
// status write, or a restarted operator reading the stored status, records nothing more.
//
// Transient failures (ApplyFailed) are left out: outcome.add records each of them with the
// API server's error, since the error can change at every retry.
//
// The event adds the API server's own words for the problem (details, by reason): the
// status states it from structured fields only, so that it stays the same when a new
// Kubernetes rewords its messages, and the event is where a person reads the full answer.
func (r *MyAppReconciler) recordProblem(app *examplev1.MyApp, before []metav1.Condition, details map[string]string) {
	now := meta.FindStatusCondition(app.Status.Conditions, examplev1.ConditionDegraded)
	if now == nil || now.Status != metav1.ConditionTrue || now.Reason == examplev1.ReasonApplyFailed {
		return
	}
	if was := meta.FindStatusCondition(before, examplev1.ConditionDegraded); was != nil &&
		was.Status == metav1.ConditionTrue && was.Reason == now.Reason && was.Message == now.Message {
		return
	}
	message := now.Message
	if d := details[now.Reason]; d != "" {
		message += ". The API server said: " + d
	}
	r.Recorder.Event(app, corev1.EventTypeWarning, now.Reason, message)
}
