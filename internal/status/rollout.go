package status

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// rollout is what the stored Deployment says of the rollout of the MyApp's current pod
// template.
type rollout struct {
	ready                     bool
	readyReason, readyMessage string
	busy                      bool
	busyReason, busyMessage   string
	// rolling: there is no Deployment yet, it does not take the current spec, the deployment
	// controller has not observed it, or pods of an older template remain: the pods that
	// start now are the current template's.
	rolling bool
	// serving: every pod the Deployment runs is of the current template and available, and
	// at least one is when one is wanted. Pods the Deployment cannot create do not count.
	serving bool
	// short: no pod is available while the Deployment wants some. (Its Available condition
	// is no measure of this: during a scale-up by more than maxUnavailable it is False while
	// every pod of the current template serves.)
	short bool
}

// blocked tells whether a problem that keeps pods from starting or from being created keeps
// the current template from becoming available: while a template rolls out (the new pods are
// the ones that start), or while no pod is available. Beside a Deployment that runs only its
// current template with at least one pod available, such a problem is one the app serves in
// spite of (one pod of ten that cannot pull, the extra pods of a scale-up refused by a quota).
func (r rollout) blocked() bool { return r.rolling || r.short }

// rolloutOf reads the stored Deployment as `kubectl rollout status` does, from stored state
// only, so that every reconcile reaches the same answer:
//
//   - stale says the Deployment does not carry the MyApp's current intent (its apply failed
//     or the spec cannot be built): whatever its pods do, they do not run the current spec;
//   - until the deployment controller has observed the Deployment's latest generation, its
//     counts describe an older spec;
//   - pods of an older template remain while status.replicas exceeds status.updatedReplicas;
//   - a rollout past its progress deadline is not done;
//   - the rollout is done when at least spec.replicas pods run the current template and all
//     of them are available, which for a Deployment that wants pods means at least one. The
//     Deployment's Available condition does not decide: it is True with no pod available once
//     maxUnavailable reaches spec.replicas, and False during a large scale-up.
//
// The one exception to `kubectl rollout status` is a Deployment that cannot create pods
// (ReplicaFailure: a quota, a LimitRange, Pod Security) beyond those that run the current
// template and serve: kubectl would wait forever, while the app serves its current template.
// It is Ready, and Degraded (decide). Messages carry no pod counts, so the status is not
// rewritten at every pod transition; the counts live in status fields.
func rolloutOf(d *appsv1.Deployment, stale bool) rollout {
	var r rollout
	setBusy := func(reason, message string) {
		r.busy, r.busyReason, r.busyMessage = true, reason, message
		r.readyReason, r.readyMessage = reason, message
	}
	if d == nil {
		r.rolling = true
		setBusy(examplev1.ReasonRollingOut, "Waiting for the Deployment to be created")
		return r
	}
	if stale {
		r.rolling = true
		setBusy(examplev1.ReasonRollingOut, fmt.Sprintf("Waiting for Deployment %s to take the MyApp's current spec", d.Name))
		return r
	}
	if d.Status.ObservedGeneration < d.Generation {
		r.rolling = true
		setBusy(examplev1.ReasonRollingOut, fmt.Sprintf("Waiting for the deployment controller to observe Deployment %s's latest spec", d.Name))
		return r
	}

	want := wantedReplicas(d)
	s := d.Status
	oldPods := s.Replicas > s.UpdatedReplicas
	availableFalse := deploymentCondition(d, appsv1.DeploymentAvailable) == corev1.ConditionFalse
	r.rolling = oldPods
	r.short = want > 0 && s.AvailableReplicas < 1
	r.serving = !oldPods && !r.short && s.AvailableReplicas >= s.UpdatedReplicas
	complete := r.serving && s.UpdatedReplicas >= want && !progressDeadlineExceeded(d)

	switch {
	case complete || (r.serving && replicaFailure(d) != nil):
		r.ready, r.readyReason = true, examplev1.ReasonAvailable
		r.readyMessage = fmt.Sprintf("Deployment %s is available and runs the current pod template", d.Name)
	case oldPods:
		setBusy(examplev1.ReasonRollingOut, fmt.Sprintf("Deployment %s is replacing pods of an older template", d.Name))
	case s.UpdatedReplicas >= want && availableFalse:
		setBusy(examplev1.ReasonUnavailable, fmt.Sprintf("Deployment %s has fewer available pods than it requires", d.Name))
	default:
		setBusy(examplev1.ReasonScaling, fmt.Sprintf("Deployment %s is bringing its pods to the desired number and availability", d.Name))
	}
	return r
}

// wantedReplicas is the Deployment's spec.replicas, 1 when unset (the API server's default).
func wantedReplicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas != nil {
		return *d.Spec.Replicas
	}
	return 1
}

// deploymentProblem reports the Deployment's own problems once the deployment controller has
// observed its latest spec: a rollout past its progress deadline, and pods it cannot create.
// Either is terminal (Stalled) while it blocks the MyApp (rollout.blocked); otherwise, e.g.
// the extra pods of a scale-up refused by a quota, or a scale-up whose pods find no node, it
// is a problem the app serves in spite of: Degraded.
func deploymentProblem(d *appsv1.Deployment, r rollout) *Failure {
	if d == nil || d.Status.ObservedGeneration < d.Generation {
		return nil
	}
	if progressDeadlineExceeded(d) {
		what := "rolling out"
		if !r.blocked() {
			what = "scaling; the pods it runs serve the current template"
		}
		return &Failure{Reason: examplev1.ReasonProgressDeadlineExceeded, Terminal: r.blocked(),
			Message: fmt.Sprintf("Deployment %s did not finish %s within its progress deadline; "+
				"check the events and logs of its pods", d.Name, what)}
	}
	if c := replicaFailure(d); c != nil {
		what := "the pods of its current template"
		if !r.blocked() {
			what = "all the pods it wants; those it runs serve the current template"
		}
		return &Failure{Reason: examplev1.ReasonReplicaFailure, Terminal: r.blocked(),
			Message: fmt.Sprintf("Deployment %s cannot create %s: the API server refuses them%s%s. "+
				"`kubectl describe replicasets -l %s=%s` shows its answer",
				d.Name, what, reasonInParens(c.Reason), replicaFailureHint(c.Message), selectorLabel, d.Name)}
	}
	return nil
}

// progressDeadlineExceeded tells whether the deployment controller gave up on the rollout.
func progressDeadlineExceeded(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == reasonProgressDeadlineExceeded {
			return true
		}
	}
	return false
}

// reasonProgressDeadlineExceeded is the reason the deployment controller gives its
// Progressing condition when a rollout passes its deadline (an API constant of apps/v1).
const reasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"

// selectorLabel is the label every pod and ReplicaSet of a MyApp carries, with its name.
const selectorLabel = "myapp.example.com/name"

// replicaFailure is the Deployment's ReplicaFailure condition while it is True, or nil.
func replicaFailure(d *appsv1.Deployment) *appsv1.DeploymentCondition {
	for i, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// reasonInParens is a machine reason (FailedCreate) in parentheses, or nothing when it is
// empty or not a single word.
func reasonInParens(reason string) string {
	if reason == "" || len(reason) > 64 || strings.ContainsAny(reason, " \t\n") {
		return ""
	}
	return " (" + reason + ")"
}
