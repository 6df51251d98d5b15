package controller

import (
	"flag"
	"fmt"
	"iter"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/rollout"
)

// TestCanaryModel drives the canary's acting decisions through the reconciler's protocol
// over a simulated cluster, one seed a random walk: the deployment controller for the stable
// and the canary Deployments, a Gateway's controller that programs the route's weights late,
// caches that lag behind the store, users who push templates (good ones, one whose pods crash,
// one that fails its metric check), send manual controls and reconcile requests, an
// EndpointSlice controller that lists the Services' pods late, and manager restarts between
// any two of the operator's writes. The look of the model is the controller's
// (canaryBefore, holdRecorded, applyCanary, reconcileCanaryServices and Reconcile's
// cacheCurrent) built from the same pieces: rollout.Canary, the status round trip, stableKept,
// the route's tag (routeCarries) and desired.CanaryReplicas. It must change with them.
//
// After every step it checks:
//
//  1. the stable pods never take a template before it serves: every write of the stable
//     Deployment's template gives it status.readyTemplate as stored, or the canary's template
//     once the stored record lets the stable pods take it (a promotion that moved them), or
//     the spec's with no readyTemplate yet (a first release);
//  2. the Gateway never sends a share to a canary that has no pods: while it sends the canary
//     a weight, the canary Deployment as stored asks for pods;
//  3. an aborted canary gets no share: no route write gives the canary a weight while the
//     stored record is aborted, and a stored abort has weight 0, but for an abort after a
//     promotion moved the stable pods, which keeps the promotion's weight until they are back;
//  4. the recorded weight never exceeds the recorded size;
//  5. the Gateway never sends a share to a Service whose EndpointSlices list no pod: while
//     it sends the canary a weight, the canary Service lists pods; while the route splits and
//     sends the stable pods a share, their Service lists pods;
//  6. the requests go back to the stable pods a promotion moved (aborted, or given up for a
//     newer template) only once their Service lists every one of them again: the Gateway
//     sends them a share only then.
//
// `go test ./internal/controller -run TestCanaryModel` walks the fixed seeds; -canary.seeds
// and -canary.steps walk more, -canary.seed one, with -v its trace.
func TestCanaryModel(t *testing.T) {
	seeds, first := uint64(*canarySeeds), uint64(1)
	if *canarySeed != 0 {
		seeds, first = 1, *canarySeed
	}
	var total canaryStats
	for seed := first; seed < first+seeds; seed++ {
		w := newCanaryWorld(seed)
		if failure := w.walk(*canarySteps, *canarySeed != 0 && testing.Verbose()); failure != "" {
			t.Fatalf("seed %d (rerun: go test ./internal/controller -run TestCanaryModel -canary.seed %d -v):\n%s", seed, seed, failure)
		}
		total.add(w.stats)
	}
	t.Logf("%d seeds × %d steps: %+v", seeds, *canarySteps, total)
	if seeds >= 200 && (uint64(total.aborts) < seeds/4 || uint64(total.promotions) < seeds/4 || total.staleLooks == 0 ||
		total.unrecorded == 0 || total.restarts == 0 || total.movedAborts == 0 || total.movedPushes == 0) {
		t.Fatalf("the walks no longer reach the cases the invariants guard: %+v", total)
	}
}

var (
	canarySeeds = flag.Int("canary.seeds", 300, "how many seeds TestCanaryModel walks")
	canarySteps = flag.Int("canary.steps", 10000, "how many steps each walk takes")
	canarySeed  = flag.Uint64("canary.seed", 0, "walk only this seed")
)

type canaryStats struct {
	aborts, promotions, staleLooks, unrecorded, restarts int
	// movedAborts and movedPushes count aborts and new templates after a promotion moved the
	// stable pods.
	movedAborts, movedPushes int
}

func (s *canaryStats) add(o canaryStats) {
	s.movedAborts += o.movedAborts
	s.movedPushes += o.movedPushes
	s.aborts += o.aborts
	s.promotions += o.promotions
	s.staleLooks += o.staleLooks
	s.unrecorded += o.unrecorded
	s.restarts += o.restarts
}

// The templates users push: good ones, one whose pods crash, one whose requests fail.
const (
	goodA, goodB, crashes, fails5xx = "good-a", "good-b", "crashes", "fails-5xx"
	stableReplicasOfModel           = 4
)

