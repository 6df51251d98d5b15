package rollout

import (
	"fmt"
	"hash/fnv"
	"iter"
	"slices"
	"strconv"
	"time"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// The operator of the model. reconcile below is the model of the controller's protocol for
// the rollout decision (docs/design/rollout-decision.md, "Record, then act"): it must change
// with it, and the controller must follow it. Every write, and every read from the API server,
// is a step of its own (the look yields before it), so that the other actors run, and a
// restart can happen, between any two.

// grace is the rollout failure grace the operator runs with.
const grace = 30 * time.Second

// operator is the MyApp controller: a work queue of one key, the look in progress, and what
// it keeps in memory (the first sightings of pod problems), which a restart loses.
type operator struct {
	queued    bool
	requeueAt time.Time
	next      func() (string, bool) // the look in progress, paused before its next write
	stop      func()
	pending   string // the write the look makes when it resumes
	sightings map[sighting]time.Time
	look      lookStart
}

// sighting is a container's problem of one family.
type sighting struct{ pod, family string }

// lookStart is what the liveness invariant knows of the look in progress.
type lookStart struct {
	clean   bool  // the caches were synced when it read them
	foreign int64 // the last write by anyone else then
}

func newOperator() operator {
	return operator{queued: true, sightings: map[sighting]time.Time{}}
}

// operate runs the operator for one step: it makes the next write of the look in progress,
// or starts a look (reads, decides, up to its first write) when one is queued.
func (w *world) operate() string {
	o := &w.op
	what := "did " + o.pending
	if o.next == nil {
		if !o.queued {
			return ""
		}
		o.queued = false
		o.look = lookStart{clean: w.cachesSynced(), foreign: w.foreign}
		o.next, o.stop = iter.Pull(w.reconcile())
		what = "looked"
	}
	w.operating = true
	pending, ok := o.next()
	w.operating = false
	if !ok {
		o.next, o.stop, o.pending = nil, nil, ""
		return what + "; look done"
	}
	o.pending = pending
	return what + "; next: " + pending
}

// restart stops the manager wherever its look is and starts a new one: the memory is lost,
// the caches start from a fresh list, and every MyApp is queued.
func (w *world) restart() string {
	if w.op.stop != nil {
		w.op.stop()
	}
	w.op = newOperator()
	w.apps.sync()
	w.deps.sync()
	w.rss.sync()
	w.pds.sync()
	return "restarted the manager"
}

// reconcile is one look at the MyApp, as the controller makes it:
//
//  1. read the MyApp, the Deployment, its ReplicaSets and pods from the caches (the MyApp from
//     the API server when there is no Deployment), and note the first sightings of pod
//     problems; Held says which rollback is in force;
//  2. apply the Deployment: the held target's stored intent with the rollback's mark, or the
//     spec's intent without a mark, guarded by the cached Deployment's resourceVersion (on a
//     conflict the look goes on without knowing what the Deployment carries, and is queued
//     again);
//  3. Judge, with the intent the Deployment carries now; a verdict that acts (readyTemplate
//     moves, or a rollback) is confirmed (Confirm) with the Deployment read from the API
//     server, then its ReplicaSets;
//  4. when readyTemplate moves: store the template's intent (ControllerRevision), then write
//     status.readyTemplate;
//  5. when it rolls back: record status.rolledBack, guarded by the MyApp's resourceVersion,
//     then apply the target's stored intent with the mark, guarded by the Deployment's;
//  6. write status.rolledBack: the rollback in force, or none.
//
// Every status write is guarded by the resourceVersion of the MyApp it was decided from (or
// of this look's last write).
func (w *world) reconcile() iter.Seq[string] {
	return func(yield func(string) bool) {
		o := &w.op
		now := w.now
		app, cached, sets, pods := w.apps.cached(), w.deps.cached(), w.rss.cached(), w.pds.cached()
		if cached == nil {
			// Without a Deployment there is no mark: the MyApp's status is the only record of
			// a rollback, and the cache may not show it yet. One uncached read.
			app = w.app
		}
		o.sight(pods, now)
		f := w.lookFacts(app, pods, now)
		f.Deployment = w.facts(cached, sets, false, false)
		held := Held(f)

		// 2. The Deployment's intent.
		intent, mark, known := app.spec.version, (*examplev1.RollbackStatus)(nil), f.Spec.Template != ""
		if held != nil {
			intent, known = w.revisions[held.Template]
			mark = held
		}
		var replicas *int32
		if !app.spec.autoscale {
			replicas = &app.spec.replicas
		}
		d, applied := cached, known
		if known && (d == nil || d.tmpl.intent != intent || !sameRecord(d.mark, mark) || replicas != nil && d.replicas != *replicas) {
			if !yield("apply the Deployment (" + string(intent) + markNote(mark) + ")") {
				return
			}
			var err error
			var answer *deployment
			if cached == nil {
				answer, err = w.createDeployment(intent, mark, replicas)
			} else {
				answer, err = w.applyDeployment(cached.rv, intent, mark, replicas)
			}
			if err != nil {
				// What can be done still is (the status); what the Deployment carries is not
				// known, so the spec's template is not judged.
				applied, o.queued = false, true
			} else {
				d = answer
			}
		}

		// 3. Judge what the Deployment carries; confirm a verdict that acts.
		f.Deployment = w.facts(d, sets, applied, false)
		v := Judge(f)
		judged, acted := d, d // the Deployment readyTemplate's intent and the rollback's guard come from
		if v.ReadyTemplate != f.ReadyTemplate || v.RollBack != nil {
			if !yield("confirm: read the Deployment") {
				return
			}
			latest := w.read()
			if !yield("confirm: read its ReplicaSets") {
				return
			}
			sets = slices.Clone(w.sets)
			v = Confirm(f, w.facts(judged, sets, applied, false), w.facts(latest, sets, applied, true))
			acted = latest
		}
		w.judged(v, applied)

		// 4. A completed template becomes readyTemplate once its intent is stored.
		appRV, status := app.rv, app.status
		if v.ReadyTemplate != status.readyTemplate {
			if !yield("store the intent of " + v.ReadyTemplate) {
				return
			}
			w.storeRevision(v.ReadyTemplate, judged.tmpl.intent)
			if !yield("write readyTemplate " + v.ReadyTemplate) {
				return
			}
			rv, err := w.patchStatus(appRV, func(s *appStatus) { s.readyTemplate = v.ReadyTemplate })
			if err != nil {
				o.queued = true
				return
			}
			appRV, status.readyTemplate = rv, v.ReadyTemplate
		}

		// 5. Record, then act.
		if v.RollBack != nil {
			record := *v.RollBack
			record.Message = fmt.Sprintf("Rolled back to %s: %s failed (%s)", record.Template, record.FailedTemplate, record.Reason)
			if !yield("record the rollback of " + record.FailedTemplate + " to " + record.Template) {
				return
			}
			rv, err := w.patchStatus(appRV, func(s *appStatus) { s.rolledBack = &record })
			if err != nil {
				o.queued = true
				return
			}
			appRV, status.rolledBack = rv, &record
			if !yield("apply the rollback") {
				return
			}
			if _, err := w.applyDeployment(acted.rv, w.revisions[record.Template], &record, replicas); err != nil {
				o.queued = true
				return
			}
			held = &record
		}

		// 6. The rollback in force, or none.
		if !sameRecord(status.rolledBack, held) {
			if !yield("write rolledBack" + markNote(held)) {
				return
			}
			if _, err := w.patchStatus(appRV, func(s *appStatus) { s.rolledBack = held }); err != nil {
				o.queued = true
				return
			}
		}
		if v.Recheck > 0 {
			o.requeueAt = now.Add(v.Recheck)
		}
	}
}

// lookFacts are the facts of a look but the Deployment's: the MyApp it read, the problems of
// the pods its cache holds as the running manager first saw them, and the stored target.
func (w *world) lookFacts(app myApp, pods []pod, now time.Time) Facts {
	f := Facts{
		Spec:          Spec{Generation: app.generation, Template: app.spec.version.digest(), Request: app.request, AutoRollback: app.spec.autoRollback},
		ReadyTemplate: app.status.readyTemplate,
		RolledBack:    app.status.rolledBack,
		Problems:      w.op.problems(pods),
		Now:           now,
		Grace:         grace,
	}
	if w.inputUnreadable {
		f.Spec.Template = ""
	}
	if target, ok := w.revisions[f.ReadyTemplate]; ok {
		f.TargetStored, f.TargetIntent = true, target.digest()
	}
	return f
}

// facts is what the decision reads of a Deployment (nil: none), with its ReplicaSets, and
// the intent it carries when the operator knows its own (known).
func (w *world) facts(d *deployment, sets []replicaSet, known, read bool) *Deployment {
	if d == nil {
		return nil
	}
	c := d.status.progressing
	current := currentTemplate(d, sets, read)
	f := &Deployment{
		Generation: d.generation, ObservedGeneration: d.status.observedGeneration, Paused: d.paused,
		Replicas: d.replicas, StatusReplicas: d.status.replicas, UpdatedReplicas: d.status.updated, AvailableReplicas: d.status.available,
		NewReplicaSetAvailable: c.status == "True" && c.reason == reasonNewRSAvailable,
		DeadlineExceeded:       DeadlineExceeded(c.status, c.reason, fmt.Sprintf("ReplicaSet %q has timed out progressing.", c.rs), current),
		Current:                current,
		Mark:                   d.mark,
	}
	if known {
		f.Applied = d.tmpl.intent.digest()
	}
	return f
}

// currentTemplate is the hash of the Deployment's current template, as the controller
// reads it from the Deployment and the ReplicaSets it controls (CurrentTemplate); read says
// that the ReplicaSets were read whole from the API server, their templates compared with the
// Deployment's, as the confirmation does.
func currentTemplate(d *deployment, sets []replicaSet, read bool) string {
	var mine []ReplicaSet
	for _, rs := range sets {
		if rs.owner == d.uid {
			mine = append(mine, ReplicaSet{Hash: rs.hash, Revision: strconv.FormatInt(rs.revision, 10), Other: read && rs.tmpl != d.tmpl})
		}
	}
	return CurrentTemplate(strconv.FormatInt(d.revision, 10), mine)
}

// sight notes the first sighting of each container problem in the pods the cache shows. A
// sighting is kept while its pod exists and is not available (a crash-looping container runs
// unready between its back-offs), and forgotten when the pod serves or is gone.
func (o *operator) sight(pods []pod, now time.Time) {
	kept := map[sighting]time.Time{}
	for _, p := range pods {
		if p.phase == available {
			continue
		}
		for s, first := range o.sightings {
			if s.pod == p.name {
				kept[s] = first
			}
		}
		if f := Family(p.reason); p.phase == waiting && f != "" {
			if _, ok := kept[sighting{p.name, f}]; !ok {
				kept[sighting{p.name, f}] = now
			}
		}
	}
	o.sightings = kept
}

// problems are the problems of the pods the cache shows, with their first sightings.
func (o *operator) problems(pods []pod) []Problem {
	var out []Problem
	for _, p := range pods {
		if f := Family(p.reason); p.phase == waiting && f != "" {
			out = append(out, Problem{Template: p.hash, Pod: p.name, Container: failingContainer(p.hash), Image: string(p.intent),
				Reason: p.reason, FirstSeen: o.sightings[sighting{p.name, f}]})
		}
	}
	return out
}

// failingContainer is the container of a template's pods whose problem the kubelet reports:
// the application's, an init container's or a sidecar's, fixed per template (the one whose
// image or configuration is bad), so that the decision meets problems of every kind of
// container without a draw that would change the seeds' runs.
func failingContainer(hash string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(hash))
	return []string{"app", "migrate", "proxy"}[h.Sum32()%3]
}

func sameRecord(a, b *examplev1.RollbackStatus) bool {
	return a == b || a != nil && b != nil && *a == *b
}

func markNote(rb *examplev1.RollbackStatus) string {
	if rb == nil {
		return ""
	}
	return ", mark " + rb.FailedTemplate + "→" + rb.Template
}

// read is a GET of the Deployment from the API server.
func (w *world) read() *deployment {
	if w.dep == nil {
		return nil
	}
	c := *w.dep
	return &c
}
