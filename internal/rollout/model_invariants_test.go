package rollout

import (
	"fmt"
	"slices"
	"time"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// The ground truth the invariants read, kept by the world as it changes (never by the
// operator), and the invariants, checked after every step and at each of the operator's
// writes of the Deployment.

// truth is what happened in the cluster.
type truth struct {
	// rollout is the Deployment's current rollout (its uid and template), and what became
	// known of it since it began: completed, that a stored version of the Deployment showed it
	// complete as the design defines it (completeAsDesigned), which voids a rollback not yet
	// made; recorded, that the status named it readyTemplate. A completion that no look
	// recorded, and that no stored object shows any more (every pod of it gone or unavailable
	// since), cannot be known: it is the design's limit, and invariant 1 holds the operator to
	// what can be known.
	rollout struct {
		uid                 int
		hash                string
		completed, recorded bool
	}
	// served: templates of which some pod was available.
	served map[string]bool
	// deadline: templates for which the deployment controller set ProgressDeadlineExceeded.
	deadline map[string]bool
	// problems: by template, each problem a pod of it began, with when.
	problems map[string][]problemBegan
	// templates: the template of each hash a Deployment carried.
	templates map[string]template
	// records: every rollback stored (in the status or as the mark); made: the rollback that
	// took effect for each spec, request and user change.
	records map[examplev1.RollbackStatus]bool
	made    map[holdKey]examplev1.RollbackStatus
	hold    hold
	// lastReady and stats are for the coverage report.
	lastReady string
	stats     stats
}

// hold is the latest rollback recorded, and what became of it.
type hold struct {
	record   *examplev1.RollbackStatus
	epoch    int  // the user's changes when it was recorded
	inStatus bool // the status named it
	made     bool // it took effect: the Deployment was given the target
	void     bool // before it took effect, its failed template's rollout completed
}

type problemBegan struct {
	pod, family string
	since       time.Time
}

// holdKey is what a rollback is made once for: the spec's template, the reconcile request,
// and the user's changes since (epoch).
type holdKey struct {
	spec, request string
	epoch         int
}

type stats struct {
	rollbacks, readyMoves, restarts, deletions, deletionsHeld, restartsMidLook, completions, cleanLooksDue, cleanLooksReleased, scalingEvents int
}

func newTruth() truth {
	return truth{served: map[string]bool{}, deadline: map[string]bool{}, problems: map[string][]problemBegan{},
		templates: map[string]template{}, records: map[examplev1.RollbackStatus]bool{}, made: map[holdKey]examplev1.RollbackStatus{}}
}

// sawDeployment notes what a stored Deployment says of its rollout.
func (t *truth) sawDeployment(w *world) {
	d := w.dep
	h := d.tmpl.hash()
	t.templates[h] = d.tmpl
	if t.rollout.uid != d.uid || t.rollout.hash != h {
		t.rollout.uid, t.rollout.hash = d.uid, h
		t.rollout.completed, t.rollout.recorded = false, false
	}
	if c := d.status.progressing; c.reason == reasonDeadlineExceeded && c.rs != "" {
		t.deadline[c.rs] = true
	}
	if completeAsDesigned(w, d) {
		if !t.rollout.completed {
			t.stats.completions++
		}
		t.rollout.completed = true
		if r := t.hold.record; r != nil && !t.hold.made && r.FailedTemplate == h {
			t.hold.void = true
		}
	}
}

// completeAsDesigned tells whether a version of the Deployment shows its template's rollout
// complete, as the design defines it.
func completeAsDesigned(w *world, d *deployment) bool {
	h := d.tmpl.hash()
	s, c := d.status, d.status.progressing
	nrsa := c.status == "True" && c.reason == reasonNewRSAvailable
	counts := s.updated >= d.replicas && s.available >= s.updated && (c.reason != reasonDeadlineExceeded || c.rs != h)
	return s.observedGeneration >= d.generation && !d.paused && w.setOf(d.uid, h) >= 0 && s.replicas == s.updated &&
		s.available >= 1 && (nrsa || counts)
}

// sawPods notes the templates that served.
func (t *truth) sawPods(w *world) {
	for _, p := range w.pods {
		if p.phase == available {
			t.served[p.hash] = true
		}
	}
}

func (t *truth) problemBegan(p *pod) {
	if p.family != "" {
		t.problems[p.hash] = append(t.problems[p.hash], problemBegan{p.name, p.family, p.since})
	}
}

// check checks the invariants after a step; it returns the first violated, or "".
func (w *world) check() string {
	t := &w.truth
	records := []*examplev1.RollbackStatus{w.app.status.rolledBack}
	if w.dep != nil {
		records = append(records, w.dep.mark)
	}
	for _, rb := range records {
		if rb != nil && !t.records[*rb] {
			t.records[*rb] = true
			if v := w.checkRecord(*rb); v != "" {
				return v
			}
		}
	}
	rt := w.app.status.readyTemplate
	if rt == t.rollout.hash {
		t.rollout.recorded = true
	}
	if rt != t.lastReady {
		t.lastReady = rt
		t.stats.readyMoves++
	}
	if rt != "" && (!t.served[rt] || w.revisions[rt] != t.templates[rt].intent) {
		return fmt.Sprintf("3: readyTemplate %s never served, or its stored intent %q is not its template's %q", rt, w.revisions[rt], t.templates[rt].intent)
	}
	if h := t.holding(w); h != nil {
		switch {
		case sameRecord(w.app.status.rolledBack, h):
			t.hold.inStatus = true
		case t.hold.inStatus:
			return fmt.Sprintf("5: the rollback of %s to %s was lost from the status (now %s)", h.FailedTemplate, h.Template, describeRecord(w.app.status.rolledBack))
		}
	}
	return w.checkLiveness()
}

// checkRecord checks a rollback when it is first stored, in the status or as the mark: it
// names the template of the spec's intent, whose pods really failed (2), and a target that
// served, of another intent (3).
func (w *world) checkRecord(rb examplev1.RollbackStatus) string {
	t := &w.truth
	t.stats.rollbacks++
	failed, ok := t.templates[rb.FailedTemplate]
	switch {
	case !ok || failed.intent.digest() != rb.FailedSpec || rb.FailedSpec != w.app.spec.version.digest():
		return fmt.Sprintf("2: rolled back %s (intent %q) for spec %s, while the spec asks for %s",
			rb.FailedTemplate, failed.intent, rb.FailedSpec, w.app.spec.version.digest())
	case !w.failedTruly(rb):
		return fmt.Sprintf("2: rolled back %s for %s at %v: no pod of it had that problem for the grace, nor did its deadline pass",
			rb.FailedTemplate, rb.Reason, rb.Time.Sub(w.start))
	case !t.served[rb.Template]:
		return fmt.Sprintf("3: rolled back to %s, which never served", rb.Template)
	case w.revisions[rb.Template] == failed.intent:
		return fmt.Sprintf("3: rolled back %s to %s, of the same intent %s: a rollback that changes nothing", rb.FailedTemplate, rb.Template, failed.intent)
	}
	void := t.rollout.hash == rb.FailedTemplate && t.rollout.completed // decided on a view older than the completion
	t.hold = hold{record: &rb, epoch: w.epoch, void: void}
	return ""
}

// failedTruly tells whether the template's rollout really failed as the record says: a pod
// of it began a problem of that family at least the grace before the decision, or the
// deployment controller's deadline passed for it.
func (w *world) failedTruly(rb examplev1.RollbackStatus) bool {
	if rb.Reason == examplev1.ReasonProgressDeadlineExceeded {
		return w.truth.deadline[rb.FailedTemplate]
	}
	return slices.ContainsFunc(w.truth.problems[rb.FailedTemplate], func(p problemBegan) bool {
		return p.family == rb.Reason && !p.since.Add(grace).After(rb.Time.Time)
	})
}

// wroteDeployment checks an operator's write of the Deployment, before it is made. A rollback
// takes effect by the write that moves the Deployment from the failed template to the target
// (with the record as mark): never from a template whose rollout completed, as the Deployment
// shows it then or as the operator recorded it (1), and once per
// spec, request and user change (4: nothing is applied twice). While a rollback holds, the
// failed template's intent is never applied again, whatever a restart, a lagging cache or a
// deleted Deployment hid (5).
func (w *world) wroteDeployment(intent version, mark *examplev1.RollbackStatus) string {
	t := &w.truth
	if d := w.dep; mark != nil && d != nil && d.tmpl.hash() == mark.FailedTemplate && intent != d.tmpl.intent {
		if completeAsDesigned(w, d) || t.rollout.recorded {
			return fmt.Sprintf("1: rolled back %s to %s, after its rollout completed (the Deployment shows it: %v)",
				mark.FailedTemplate, mark.Template, completeAsDesigned(w, d))
		}
		// After an opt-out and back in, a record still in the status holds again and is applied
		// again: the user's change rolled the failed template out, not the operator.
		key := holdKey{mark.FailedSpec, mark.ReconcileRequest, w.epoch}
		if first, ok := t.made[key]; ok {
			return fmt.Sprintf("4: rolled back %s again (first at %v, again at %v) for the same spec and request",
				mark.FailedTemplate, first.Time.Sub(w.start), mark.Time.Sub(w.start))
		}
		t.made[key] = *mark
	}
	if mark != nil && sameRecord(t.hold.record, mark) {
		t.hold.made = true
	}
	if h := t.holding(w); h != nil && t.templates[h.FailedTemplate].intent == intent && w.revisions[h.Template] != intent {
		return fmt.Sprintf("5: applied %s again while the rollback of %s to %s holds", intent, h.FailedTemplate, h.Template)
	}
	return ""
}

// holding is the rollback that must hold: the latest, unless the user changed the spec's
// template, the request or autoRollback since, or it was void (its failed template's rollout
// completed before the rollback took effect).
func (t *truth) holding(w *world) *examplev1.RollbackStatus {
	if h := t.hold; h.record != nil && h.epoch == w.epoch && !h.void {
		return h.record
	}
	return nil
}

// dueRollback is the design's rule for a rollback that is due, evaluated on the stored
// objects and the running manager's sightings, written apart from Judge: the spec's template,
// observed and carried by the Deployment, not completed, with a problem seen for the grace or
// its deadline passed; autoRollback on, a stored target of another intent, nothing held.
func (w *world) dueRollback() bool {
	a, d := w.app, w.dep
	if !a.spec.autoRollback || w.inputUnreadable || d == nil || d.paused || d.status.observedGeneration < d.generation ||
		d.tmpl.intent != a.spec.version {
		return false
	}
	h := d.tmpl.hash()
	if n := w.setOf(d.uid, h); n < 0 || w.sets[n].revision != d.revision {
		return false
	}
	if rt := a.status.readyTemplate; rt == "" || rt == h || w.revisions[rt] == "" || w.revisions[rt] == a.spec.version {
		return false
	}
	c := d.status.progressing
	deadline := c.status == "False" && c.reason == reasonDeadlineExceeded && c.rs == h
	complete := w.rolloutComplete(deadline)
	for _, rb := range []*examplev1.RollbackStatus{a.status.rolledBack, d.mark} {
		// A record holds, unless the rollout of its failed template completed before it took effect.
		void := rb != nil && rb.FailedTemplate == h && !sameRecord(d.mark, rb) && complete
		if rb != nil && rb.FailedSpec == a.spec.version.digest() && rb.ReconcileRequest == a.request && !void {
			return false
		}
	}
	if complete {
		return false
	}
	return w.problemSeenForGrace(h) || deadline
}

// rolloutComplete: the Deployment's status says its template's rollout completed (the
// deployment controller's NewReplicaSetAvailable, or every replica updated and available
// without a passed deadline), with a pod available.
func (w *world) rolloutComplete(deadline bool) bool {
	s, c := w.dep.status, w.dep.status.progressing
	nrsa := c.status == "True" && c.reason == reasonNewRSAvailable
	return s.replicas == s.updated && s.available >= 1 && (nrsa || s.updated >= w.dep.replicas && s.available >= s.updated && !deadline)
}

// problemSeenForGrace: a waiting pod of template h has a problem the running manager first saw
// a grace ago or earlier.
func (w *world) problemSeenForGrace(h string) bool {
	for _, p := range w.pods {
		if f := Family(p.reason); p.hash == h && p.phase == waiting && f != "" {
			if first, ok := w.op.sightings[sighting{p.name, f}]; ok && !first.Add(grace).After(w.now) {
				return true
			}
		}
	}
	return false
}

// judged checks the liveness of a look's decision: a look that read caches in sync with the
// store, with nothing written by anyone but itself since, decides on the stored state; when a
// rollback is due on it, the look makes it (6); when no rollback holds by the design's rule,
// the look has applied the spec's template (7). applied says the look's apply, if it made
// one, was not refused.
func (w *world) judged(v Verdict, applied bool) {
	l := w.op.look
	if !l.clean || w.foreign != l.foreign {
		return
	}
	if w.dueRollback() {
		w.truth.stats.cleanLooksDue++
		if v.RollBack == nil {
			w.noteViolation(fmt.Sprintf("6: a rollback was due and a look in sync with the store did not make it (verdict %+v)", v))
		}
	}
	if d := w.dep; applied && d != nil && !w.inputUnreadable && !w.heldByDesign() {
		if w.app.status.rolledBack != nil || d.mark != nil {
			w.truth.stats.cleanLooksReleased++ // a record there, that holds no more
		}
		if d.tmpl.intent == w.app.spec.version {
			return
		}
		w.noteViolation(fmt.Sprintf("7: no rollback holds (status %s, mark %s), and a look in sync with the store left the Deployment on %s, not the spec's %s",
			describeRecord(w.app.status.rolledBack), describeRecord(d.mark), d.tmpl.intent, w.app.spec.version))
	}
}

// heldByDesign is the design's rule for a rollback in force, written apart from Held: a record
// (the status's or the Deployment's mark) of the spec's template and reconcile request, with
// autoRollback on, unless the Deployment shows its failed template's rollout completed
// without the record as its mark (it completed before the rollback took effect).
func (w *world) heldByDesign() bool {
	a, d := w.app, w.dep
	if !a.spec.autoRollback {
		return false
	}
	for _, rb := range []*examplev1.RollbackStatus{a.status.rolledBack, d.mark} {
		if rb == nil || rb.FailedSpec != a.spec.version.digest() || rb.ReconcileRequest != a.request {
			continue
		}
		if d.tmpl.hash() == rb.FailedTemplate && !sameRecord(d.mark, rb) && completeAsDesigned(w, d) {
			continue
		}
		return true
	}
	return false
}

// checkLiveness: while a rollback is due, something must wake the operator: a look in
// progress or queued, a requeue, or a cache that has news to deliver.
func (w *world) checkLiveness() string {
	o := &w.op
	if o.next == nil && !o.queued && o.requeueAt.IsZero() && w.cachesSynced() && w.dueRollback() {
		return "6: a rollback is due and nothing will wake the operator"
	}
	return ""
}

func (w *world) cachesSynced() bool {
	return w.apps.synced() && w.deps.synced() && w.rss.synced() && w.pds.synced()
}