// modelApp is the MyApp as stored: what the spec asks, and the status the operator wrote.
type modelApp struct {
	rv       int
	template string // the spec's template
	request  string
	control  rollout.CanaryControl
	token    string
	ready    string                  // status.readyTemplate
	canary   *examplev1.CanaryStatus // status.canary
}

// modelDeployment is a Deployment as stored and as its controller runs it.
type modelDeployment struct {
	template  string // the pod template applied
	replicas  int32
	running   string // the template of its available pods
	available int32
}

// modelListing is what a Service's EndpointSlices list: n ready pods of template.
type modelListing struct {
	template string
	n        int32
}

// modelRoute is the HTTPRoute as stored, and the Gateway's word on it.
type modelRoute struct {
	generation int
	weight     int32 // the canary's weight
	tag        string
	accepted   int // the generation the Gateway's controller accepted
}

type canaryWorld struct {
	rnd   *rand.Rand
	now   time.Time
	steps []rollout.CanaryStep

	app            modelApp
	stable, canary modelDeployment
	route          modelRoute
	programmed     int32 // the canary's weight the Gateway sends
	// what the EndpointSlices of the canary's and the stable pods' Services list
	canaryListed, stableListed modelListing
	// movedBack is set while a canary whose promotion moved the stable pods is aborted or
	// given up, until the stable pods all run readyTemplate again
	movedBack bool

	// the operator's caches, each a copy of the store at some earlier step
	appCache                 modelApp
	stableCache, canaryCache modelDeployment
	lookStable               modelDeployment // the stable Deployment as the running look knows it
	routeCache               modelRoute
	canaryListedCache        modelListing
	stableListedCache        modelListing
	written                  int // the MyApp version the operator's last status write produced (0: none since the start)
	look                     func() (string, bool)
	stop                     func()
	queued                   bool
	trace                    []string
	failure                  string
	stats                    canaryStats
}

func newCanaryWorld(seed uint64) *canaryWorld {
	w := &canaryWorld{
		rnd:   rand.New(rand.NewPCG(seed, 42)),
		now:   time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC),
		steps: []rollout.CanaryStep{{Weight: 10}, {Pause: 30 * time.Second}, {Weight: 50}, {Pause: 0}},
		app:   modelApp{rv: 1, template: goodA},
	}
	w.queued = true
	w.syncCaches()
	return w
}

func (w *canaryWorld) syncCaches() {
	w.appCache, w.stableCache, w.canaryCache, w.routeCache = w.app, w.stable, w.canary, w.route
	w.canaryListedCache, w.stableListedCache = w.canaryListed, w.stableListed
}

// walk takes n steps, checking the invariants after each; it returns the first failure with
// the trace that led to it.
func (w *canaryWorld) walk(n int, verbose bool) string {
	for i := 0; i < n && w.failure == ""; i++ {
		what := w.step()
		if what != "" {
			line := fmt.Sprintf("%4d %s: %s", i, w.now.Format("15:04:05"), what)
			w.trace = append(w.trace, line)
			if verbose {
				fmt.Println(line)
			}
		}
		w.check()
	}
	if w.failure == "" {
		return ""
	}
	tail := w.trace
	if len(tail) > 60 {
		tail = tail[len(tail)-60:]
	}
	return w.failure + "\n" + strings.Join(tail, "\n")
}

func (w *canaryWorld) step() string {
	w.now = w.now.Add(time.Duration(w.rnd.Int64N(int64(3 * time.Second))))
	switch r := w.rnd.IntN(1000); {
	case r < 300:
		return w.operate()
	case r < 400:
		return w.deploymentController()
	case r < 480:
		return w.gateway()
	case r < 560:
		return w.endpointSliceController()
	case r < 660:
		return w.syncACache()
	case r < 680:
		return w.user()
	case r < 683:
		return w.restart()
	case r < 730:
		w.queued = true
		return "an event queued the MyApp"
	default:
		w.now = w.now.Add(time.Duration(w.rnd.Int64N(int64(20 * time.Second))))
		w.queued = true
		return "time passed; the recheck queued the MyApp"
	}
}

