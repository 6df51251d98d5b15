// Package status computes a MyApp's status from what the operator observed of its children.
// It is pure: the reconciler passes in the observation and the time, and writes the result
// only when it differs from what is stored.
package status

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Condition reasons. They are part of the API: users and tools match on them.
const (
	// ReasonAvailable: the Deployment for the current generation is rolled out and every
	// replica is available.
	ReasonAvailable = "Available"
	// ReasonRollingOut: a rollout is under way (new spec not yet observed, pods being
	// replaced, or pods not yet available).
	ReasonRollingOut = "RollingOut"
	// ReasonRolloutComplete: no rollout is under way.
	ReasonRolloutComplete = "RolloutComplete"
	// ReasonAsExpected: nothing is wrong.
	ReasonAsExpected = "AsExpected"
	// ReasonProgressDeadlineExceeded: the Deployment gave up rolling out, typically because
	// its pods never become ready (bad image, crashing container, no room to schedule).
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonChildNotOwned: an object with a child's name exists and is not owned by this
	// MyApp; the operator leaves it alone.
	ReasonChildNotOwned = "ChildNotOwned"
	// ReasonInvalidSpec: a field of the MyApp cannot be turned into a child.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonChildRejected: the API server or an admission policy refused a child as the
	// MyApp describes it (invalid, forbidden, over quota).
	ReasonChildRejected = "ChildRejected"
	// ReasonApplyFailed: the API server refused or failed a change to a child; the operator
	// retries with backoff.
	ReasonApplyFailed = "ApplyFailed"
)

// Failure is a problem that keeps the operator from bringing the MyApp's children to the
// desired state. Message must be stable for a given problem (no timestamps, no raw errors)
// so that the status does not churn while the problem lasts.
type Failure struct {
	Reason  string
	Message string
}

// Observed is what the reconciler saw after applying the MyApp's children.
type Observed struct {
	// Deployment is the MyApp's Deployment as the API server returned it, or nil if it
	// could not be applied.
	Deployment *appsv1.Deployment
	// Failure, when set, is the first problem that stopped the reconcile.
	Failure *Failure
	// Selector is the label selector of the MyApp's pods.
	Selector string
}

// Compute returns the status the MyApp should have. Conditions keep their last transition
// time while their status is unchanged, and LastUpdateTime moves to now only when something
// else in the status changed, so computing twice from the same observation gives the stored
// status back unchanged.
func Compute(app *examplev1.MyApp, obs Observed, now metav1.Time) examplev1.MyAppStatus {
	next := examplev1.MyAppStatus{
		ObservedGeneration: app.Generation,
		Selector:           obs.Selector,
		Conditions:         append([]metav1.Condition(nil), app.Status.Conditions...),
		LastUpdateTime:     app.Status.LastUpdateTime,
	}
	if d := obs.Deployment; d != nil {
		next.ReadyReplicas = d.Status.ReadyReplicas
		next.AvailableReplicas = d.Status.AvailableReplicas
	}

	ready, progressing, degraded := conditions(obs)
	for _, c := range []metav1.Condition{ready, progressing, degraded} {
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

// conditions decides Ready, Progressing and Degraded from the observation.
func conditions(obs Observed) (ready, progressing, degraded metav1.Condition) {
	ready = metav1.Condition{Type: examplev1.ConditionReady}
	progressing = metav1.Condition{Type: examplev1.ConditionProgressing}
	degraded = metav1.Condition{Type: examplev1.ConditionDegraded}

	fail := obs.Failure
	if fail == nil && obs.Deployment != nil && deadlineExceeded(obs.Deployment) {
		fail = &Failure{
			Reason: ReasonProgressDeadlineExceeded,
			Message: fmt.Sprintf("Deployment %s did not finish rolling out within its progress deadline; "+
				"check the events of its pods", obs.Deployment.Name),
		}
	}
	if fail != nil {
		set(&ready, metav1.ConditionFalse, fail.Reason, fail.Message)
		set(&progressing, metav1.ConditionFalse, fail.Reason, fail.Message)
		set(&degraded, metav1.ConditionTrue, fail.Reason, fail.Message)
		return ready, progressing, degraded
	}

	set(&degraded, metav1.ConditionFalse, ReasonAsExpected, "No problems observed")
	done, msg := rollout(obs.Deployment)
	if done {
		set(&ready, metav1.ConditionTrue, ReasonAvailable, msg)
		set(&progressing, metav1.ConditionFalse, ReasonRolloutComplete, msg)
	} else {
		set(&ready, metav1.ConditionFalse, ReasonRollingOut, msg)
		set(&progressing, metav1.ConditionTrue, ReasonRollingOut, msg)
	}
	return ready, progressing, degraded
}

// rollout tells whether the Deployment's current spec is fully rolled out and available, and
// says how far it got. It follows the checks of `kubectl rollout status`.
func rollout(d *appsv1.Deployment) (bool, string) {
	if d == nil {
		return false, "Waiting for the Deployment to be created"
	}
	if d.Status.ObservedGeneration < d.Generation {
		return false, fmt.Sprintf("Waiting for Deployment %s to observe its latest spec", d.Name)
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	switch {
	case s.UpdatedReplicas < want:
		return false, fmt.Sprintf("%d of %d replicas updated", s.UpdatedReplicas, want)
	case s.Replicas > s.UpdatedReplicas:
		return false, fmt.Sprintf("%d old replicas pending termination", s.Replicas-s.UpdatedReplicas)
	case s.AvailableReplicas < s.UpdatedReplicas:
		return false, fmt.Sprintf("%d of %d updated replicas available", s.AvailableReplicas, s.UpdatedReplicas)
	}
	return true, fmt.Sprintf("%d of %d replicas available", s.AvailableReplicas, want)
}

// deadlineExceeded tells whether the deployment controller gave up on the current rollout.
func deadlineExceeded(d *appsv1.Deployment) bool {
	if d.Status.ObservedGeneration < d.Generation {
		return false
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing {
			return c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded"
		}
	}
	return false
}

func set(c *metav1.Condition, s metav1.ConditionStatus, reason, message string) {
	c.Status, c.Reason, c.Message = s, reason, message
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
