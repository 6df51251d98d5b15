package status

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Condition reasons. They are part of the API: users and tools match on them.
const (
	// ReasonAvailable: the Deployment is Available and runs the current pod template.
	ReasonAvailable = "Available"
	// ReasonRollingOut: pods of an older template are being replaced, or the Deployment
	// has not yet observed its latest spec.
	ReasonRollingOut = "RollingOut"
	// ReasonScaling: every pod runs the current template, but the number of pods, or of
	// available pods, is not yet what the Deployment asks for.
	ReasonScaling = "Scaling"
	// ReasonUnavailable: the Deployment has fewer available pods than it needs, with no
	// rollout or scale under way (pods failing their readiness probe, for example).
	ReasonUnavailable = "Unavailable"
	// ReasonRolloutComplete: no rollout or scale is under way.
	ReasonRolloutComplete = "RolloutComplete"
	// ReasonAsExpected: nothing is wrong.
	ReasonAsExpected = "AsExpected"
	// ReasonSelectorMigration: a Deployment made by 0.2.0 is being replaced by one with the
	// current pod selector; its pods keep serving until the new ones are available.
	ReasonSelectorMigration = "SelectorMigration"
	// ReasonWaitingForPredecessor: children of an earlier MyApp of the same name are being
	// removed by the garbage collector.
	ReasonWaitingForPredecessor = "WaitingForPredecessor"
	// ReasonProgressDeadlineExceeded: the Deployment gave up rolling out, typically because
	// its pods never become ready (bad image, crashing container, no room to schedule).
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonReplicaFailure: the Deployment cannot create pods (Pod Security admission, a
	// quota, a LimitRange); the message is the Deployment's.
	ReasonReplicaFailure = "ReplicaFailure"
	// ReasonChildNotOwned: an object with a child's name exists and is not owned by this
	// MyApp; the operator leaves it alone.
	ReasonChildNotOwned = "ChildNotOwned"
	// ReasonInvalidSpec: a field of the MyApp cannot be turned into a child.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonChildRejected: the API server or an admission policy refused a child as the
	// MyApp describes it (invalid, forbidden, over quota).
	ReasonChildRejected = "ChildRejected"
	// ReasonApplyFailed: the API server failed a change to a child; the operator retries
	// with backoff.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonAutoscalerUnableToScale: the HorizontalPodAutoscaler reports that it cannot
	// scale (AbleToScale or ScalingActive False), e.g. for want of a cpu request.
	ReasonAutoscalerUnableToScale = "AutoscalerUnableToScale"
)

// decide computes the five conditions from one reading of the observation, so that they
// never disagree.
func decide(app *examplev1.MyApp, obs Observed) []metav1.Condition {
	var stalled, degraded, retrying *Failure
	for i := range obs.Failures {
		f := &obs.Failures[i]
		if f.Terminal && stalled == nil {
			stalled = f
		}
		if !f.Terminal && retrying == nil {
			retrying = f
		}
		if degraded == nil {
			degraded = f
		}
	}
	if stalled == nil {
		stalled = podsStalled(app, obs.Pods)
	}
	if stalled == nil {
		stalled = deploymentStalled(obs.Deployment)
	}
	if stalled != nil {
		degraded = stalled
	}
	if degraded == nil {
		degraded = autoscalerDegraded(obs.Autoscaler)
	}

	r := rolloutOf(app, obs.Deployment)
	ready := cond(examplev1.ConditionReady, r.ready, r.readyReason, r.readyMessage)
	busy := progress{active: r.busy, reason: r.busyReason, message: r.busyMessage}
	switch {
	case obs.Waiting != nil:
		busy = progress{active: true, reason: obs.Waiting.Reason, message: obs.Waiting.Message}
	case retrying != nil && !busy.active:
		// A transient failure: the operator is still working towards the spec.
		busy = progress{active: true, reason: retrying.Reason, message: retrying.Message}
	}

	out := []metav1.Condition{
		ready,
		cond(examplev1.ConditionReconciling, busy.active, busy.reason, busy.message),
		cond(examplev1.ConditionStalled, false, ReasonAsExpected, "No problem needs attention"),
		cond(examplev1.ConditionProgressing, busy.active, busy.reason, busy.message),
		cond(examplev1.ConditionDegraded, false, ReasonAsExpected, "No problems observed"),
	}
	if stalled != nil {
		out[0] = cond(examplev1.ConditionReady, false, stalled.Reason, stalled.Message)
		out[1] = cond(examplev1.ConditionReconciling, false, stalled.Reason, stalled.Message)
		out[2] = cond(examplev1.ConditionStalled, true, stalled.Reason, stalled.Message)
		out[3] = cond(examplev1.ConditionProgressing, false, stalled.Reason, stalled.Message)
	}
	if degraded != nil {
		out[4] = cond(examplev1.ConditionDegraded, true, degraded.Reason, degraded.Message)
	}
	if !busy.active && stalled == nil {
		out[1].Reason, out[3].Reason = ReasonRolloutComplete, ReasonRolloutComplete
		out[1].Message, out[3].Message = "No rollout or scale under way", "No rollout or scale under way"
	}
	return out
}

type progress struct {
	active          bool
	reason, message string
}

// rollout is what the Deployment says of the rollout of the current pod template.
type rollout struct {
	ready                     bool
	readyReason, readyMessage string
	busy                      bool
	busyReason, busyMessage   string
}

// rolloutOf reads the Deployment as `kubectl rollout status` does, but tells a template
// rollout (old pods remain) from a scale (only the count differs): Ready stays True through
// a scale while the Deployment is Available. Messages carry no pod counts, so the status is
// not rewritten at every pod transition; the counts live in status fields.
func rolloutOf(app *examplev1.MyApp, d *appsv1.Deployment) rollout {
	if d == nil {
		msg := "Waiting for the Deployment to be created"
		return rollout{readyReason: ReasonRollingOut, readyMessage: msg, busy: true, busyReason: ReasonRollingOut, busyMessage: msg}
	}
	if d.Status.ObservedGeneration < d.Generation {
		// Whether the new spec is a template change or only a scale is unknown until the
		// deployment controller has looked; Ready keeps what it said, so that a scale never
		// flips it.
		msg := fmt.Sprintf("Waiting for the deployment controller to observe Deployment %s's latest spec", d.Name)
		r := rollout{busy: true, busyReason: ReasonRollingOut, busyMessage: msg, readyReason: ReasonRollingOut, readyMessage: msg}
		if prev := meta.FindStatusCondition(app.Status.Conditions, examplev1.ConditionReady); prev != nil {
			r.ready = prev.Status == metav1.ConditionTrue
			r.readyReason, r.readyMessage = prev.Reason, prev.Message
		}
		return r
	}

	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	available := deploymentCondition(d, appsv1.DeploymentAvailable) == corev1.ConditionTrue
	templateDone := s.UpdatedReplicas == s.Replicas
	countDone := s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas >= want

	r := rollout{}
	switch {
	case !templateDone:
		r.busy, r.busyReason = true, ReasonRollingOut
		r.busyMessage = fmt.Sprintf("Deployment %s is replacing pods of an older template", d.Name)
	case !countDone:
		r.busy, r.busyReason = true, ReasonScaling
		r.busyMessage = fmt.Sprintf("Deployment %s is bringing its pods to the desired number and availability", d.Name)
	}
	switch {
	case available && templateDone:
		r.ready, r.readyReason = true, ReasonAvailable
		r.readyMessage = fmt.Sprintf("Deployment %s is available and runs the current pod template", d.Name)
	case r.busy:
		r.readyReason, r.readyMessage = r.busyReason, r.busyMessage
	default:
		r.readyReason = ReasonUnavailable
		r.readyMessage = fmt.Sprintf("Deployment %s has fewer available pods than it requires", d.Name)
	}
	return r
}

// deploymentStalled reports the Deployment's terminal problems: pods it cannot create, or a
// rollout past its progress deadline.
func deploymentStalled(d *appsv1.Deployment) *Failure {
	if d == nil || d.Status.ObservedGeneration < d.Generation {
		return nil
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			return &Failure{Reason: ReasonReplicaFailure, Terminal: true,
				Message: fmt.Sprintf("Deployment %s cannot create pods: %s", d.Name, c.Message) + replicaFailureHint(c.Message)}
		}
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return &Failure{Reason: ReasonProgressDeadlineExceeded, Terminal: true,
				Message: fmt.Sprintf("Deployment %s did not finish rolling out within its progress deadline; "+
					"check the events and logs of its pods", d.Name)}
		}
	}
	return nil
}