// operate runs the operator's look one write further, or starts one.
func (w *canaryWorld) operate() string {
	if w.look == nil {
		if !w.queued {
			return ""
		}
		w.queued = false
		w.look, w.stop = iter.Pull(w.reconcile())
	}
	what, ok := w.look()
	if !ok {
		w.look, w.stop = nil, nil
		return "look done"
	}
	return what
}

func (w *canaryWorld) restart() string {
	if w.stop != nil {
		w.stop()
	}
	w.look, w.stop, w.written, w.queued = nil, nil, 0, true
	w.syncCaches()
	w.stats.restarts++
	return "restarted the manager"
}

// reconcile is the controller's look at a MyApp with spec.canary; each write is a step.
func (w *canaryWorld) reconcile() iter.Seq[string] {
	return func(yield func(string) bool) {
		app := w.appCache
		w.lookStable = w.stableCache
		if w.written != 0 && app.rv != w.written {
			// cacheCurrent: an empty status patch guarded by the cached version.
			if !yield("confirms the cached MyApp") {
				return
			}
			if w.app.rv != app.rv {
				w.stats.staleLooks++
				w.queued = true
				return
			}
			w.written = app.rv
		}
		stored, _ := canaryRecordOf(app.canary)
		f := rollout.CanaryFacts{
			Spec:  rollout.Spec{Template: app.template, Request: app.request},
			Steps: w.steps, ReadyTemplate: app.ready, Record: stored, Control: app.control, Token: app.token,
			StableServed: true, Now: w.now,
		}
		if stored != nil {
			w.judge(stored, &f)
		}
		next, ok := w.confirmMove(yield, app, f)
		if !ok {
			return
		}
		record := stored
		recorded := canaryStatusOf(next, nil, nil)
		if !sameStatus(recorded, app.canary) {
			if !yield(fmt.Sprintf("records %s", describeRecord(next))) {
				return
			}
			if w.app.rv != app.rv {
				// holdRecorded: the children follow the stored record; the stable pods stay
				// where either record keeps them.
				w.stats.unrecorded++
				w.queued = true
				w.act(yield, app, stored, stableKept(app.template, stored, next))
				return
			}
			w.app.canary = recorded
			w.app.rv++
			w.written = w.app.rv
			app.canary, app.rv = recorded, w.app.rv
			record, _ = canaryRecordOf(recorded)
			if next != nil && next.Phase == rollout.CanaryAborted && (stored == nil || stored.Phase != rollout.CanaryAborted) {
				w.stats.aborts++
				if stored != nil && stored.StableMoved {
					w.stats.movedAborts++
				}
			}
			if next == nil && stored != nil && stored.Phase == rollout.CanaryFinishing {
				w.stats.promotions++
			}

		}
		if !w.act(yield, app, record, stableKept(app.template, record)) {
			return
		}
		// The stable Deployment's rollout completed a template: readyTemplate moves (the
		// rollout decision's part, guarded by the MyApp's version).
		if c := w.lookStable; c.running != "" && c.running == c.template && c.available == stableReplicasOfModel && c.running != app.ready {
			if !yield("records readyTemplate " + c.running) {
				return
			}
			if w.app.rv == app.rv {
				w.app.ready = c.running
				w.app.rv++
				w.written = w.app.rv
			}
		}
		w.queued = w.queued || record != nil
	}
}

