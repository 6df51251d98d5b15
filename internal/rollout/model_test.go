package rollout

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// TestModel drives Held, Judge and Confirm, through the controller's protocol (reconcile, in
// model_operator_test.go), over a simulated cluster: the deployment and replicaset
// controllers, the garbage collector, the kubelet, an HPA, users, informers that lag, and
// manager restarts at any step between the operator's writes. Each seed is a random walk;
// after every step it checks the invariants of docs/design/rollout-decision.md:
//
//  1. a template whose rollout completed is never rolled back afterwards: no write moves the
//     Deployment from it to the target while the Deployment shows it complete, or after the
//     operator recorded it (readyTemplate); a completion that no look recorded and that no
//     stored object shows any more cannot be known, and is not asked for;
//  2. a rollback names as failed the template of the spec's intent, and a pod of that
//     template had the problem for the grace (or its deadline passed): the spec's template is
//     never judged on another template's pods;
//  3. a rollback target (and readyTemplate) served, its stored intent is its own, and it is
//     another intent than the failed template's (a rollback changes what the operator applies);
//  4. nothing is applied twice: a failed template is rolled back (the Deployment given the
//     target) at most once per spec, request and user change;
//  5. a rollback holds until the user changes the spec's template, the request or
//     autoRollback (or its failed template's rollout completed before it took effect, which
//     voids it): its status record is not lost, and the failed template is never applied
//     again (not after a restart, from a lagging cache, or when the Deployment is made again);
//  6. a rollback that is due is made: a look that reads caches in sync with the store makes
//     it, and while one is due something wakes the operator (an event or its recheck).
//  7. a rollback ends when the design says it does: once no record holds (the user changed
//     the spec's template, the request or autoRollback, or its failed template's rollout
//     completed before it took effect), a look that reads caches in sync with the store
//     applies the spec's template.
//
// `go test ./internal/rollout -run TestModel` runs the fixed seeds; -model.seeds and
// -model.steps run more, -model.seed one (with -v, its whole trace), and -model.all goes on
// after a failure and reports every seed that fails.
func TestModel(t *testing.T) {
	seeds, first := uint64(*modelSeeds), uint64(1)
	if *modelSeed != 0 {
		seeds, first = 1, *modelSeed
	}
	var total stats
	failed := 0
	for seed := first; seed < first+seeds; seed++ {
		w := newWorld(seed)
		if failure := w.walk(*modelSteps, *modelSeed != 0 && testing.Verbose()); failure != "" {
			report := fmt.Sprintf("seed %d (rerun: go test ./internal/rollout -run TestModel -model.seed %d -v):\n%s", seed, seed, failure)
			if !*modelAll {
				t.Fatal(report)
			}
			t.Error(report)
			failed++
		}
		total.add(w.truth.stats)
	}
	t.Logf("%d seeds × %d steps, %d failed: %+v", seeds, *modelSteps, failed, total)
	if seeds >= 1000 && (total.rollbacks == 0 || total.deletionsHeld == 0 || total.restartsMidLook == 0 || total.cleanLooksDue == 0 ||
		total.cleanLooksReleased == 0) {
		t.Fatalf("the walks no longer reach the cases the invariants guard: %+v", total)
	}
}

var (
	modelSeeds = flag.Int("model.seeds", 2000, "how many seeds TestModel walks")
	modelSteps = flag.Int("model.steps", 3000, "how many steps each walk takes")
	modelSeed  = flag.Uint64("model.seed", 0, "walk only this seed")
	modelAll   = flag.Bool("model.all", false, "walk every seed, and report each that fails")
)

// actor is one of the things that change the world; act says what it did ("" nothing).
type actor struct {
	name   string
	weight int
	act    func(*world) string
}

var actors = []actor{
	{"clock", 60, (*world).tick},
	{"deployment controller", 120, (*world).syncDeployment},
	{"replicaset controller", 100, (*world).syncReplicaSets},
	{"kubelet", 100, (*world).kubelet},
	{"garbage collector", 30, (*world).collectGarbage},
	{"hpa", 20, (*world).autoscale},
	{"user", 3, (*world).user},
	{"informer", 100, (*world).deliver},
	{"operator", 250, (*world).operate},
	{"restart", 8, (*world).restartCounted},
}

// walk takes steps at random; it returns a report of the first violated invariant, or "".
func (w *world) walk(steps int, verbose bool) string {
	weights := 0
	for _, a := range actors {
		weights += a.weight
	}
	for step := 1; step <= steps; step++ {
		if o := &w.op; !o.requeueAt.IsZero() && !o.requeueAt.After(w.now) {
			o.queued, o.requeueAt = true, time.Time{}
		}
		n := w.rng.IntN(weights)
		var a actor
		for _, a = range actors {
			if n -= a.weight; n < 0 {
				break
			}
		}
		if what := a.act(w); what != "" {
			line := fmt.Sprintf("%4d %6v  %-22s %s", step, w.now.Sub(w.start), a.name, what)
			w.trace.add(line)
			if verbose {
				fmt.Println(line)
			}
		}
		w.noteViolation(w.check())
		if w.violation != "" {
			return fmt.Sprintf("step %d: invariant %s\n\nlast steps:\n%s\n\nstate:\n%s",
				step, w.violation, strings.Join(w.trace.lines, "\n"), w.describe())
		}
	}
	return ""
}