// autoscalerDegraded reports an autoscaler that cannot scale.
func autoscalerDegraded(h *autoscalingv2.HorizontalPodAutoscaler) *Failure {
	if h == nil {
		return nil
	}
	for _, typ := range []autoscalingv2.HorizontalPodAutoscalerConditionType{autoscalingv2.AbleToScale, autoscalingv2.ScalingActive} {
		for _, c := range h.Status.Conditions {
			if c.Type == typ && c.Status == corev1.ConditionFalse {
				return &Failure{Reason: ReasonAutoscalerUnableToScale,
					Message: fmt.Sprintf("HorizontalPodAutoscaler %s cannot scale (%s): %s", h.Name, c.Reason, c.Message)}
			}
		}
	}
	return nil
}

func deploymentCondition(d *appsv1.Deployment, typ appsv1.DeploymentConditionType) corev1.ConditionStatus {
	for _, c := range d.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// FullyAvailable tells whether the Deployment runs its latest spec's template on every pod
// and every desired pod is available: the point at which a selector migration may remove
// the old pods.
func FullyAvailable(d *appsv1.Deployment) bool {
	if d == nil || d.Status.ObservedGeneration < d.Generation {
		return false
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.UpdatedReplicas == s.Replicas && s.UpdatedReplicas >= want && s.AvailableReplicas >= want &&
		deploymentCondition(d, appsv1.DeploymentAvailable) == corev1.ConditionTrue
}

func cond(typ string, ok bool, reason, message string) metav1.Condition {
	s := metav1.ConditionFalse
	if ok {
		s = metav1.ConditionTrue
	}
	return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: message}
}