// confirmMove is confirmRise: the step machine's record for f, or the stored one when it moves
// requests to pods the store does not show serving (a weight rise: the canary Deployment and
// its Service's slices; the return to the stable pods: their Service's slices), decided again
// without StableRestored when the stable pods a promotion moved are not all listed. ok is
// false when the look stopped.
func (w *canaryWorld) confirmMove(yield func(string) bool, app modelApp, f rollout.CanaryFacts) (*rollout.CanaryRecord, bool) {
	stored, next := f.Record, rollout.Canary(f)
	switch {
	case stored != nil && next != nil && stored.StableMoved && next.Weight < stored.Weight && next.Phase != rollout.CanaryFinishing:
		// stableRestoredLive: the stable pods' Service, as stored, lists every one of them.
		if !yield("confirms the stable pods' Service lists them all with the API server") {
			return nil, false
		}
		if !restored(w.stable, w.stableListed, app.ready) {
			w.queued = true
			f.StableRestored = false
			return rollout.Canary(f), true
		}
	case stored != nil && next != nil && next.Weight > stored.Weight:
		// canaryServesLive: a rise is confirmed with the canary Deployment and its Service's
		// EndpointSlices as stored.
		if !yield("confirms the canary Deployment and its Service's EndpointSlices with the API server") {
			return nil, false
		}
		if !serves(w.canary, stored) || !lists(w.canaryListed, w.canary.running, desired.CanaryReplicas(stableReplicasOfModel, stored.Size), 0) {
			w.queued = true
			return stored, true
		}
	case stored != nil && next != nil && next.Phase == rollout.CanaryFinishing && stored.Phase != rollout.CanaryFinishing:
		// confirmRise: the requests go back to the stable pods once their Service, as
		// stored, lists them.
		if !yield("confirms the stable pods' Service's EndpointSlices with the API server") {
			return nil, false
		}
		if !lists(w.stableListed, app.ready, 1, w.stableAvailableOf(app.ready)) {
			w.queued = true
			return stored, true
		}
	}
	return next, true
}

// judge gathers the facts of the stored record from the caches, as canaryJudges does.
func (w *canaryWorld) judge(rec *rollout.CanaryRecord, f *rollout.CanaryFacts) {
	c := w.canaryCache
	f.CanaryReady = serves(c, rec)
	if rec.Template == crashes && c.template == crashes && c.replicas > 0 {
		f.CanaryFailure = &rollout.Failure{Reason: examplev1.ReasonCrashLoopBackOff}
	}
	if rec.Weight > 0 && rec.Template == fails5xx && w.programmed > 0 {
		f.Analysis, f.AnalysisMessage = rollout.AnalysisFailed, "success-rate 0.8 < 0.99"
	}
	if w.rnd.IntN(10) == 0 && rec.Weight > 0 {
		f.Analysis, f.AnalysisMessage = rollout.AnalysisInconclusive, "Prometheus unreachable"
	}
	r := w.routeCache
	f.WeightInForce = r.accepted == r.generation && r.weight == rec.Weight && r.tag == canaryWeightTag(rec)
	// routeFacts: the Services' listings as cached (listing.servesAll).
	f.CanaryListed = f.CanaryReady && lists(w.canaryListedCache, c.running, desired.CanaryReplicas(stableReplicasOfModel, rec.Size), 0)
	f.StableServed = w.stableCache.running == f.ReadyTemplate && lists(w.stableListedCache, f.ReadyTemplate, 1, w.stableCache.available)
	f.StableRestored = restored(w.stableCache, w.stableListedCache, f.ReadyTemplate)
}

// lists tells whether the listing l lists pods of template, at least least of them and at least
// the ready ones (listing.servesAll).
func lists(l modelListing, template string, least, ready int32) bool {
	return template != "" && l.template == template && l.n >= max(least, ready)
}

// restored tells whether the stable Deployment d carries and runs template, every pod
// available, and the listing l lists them all (rollout.StableRestored and the listing).
func restored(d modelDeployment, l modelListing, template string) bool {
	return d.template == template && d.running == template && d.available == stableReplicasOfModel &&
		lists(l, template, stableReplicasOfModel, d.available)
}

// stableAvailableOf is how many stable pods of template are available, as stored.
func (w *canaryWorld) stableAvailableOf(template string) int32 {
	if w.stable.running == template {
		return w.stable.available
	}
	return 0
}

// serves tells whether the canary Deployment c runs, available, the pods rec's size asks for,
// of its template (rollout.CanaryPods).
func serves(c modelDeployment, rec *rollout.CanaryRecord) bool {
	want := desired.CanaryReplicas(stableReplicasOfModel, rec.Size)
	return want > 0 && c.template == rec.Template && c.replicas == want && c.running == rec.Template && c.available >= want
}