// tick advances the clock, between looks (a look takes milliseconds; the other actors may
// still act between its writes). Informers deliver within seconds: at a tick each cache, but
// now and then one whose watch is reconnecting, shows every version stored before it.
func (w *world) tick() string {
	if w.op.next != nil {
		return ""
	}
	w.now = w.now.Add(w.between(time.Second, 6*time.Second))
	for i := range 4 {
		if w.chance(0.8) {
			w.deliverTo(i, informerHistory)
		}
	}
	return "tick"
}

// deliver moves one lagging informer on by a version or more.
func (w *world) deliver() string {
	if w.deliverOne() {
		return "delivered"
	}
	return ""
}

// deliverOne moves a lagging informer on by a version or more.
func (w *world) deliverOne() bool {
	var lagging []int
	for i, synced := range []bool{w.apps.synced(), w.deps.synced(), w.rss.synced(), w.pds.synced()} {
		if !synced {
			lagging = append(lagging, i)
		}
	}
	if len(lagging) == 0 {
		return false
	}
	w.deliverTo(lagging[w.rng.IntN(len(lagging))], 1+w.rng.IntN(3))
	return true
}

// deliverTo moves informer i (the MyApps', Deployments', ReplicaSets', pods') n versions on,
// queueing the MyApp when its watch would: the MyApp's generation or reconcile request, any
// Deployment or ReplicaSet change, a pod's problem or availability.
func (w *world) deliverTo(i, n int) {
	switch i {
	case 0:
		before := w.apps.cached()
		w.apps.catchUp(n)
		after := w.apps.cached()
		w.op.queued = w.op.queued || before.generation != after.generation || before.request != after.request
	case 1:
		if !w.deps.synced() {
			w.deps.catchUp(n)
			w.op.queued = true
		}
	case 2:
		if !w.rss.synced() {
			w.rss.catchUp(n)
			w.op.queued = true
		}
	case 3:
		before := w.pds.cached()
		w.pds.catchUp(n)
		w.op.queued = w.op.queued || !samePodEvents(before, w.pds.cached())
	}
}

// samePodEvents tells whether the operator's pod watch sees no change between two lists: each
// pod's availability and problem family.
func samePodEvents(a, b []pod) bool {
	return slices.EqualFunc(a, b, func(p, q pod) bool {
		return p.name == q.name && (p.phase == available) == (q.phase == available) && Family(p.reason) == Family(q.reason)
	})
}

// restartCounted restarts the manager, mostly while a look is between two writes.
func (w *world) restartCounted() string {
	if w.op.next == nil && w.chance(0.8) {
		return ""
	}
	w.truth.stats.restarts++
	if w.op.next != nil {
		w.truth.stats.restartsMidLook++
	}
	return w.restart()
}

// describe is the stored state, for a failure's report.
func (w *world) describe() string {
	var b strings.Builder
	a := w.app
	fmt.Fprintf(&b, "  MyApp rv %d gen %d: %s (%s) replicas %d autoscale %v autoRollback %v request %q; readyTemplate %q rolledBack %s\n",
		a.rv, a.generation, a.spec.version, w.fates[a.spec.version], a.spec.replicas, a.spec.autoscale, a.spec.autoRollback, a.request,
		a.status.readyTemplate, describeRecord(a.status.rolledBack))
	if d := w.dep; d != nil {
		fmt.Fprintf(&b, "  Deployment uid %d rv %d gen %d observed %d: %s replicas %d paused %v revision %d mark %s; status %d/%d/%d %s %s (%s)\n",
			d.uid, d.rv, d.generation, d.status.observedGeneration, d.tmpl.hash(), d.replicas, d.paused, d.revision, describeRecord(d.mark),
			d.status.replicas, d.status.updated, d.status.available, d.status.progressing.status, d.status.progressing.reason, d.status.progressing.rs)
	} else {
		b.WriteString("  no Deployment\n")
	}
	for _, rs := range w.sets {
		fmt.Fprintf(&b, "  ReplicaSet %s (owner %d) revision %d replicas %d status %d/%d\n", rs.hash, rs.owner, rs.revision, rs.replicas, rs.statusReplicas, rs.statusAvailable)
	}
	for _, p := range w.pods {
		fmt.Fprintf(&b, "  pod %s %s %s since %v\n", p.name, phaseNames[p.phase], p.reason, p.since.Sub(w.start))
	}
	r := w.truth.rollout
	fmt.Fprintf(&b, "  rollout of %s (uid %d): completed %v recorded %v; served %v; epoch %d\n  operator: queued %v requeue %v pending %q sightings %v",
		r.hash, r.uid, r.completed, r.recorded, keys(w.truth.served), w.epoch, w.op.queued, w.op.requeueAt.Sub(w.start), w.op.pending, w.op.sightings)
	return b.String()
}

func describeRecord(rb *examplev1.RollbackStatus) string {
	if rb == nil {
		return "none"
	}
	return fmt.Sprintf("{%s→%s %s spec %s request %q at %v}", rb.FailedTemplate, rb.Template, rb.Reason, rb.FailedSpec, rb.ReconcileRequest, rb.Time.Format("15:04:05"))
}

func keys(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}

func (s *stats) add(o stats) {
	s.rollbacks += o.rollbacks
	s.readyMoves += o.readyMoves
	s.restarts += o.restarts
	s.deletions += o.deletions
	s.deletionsHeld += o.deletionsHeld
	s.restartsMidLook += o.restartsMidLook
	s.completions += o.completions
	s.cleanLooksDue += o.cleanLooksDue
	s.cleanLooksReleased += o.cleanLooksReleased
	s.scalingEvents += o.scalingEvents
}
