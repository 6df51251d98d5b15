package status

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// decide computes the five conditions from one reading of the observation, so that they
// never disagree. Stalled means the user must act now: a failure only the user can fix that
// keeps the current pod template from becoming available, a pod problem that does, or a
// Deployment that gave up. A problem the MyApp serves in spite of (a pod that cannot start
// beside a serving Deployment, the extra pods of a scale-up refused by a quota, an autoscaler
// or disruption budget the API server refuses, an autoscaler without metrics) is Degraded
// only, and Ready stays what the Deployment says.
func decide(app *examplev1.MyApp, obs Observed, now metav1.Time) []metav1.Condition {
	r := rolloutOf(obs.Deployment, obs.DeploymentStale)

	var retrying *Failure
	stalled, degraded := actedOn(obs)
	for i := range obs.Failures {
		f := &obs.Failures[i]
		switch {
		case f.Terminal && f.ServedWithout:
			// No pod waits for this child (the autoscaler, the disruption budget): it never
			// keeps the current template from becoming available, so it is Degraded only.
		case f.Terminal && stalled == nil:
			stalled = f
		case !f.Terminal && retrying == nil:
			retrying = f
		}
		if degraded == nil {
			degraded = f
		}
	}
	if stalled == nil {
		r.canaryUnderWay(obs.Canary)
	}
	if pods := podsProblem(app, obs.Pods); pods != nil {
		if r.blocked() {
			pods.Terminal = true
			if stalled == nil {
				stalled = pods
			}
		} else if degraded == nil {
			degraded = pods
		}
	}
	if p := deploymentProblem(obs.Deployment, r); p != nil {
		if p.Terminal && stalled == nil {
			stalled = p
		} else if degraded == nil {
			degraded = p
		}
	}
	if stalled != nil {
		degraded = stalled
	}
	if degraded == nil {
		degraded = autoscalerDegraded(app, obs.Autoscaler, now)
	}

	if obs.DeploymentStale && retrying != nil {
		// The Deployment does not take the current spec because its apply fails: say so.
		r.readyReason, r.readyMessage = retrying.Reason, retrying.Message
		r.busyReason, r.busyMessage = retrying.Reason, retrying.Message
	}
	r.unreachable(obs.Unreachable)
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

// unreachable makes a rollout that is done not Ready while the app is not yet reachable where
// the spec exposes it (w, when set): the pods serve, and the Gateway has not answered.
func (r *rollout) unreachable(w *Failure) {
	if w == nil || !r.ready {
		return
	}
	r.ready, r.readyReason, r.readyMessage = false, w.Reason, w.Message
	if !r.busy {
		r.busy, r.busyReason, r.busyMessage = true, w.Reason, w.Message
	}
}

type progress struct {
	active          bool
	reason, message string
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

// actedOn is the problem of what the operator did about a failure, a rollback or an aborted
// canary, which is the story whatever else went wrong; else what keeps a canary from judging.
func actedOn(obs Observed) (stalled, degraded *Failure) {
	if obs.RolledBack != nil {
		return rolledBack(obs.RolledBack), nil
	}
	if stalled := canaryStalled(obs.Canary); stalled != nil {
		return stalled, nil
	}
	return nil, canaryDegraded(obs.Canary)
}