// act applies the children from record, each a write of its own: the stable Deployment (the
// template that serves when keep, else the spec's), the canary Deployment, the route.
func (w *canaryWorld) act(yield func(string) bool, app modelApp, record *rollout.CanaryRecord, keep bool) bool {
	template := app.template
	if keep && app.ready != "" {
		template = app.ready
	}
	if w.stableCache.template != template {
		if !yield("applies the stable Deployment with " + template) {
			return false
		}
		w.checkStableWrite(template)
		w.stable.template, w.stable.replicas = template, stableReplicasOfModel
		// The apply answers with the Deployment as stored: the look knows it from then on.
		w.lookStable = w.stable
	}
	switch {
	case record == nil:
		if w.canaryCache.replicas != 0 || w.canaryCache.template != "" {
			if !yield("deletes the canary Deployment") {
				return false
			}
			w.canary = modelDeployment{}
		}
	case app.template == record.Template:
		replicas := desired.CanaryReplicas(stableReplicasOfModel, record.Size)
		if w.canaryCache.replicas != replicas || w.canaryCache.template != record.Template {
			if !yield(fmt.Sprintf("applies the canary Deployment: %d pods of %s", replicas, record.Template)) {
				return false
			}
			if w.canary.template != record.Template {
				w.canary.running, w.canary.available = "", 0
			}
			w.canary.template, w.canary.replicas = record.Template, replicas
		}
	}
	if app.ready == "" {
		return true
	}
	// routeSplits: the route first splits once the stable pods' Service lists them, as stored.
	if w.routeCache.generation == 0 && !lists(w.stableListed, app.ready, 1, w.stableAvailableOf(app.ready)) {
		return true
	}
	weight, tag := int32(0), canaryWeightTag(record)
	if record != nil {
		weight = record.Weight
	}
	if w.routeCache.weight != weight || w.routeCache.tag != tag {
		if !yield(fmt.Sprintf("applies the route: %d%% to the canary", weight)) {
			return false
		}
		if rec, _ := canaryRecordOf(w.app.canary); weight > 0 && rec != nil && rec.Phase == rollout.CanaryAborted && !rec.StableMoved {
			w.fail("a route write gives the aborted canary %d%%: %s", weight, describeRecord(rec))
		}
		if w.route.generation == 0 || w.route.weight != weight {
			// Made, or its spec changed: a new generation (the tag alone, an annotation, is
			// no change of the spec).
			w.route.generation++
		}
		w.route.weight, w.route.tag = weight, tag
	}
	return true
}

// deploymentController moves one Deployment's pods one step toward its spec.
func (w *canaryWorld) deploymentController() string {
	d, name := &w.stable, "stable"
	if w.rnd.IntN(2) == 0 {
		d, name = &w.canary, "canary"
	}
	switch {
	case d.running != d.template:
		d.running, d.available = d.template, 0
		return fmt.Sprintf("the %s Deployment's pods are replaced by %s", name, d.template)
	case d.template == crashes:
		return ""
	case d.available < d.replicas:
		d.available++
		return fmt.Sprintf("a %s pod became available (%d of %d)", name, d.available, d.replicas)
	case d.available > d.replicas:
		d.available = d.replicas
		return fmt.Sprintf("the %s Deployment scaled down to %d", name, d.replicas)
	}
	return ""
}

// endpointSliceController lists, in one Service's EndpointSlices, the pods it selects as they
// are now: the canary's pods, or the stable Deployment's pods of readyTemplate as stored
// (the stable pods' Service selects them by their pod-template-hash).
func (w *canaryWorld) endpointSliceController() string {
	canary := modelListing{template: w.canary.running, n: w.canary.available}
	stable := modelListing{template: w.app.ready, n: w.stableAvailableOf(w.app.ready)}
	if w.rnd.IntN(2) == 0 && canary != w.canaryListed {
		w.canaryListed = canary
		return fmt.Sprintf("the canary Service lists %d pods of %s", canary.n, canary.template)
	}
	if stable != w.stableListed {
		w.stableListed = stable
		return fmt.Sprintf("the stable pods' Service lists %d pods of %s", stable.n, stable.template)
	}
	return ""
}

// gateway programs the route as stored, and reports it accepted.
func (w *canaryWorld) gateway() string {
	if w.programmed == w.route.weight && w.route.accepted == w.route.generation {
		return ""
	}
	w.programmed, w.route.accepted = w.route.weight, w.route.generation
	return fmt.Sprintf("the Gateway sends the canary %d%% (generation %d)", w.programmed, w.route.generation)
}

