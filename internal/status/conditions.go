package status

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// decide computes the five conditions from one reading of the observation, so that they
// never disagree. Stalled means the user must act now: a failure only the user can fix, a
// pod problem that keeps the current pod template from becoming available, or a Deployment
// that gave up. A problem the MyApp runs in spite of (a pod that cannot start beside a
// rolled-out, available Deployment, an autoscaler without metrics) is Degraded only, and
// Ready stays what the Deployment says.
func decide(app *examplev1.MyApp, obs Observed, now metav1.Time) []metav1.Condition {
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

	r := rolloutOf(app, obs.Deployment, obs.TemplateChanged)
	if pods := podsProblem(app, obs.Pods); pods != nil {
		if r.blockedByPods() {
			pods.Terminal = true
			if stalled == nil {
				stalled = pods
			}
		} else if degraded == nil {
			degraded = pods
		}
	}
	if stalled == nil {
		stalled = deploymentStalled(obs.Deployment)
	}
	if stalled != nil {
		degraded = stalled
	}
	if degraded == nil {
		degraded = autoscalerDegraded(obs.Autoscaler, now)
	}

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
		cond(examplev1.ConditionStalled, false, examplev1.ReasonAsExpected, "No problem needs attention"),
		cond(examplev1.ConditionProgressing, busy.active, busy.reason, busy.message),
		cond(examplev1.ConditionDegraded, false, examplev1.ReasonAsExpected, "No problems observed"),
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
		out[1].Reason, out[3].Reason = examplev1.ReasonRolloutComplete, examplev1.ReasonRolloutComplete
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
	// available is the Deployment's Available condition; rolling, a template rollout under
	// way (old pods remain, or a new template is not yet rolled out).
	available, rolling bool
}

// blockedByPods tells whether pods that cannot start keep the MyApp from its spec: while no
// Deployment runs yet, while a new template rolls out (the new pods are the ones that start),
// or while the Deployment is not Available. Beside a rolled-out, available Deployment they
// are a problem the Deployment serves in spite of.
func (r rollout) blockedByPods() bool { return !r.available || r.rolling }

// rolloutOf reads the Deployment as `kubectl rollout status` does, but tells a template
// rollout (old pods remain) from a scale (only the count differs): Ready stays True through
// a scale while the Deployment is Available, and a scale is under way only while the pods
// the Deployment asks for are not there yet. templateChanged says that this reconcile applied
// a new pod template: until the deployment controller has observed it, the Deployment's
// status describes the old template, so Ready is False at once (no `kubectl wait` returns
// on the old pods); the reconciles that follow, which apply nothing, find that Ready False
// and keep it until the deployment controller has looked. Any other spec change not yet
// observed (the autoscaler's or a user's scale) keeps what Ready said; while that is False
// for a rollout, scale or availability reason, Reconciling gives the same reason, and a
// True Ready is under way only while the pods the spec asks for are not there. Every state
// that is not Ready is under way (Reconciling) unless it is Stalled, as kstatus expects.
// Messages carry no pod counts, so the status is not rewritten at every pod transition; the
// counts live in status fields.
func rolloutOf(app *examplev1.MyApp, d *appsv1.Deployment, templateChanged bool) rollout {
	if d == nil {
		msg := "Waiting for the Deployment to be created"
		return rollout{readyReason: examplev1.ReasonRollingOut, readyMessage: msg, busy: true, busyReason: examplev1.ReasonRollingOut, busyMessage: msg}
	}
	r := rollout{available: deploymentCondition(d, appsv1.DeploymentAvailable) == corev1.ConditionTrue}
	if templateChanged && d.Status.ObservedGeneration < d.Generation {
		msg := fmt.Sprintf("Waiting for the deployment controller to roll out Deployment %s's new pod template", d.Name)
		r.rolling, r.busy, r.busyReason, r.busyMessage = true, true, examplev1.ReasonRollingOut, msg
		r.readyReason, r.readyMessage = examplev1.ReasonRollingOut, msg
		return r
	}

	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	templateDone := s.UpdatedReplicas == s.Replicas
	podsThere := s.UpdatedReplicas >= want && s.AvailableReplicas >= want

	switch {
	case !templateDone:
		r.rolling, r.busy, r.busyReason = true, true, examplev1.ReasonRollingOut
		r.busyMessage = fmt.Sprintf("Deployment %s is replacing pods of an older template", d.Name)
	case !podsThere:
		r.busy, r.busyReason = true, examplev1.ReasonScaling
		r.busyMessage = fmt.Sprintf("Deployment %s is bringing its pods to the desired number and availability", d.Name)
	}
	switch {
	case r.available && templateDone:
		r.ready, r.readyReason = true, examplev1.ReasonAvailable
		r.readyMessage = fmt.Sprintf("Deployment %s is available and runs the current pod template", d.Name)
	case r.busy:
		r.readyReason, r.readyMessage = r.busyReason, r.busyMessage
	default:
		r.readyReason = examplev1.ReasonUnavailable
		r.readyMessage = fmt.Sprintf("Deployment %s has fewer available pods than it requires", d.Name)
		r.busy, r.busyReason, r.busyMessage = true, r.readyReason, r.readyMessage
	}
	if prev := meta.FindStatusCondition(app.Status.Conditions, examplev1.ConditionReady); prev != nil &&
		d.Status.ObservedGeneration < d.Generation {
		r.ready, r.readyReason, r.readyMessage = prev.Status == metav1.ConditionTrue, prev.Reason, prev.Message
		switch {
		case r.ready:
		case prev.Reason == examplev1.ReasonRollingOut || prev.Reason == examplev1.ReasonScaling ||
			prev.Reason == examplev1.ReasonUnavailable:
			// Until the deployment controller observes the spec, its counts describe an older
			// one: the MyApp is under way for the reason Ready gives, so a reconcile that learns
			// nothing new rewrites nothing.
			r.busy, r.busyReason, r.busyMessage = true, prev.Reason, prev.Message
		case !r.busy:
			r.busy, r.busyReason = true, examplev1.ReasonRollingOut
			r.busyMessage = fmt.Sprintf("Waiting for the deployment controller to observe Deployment %s's latest spec", d.Name)
		}
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
			return &Failure{Reason: examplev1.ReasonReplicaFailure, Terminal: true,
				Message: fmt.Sprintf("Deployment %s cannot create pods: %s", d.Name, StableAdmissionMessage(c.Message)) + replicaFailureHint(c.Message)}
		}
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return &Failure{Reason: examplev1.ReasonProgressDeadlineExceeded, Terminal: true,
				Message: fmt.Sprintf("Deployment %s did not finish rolling out within its progress deadline; "+
					"check the events and logs of its pods", d.Name)}
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
