package rollout

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Judge decides about the rollout the Deployment carries. It judges the Deployment's current
// template once the deployment controller observed it (observed), tells whether it completed
// (completed), moves ReadyTemplate to it when it did, and, while it is the spec's own template
// and has not completed, tells whether it failed (failure). It proposes a rollback only when the
// spec's template failed, autoRollback is on, the template is not the target, a target exists,
// its intent is stored and is not the spec's own (returning to it would change nothing), and no
// rollback holds already (Held): a rollback is made once, then held.
func Judge(f Facts) Verdict {
	v := Verdict{ReadyTemplate: f.ReadyTemplate}
	d := f.Deployment
	if f.Spec.Template == "" || !observed(d) {
		return v
	}
	v.Judged = d.Current
	if v.Completed = completed(d); v.Completed {
		if d.Applied != "" {
			v.ReadyTemplate = d.Current
		}
		return v
	}
	if d.Applied != f.Spec.Template {
		// The Deployment carries another template than the spec's (a rollback holds, or the
		// apply failed): the spec's template is not the one its pods run.
		return v
	}
	v.Failure, v.Recheck = failure(f)
	if v.Failure == nil || !f.Spec.AutoRollback || f.ReadyTemplate == "" || d.Current == f.ReadyTemplate ||
		!f.TargetStored || f.TargetIntent == f.Spec.Template || Held(f) != nil {
		return v
	}
	v.RollBack = &examplev1.RollbackStatus{
		Generation:       f.Spec.Generation,
		FailedSpec:       f.Spec.Template,
		ReconcileRequest: f.Spec.Request,
		FailedTemplate:   d.Current,
		Template:         f.ReadyTemplate,
		Reason:           v.Failure.Reason,
		Time:             metav1.NewTime(f.Now),
	}
	return v
}

// observed tells whether the deployment controller has acted on the Deployment's spec: its
// observedGeneration covers its generation, it is not paused (a paused Deployment's
// observedGeneration moves without a rollout), and the ReplicaSet at its revision is known.
// Before that, its revision, counts and pods are an older template's, and judging them would
// blame the spec's template for them (`kubectl rollout status` waits for the same).
func observed(d *Deployment) bool {
	return d != nil && d.ObservedGeneration >= d.Generation && !d.Paused && d.Current != ""
}

// completed tells whether the observed current template completed its rollout.
//
// At least one pod must be available: a template rolled out at zero replicas "completes" for
// the deployment controller (it sets NewReplicaSetAvailable with no pod at all), but no pod of
// it ever served, and a template that never served is no rollback target.
//
// Every pod must be the current template's (status.replicas equals status.updatedReplicas),
// even when the Progressing condition says NewReplicaSetAvailable, because that condition is
// sticky: syncRolloutStatus skips its evaluation while replicas equal updatedReplicas and the
// reason is NewReplicaSetAvailable, and a return to an existing ReplicaSet (getNewReplicaSet
// finds it) keeps whatever condition the Deployment had. Right after such a return the
// condition still says NewReplicaSetAvailable of the template left, while the old pods run.
// With every pod current the condition is the deployment controller's word for the current
// template, and it keeps it through scale-ups and crashes, as this does.
//
// Without the condition, the counts decide: at least spec.replicas current pods, all
// available, and the progress deadline not passed.
func completed(d *Deployment) bool {
	if d.AvailableReplicas < 1 || d.StatusReplicas != d.UpdatedReplicas {
		return false
	}
	if d.NewReplicaSetAvailable {
		return true
	}
	return d.UpdatedReplicas >= d.Replicas && d.AvailableReplicas >= d.UpdatedReplicas && !d.DeadlineExceeded
}

// failure is the failure of the judged template, due, or nil; recheck is how soon a problem
// within its grace becomes due when none is. A problem counts only on a pod of the judged
// template (other templates' pods are old ones being replaced, or ones a rollback left), and
// only once it has lasted the grace since it was first seen: counting from the pod's creation
// would make a pod that waited for a node fail at its first pull error. A passed progress
// deadline fails the rollout when no pod problem is due.
func failure(f Facts) (fail *Failure, recheck time.Duration) {
	var due *Problem
	for i := range f.Problems {
		p := &f.Problems[i]
		if p.Template != f.Deployment.Current || Family(p.Reason) == "" {
			continue
		}
		seen := p.FirstSeen
		if seen.IsZero() {
			seen = f.Now
		}
		if wait := seen.Add(f.Grace).Sub(f.Now); wait > 0 {
			if recheck == 0 || wait < recheck {
				recheck = wait
			}
			continue
		}
		if due == nil || before(p, due) {
			due = p
		}
	}
	switch {
	case due != nil:
		p := *due
		return &Failure{Reason: Family(p.Reason), Problem: &p}, 0
	case f.Deployment.DeadlineExceeded:
		return &Failure{Reason: examplev1.ReasonProgressDeadlineExceeded}, 0
	}
	return nil, recheck
}