func (w *canaryWorld) syncACache() string {
	switch w.rnd.IntN(5) {
	case 0:
		w.appCache = w.app
		return "the MyApp's cache caught up"
	case 1:
		w.stableCache = w.stable
		w.queued = true
		return "the stable Deployment's cache caught up"
	case 2:
		w.canaryCache = w.canary
		w.queued = true
		return "the canary Deployment's cache caught up"
	case 3:
		w.canaryListedCache, w.stableListedCache = w.canaryListed, w.stableListed
		w.queued = true
		return "the EndpointSlices' cache caught up"
	}
	w.routeCache = w.route
	w.queued = true
	return "the route's cache caught up"
}

func (w *canaryWorld) user() string {
	defer func() { w.app.rv++; w.queued = true }()
	switch w.rnd.IntN(8) {
	case 0:
		t := []string{goodA, goodB, goodA, goodB, crashes, fails5xx}[w.rnd.IntN(6)]
		if rec, _ := canaryRecordOf(w.app.canary); rec != nil && rec.StableMoved && t != rec.Template {
			w.stats.movedPushes++
		}
		w.app.template = t
		return "the user pushes " + t
	case 1:
		w.app.request = w.now.String()
		return "the user requests a reconcile"
	case 2:
		w.app.rv++
		return "the user labels the MyApp"
	}
	c := []rollout.CanaryControl{rollout.ControlPromote, rollout.ControlResume, rollout.ControlResume, rollout.ControlPause,
		rollout.ControlAbort}[w.rnd.IntN(5)]
	w.app.control, w.app.token = c, fmt.Sprintf("%s/%d", c, w.app.rv)
	return "the user sets the canary control " + string(c)
}

// checkStableWrite is invariant 1, at a write of the stable Deployment's template.
func (w *canaryWorld) checkStableWrite(template string) {
	rec, _ := canaryRecordOf(w.app.canary)
	switch {
	case w.app.ready == "" || template == w.app.ready:
	case rec != nil && rollout.StableTakesTemplate(rec, rec.Template) && template == rec.Template:
	default:
		w.fail("the stable Deployment is given %s, which does not serve (readyTemplate %s, record %s)", template, w.app.ready, describeRecord(rec))
	}
}

// check is invariants 2 to 4, after every step.
func (w *canaryWorld) check() {
	if w.programmed > 0 && w.canary.replicas == 0 {
		w.fail("the Gateway sends the canary %d%% and the canary Deployment asks for no pod", w.programmed)
	}
	if w.programmed > 0 && w.canaryListed.n == 0 {
		w.fail("the Gateway sends the canary %d%% and its Service lists no pod", w.programmed)
	}
	if w.route.generation > 0 && w.programmed < 100 && w.stableListed.n == 0 {
		w.fail("the Gateway sends the stable pods %d%% and their Service lists no pod", 100-w.programmed)
	}
	rec, _ := canaryRecordOf(w.app.canary)
	if rec != nil && rec.StableMoved && !rollout.StableTakesTemplate(rec, w.app.template) {
		w.movedBack = true
	}
	if w.movedBack && w.stableListed == (modelListing{w.app.ready, stableReplicasOfModel}) && w.stable.running == w.app.ready {
		w.movedBack = false
	}
	if w.movedBack && w.programmed < 100 && w.route.generation > 0 {
		w.fail("the Gateway sends the stable pods a promotion moved %d%% before their Service lists them all", 100-w.programmed)
	}
	if rec == nil {
		return
	}
	if rec.Weight > rec.Size {
		w.fail("the record's weight exceeds its size: %s", describeRecord(rec))
	}
	if rec.Phase == rollout.CanaryAborted && rec.Weight != 0 && !rec.StableMoved {
		w.fail("an aborted canary keeps a weight: %s", describeRecord(rec))
	}
}

func (w *canaryWorld) fail(format string, args ...any) {
	if w.failure == "" {
		w.failure = fmt.Sprintf(format, args...)
	}
}

func sameStatus(a, b *examplev1.CanaryStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	return fmt.Sprint(*a) == fmt.Sprint(*b)
}

func describeRecord(rec *rollout.CanaryRecord) string {
	if rec == nil {
		return "none"
	}
	return fmt.Sprintf("%s of %s (stable %s) step %d weight %d size %d moved %t", rec.Phase, rec.Template, rec.Stable,
		rec.Step, rec.Weight, rec.Size, rec.StableMoved)
}
