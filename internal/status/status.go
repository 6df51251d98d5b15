// Package status computes a MyApp's status from what the operator observed of its children.
// It is pure: the reconciler passes in the observation and the time, and writes the result
// only when it differs from what is stored.
package status

import (
	"cmp"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Failure is a problem met while bringing the MyApp's children to the desired state. Message
// must be stable for a given problem (no timestamps, no raw errors) so that the status does
// not churn while the problem lasts.
type Failure struct {
	Reason  string
	Message string
	// Terminal problems need the user (or someone else) to act: they make the MyApp
	// Stalled. The others are retried by the operator and only make it Degraded.
	Terminal bool
	// ServedWithout marks a problem with a child the app serves without (the autoscaler,
	// the disruption budget): it never keeps the current template from becoming available,
	// so it is Degraded, not Stalled.
	ServedWithout bool
}

// Observed is what the reconciler saw after applying the MyApp's children.
type Observed struct {
	// Deployment is the MyApp's Deployment as last seen (the apply's answer, or the cached
	// copy when the apply was skipped or failed), or nil if there is none.
	Deployment *appsv1.Deployment
	// DeploymentStale says that the stored Deployment does not carry the MyApp's current
	// intent: its apply failed, or the spec cannot be built into one. Its pods then run an
	// older spec, whatever their status says.
	DeploymentStale bool
	// Autoscaler is the MyApp's HorizontalPodAutoscaler while autoscaling is on, or nil.
	Autoscaler *autoscalingv2.HorizontalPodAutoscaler
	// Pods are the containers of the MyApp's pods that wait for something the user must fix
	// (see pods.go).
	Pods []ContainerWaiting
	// Failures are the problems met, in the order the children were handled.
	Failures []Failure
	// Waiting, when set, is work under way that the operator waits for: a predecessor's
	// children being garbage-collected, or the selector migration of a 0.2.0 Deployment.
	Waiting *Failure
	// Selector is the label selector of the MyApp's pods.
	Selector string
	// ReconcileRequest is the value of the reconcile-requested-at annotation handled.
	ReconcileRequest string
	// ReadyTemplate is the status.readyTemplate to store: the stored one, or the template the
	// rollout decision (internal/rollout) found completed, once its intent is stored.
	ReadyTemplate string
	// RolledBack is the rollback in force: held from an earlier reconcile (RollbackHeld) or
	// made by this one. The MyApp is then Stalled with the reason RolledBack.
	RolledBack *examplev1.RollbackStatus
	// Canary is the MyApp's canary release as recorded, nil when spec.canary is not set and
	// none is recorded.
	Canary *Canary
	// URL is status.url: where the exposed app is reached, or "".
	URL string
	// Exposure is status.exposure: the hosts the MyApp holds, as recorded (hostclaims).
	Exposure *examplev1.ExposureStatus
	// Unreachable, when set, says that the app is not yet reachable where spec.expose asks
	// (the Gateway has not accepted its route): Ready waits for it, and the MyApp is
	// Reconciling meanwhile. A refusal is a Failure instead.
	Unreachable *Failure
}

// Compute returns the status the MyApp should have. Conditions keep their last transition
// time while their status is unchanged, and LastUpdateTime moves to now only when something
// else in the status changed, so computing twice from the same observation gives the stored
// status back unchanged.
func Compute(app *examplev1.MyApp, obs Observed, now metav1.Time) examplev1.MyAppStatus {
	next := examplev1.MyAppStatus{
		ObservedGeneration:     app.Generation,
		Selector:               obs.Selector,
		Conditions:             append([]metav1.Condition(nil), app.Status.Conditions...),
		LastHandledReconcileAt: obs.ReconcileRequest,
		LastUpdateTime:         app.Status.LastUpdateTime,
		URL:                    obs.URL,
		Exposure:               obs.Exposure.DeepCopy(),
	}
	if d := obs.Deployment; d != nil {
		next.Replicas = d.Status.Replicas
		next.UpdatedReplicas = d.Status.UpdatedReplicas
		next.ReadyReplicas = d.Status.ReadyReplicas
		next.AvailableReplicas = d.Status.AvailableReplicas
	}

	next.ReadyTemplate = cmp.Or(obs.ReadyTemplate, app.Status.ReadyTemplate)
	next.RolledBack = obs.RolledBack.DeepCopy()
	if obs.Canary != nil {
		next.Canary = obs.Canary.Status.DeepCopy()
	}
	for _, c := range decide(app, obs, now) {
		c.ObservedGeneration = app.Generation
		// SetStatusCondition keeps the stored transition time while the status holds, and
		// takes this one when it changes.
		c.LastTransitionTime = now
		meta.SetStatusCondition(&next.Conditions, c)
	}

	if !equalIgnoringTimes(app.Status, next) {
		next.LastUpdateTime = &now
	}
	return next
}

// equalIgnoringTimes compares two statuses as a user would: times aside.
func equalIgnoringTimes(a, b examplev1.MyAppStatus) bool {
	a, b = *a.DeepCopy(), *b.DeepCopy()
	a.LastUpdateTime, b.LastUpdateTime = nil, nil
	for _, s := range []*examplev1.MyAppStatus{&a, &b} {
		for i := range s.Conditions {
			s.Conditions[i].LastTransitionTime = metav1.Time{}
		}
	}
	return equality.Semantic.DeepEqual(a, b)
}
