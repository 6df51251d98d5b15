package rollout

import (
	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Held is the rollback in force, or nil. A rollback holds while the spec asks for the template
// that failed, under the reconcile request it was made under, with autoRollback on: a new
// template, a new request or opting out ends it. It is read from the MyApp's status first,
// then from the Deployment's mark, because a reconcile may see either write of the rollback
// before the other (a lagging cache, or a manager stopped between the two writes) and must
// hold from whichever it sees.
//
// A record that has not taken effect (the Deployment carries its failed template, not its
// mark) is void once that rollout completed: a completed template is never rolled back. That
// happens when the record was decided a moment before the completion: its write is guarded by
// the MyApp's resourceVersion only, and the rollback's apply, guarded by the Deployment's, then
// conflicts. A rollback that has not taken effect is better dropped than made.
//
// While the spec's template is unknown (Spec.Template is ""), whichever record there is stays
// in force: the reconciler cannot tell whether the spec still asks for the failed template, and
// ending a rollback would apply a template it cannot build.
func Held(f Facts) *examplev1.RollbackStatus {
	var mark *examplev1.RollbackStatus
	if f.Deployment != nil {
		mark = f.Deployment.Mark
	}
	if f.Spec.Template == "" {
		if f.RolledBack != nil {
			return f.RolledBack
		}
		return mark
	}
	for _, rb := range []*examplev1.RollbackStatus{f.RolledBack, mark} {
		if holds(rb, f.Spec) && !completedBefore(rb, f.Deployment) {
			return rb
		}
	}
	return nil
}

// holds tells whether the rollback rb holds for the spec.
func holds(rb *examplev1.RollbackStatus, spec Spec) bool {
	return rb != nil && spec.AutoRollback && rb.FailedSpec == spec.Template && rb.ReconcileRequest == spec.Request
}

// completedBefore tells whether the Deployment carries rb's failed template, observed and
// completed, without rb as its mark: the rollout completed before the rollback took effect. The
// mark decides, not Current alone: a view of the Deployment and its ReplicaSets from two caches
// may show a template the Deployment already left (CurrentTemplate).
func completedBefore(rb *examplev1.RollbackStatus, d *Deployment) bool {
	return observed(d) && d.Current == rb.FailedTemplate && (d.Mark == nil || *d.Mark != *rb) && completed(d)
}
