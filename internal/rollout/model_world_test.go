package rollout

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// The world of the model: what the API server stores (a MyApp, its Deployment, ReplicaSets,
// pods and ControllerRevisions), every version of it that the operator's informers may still
// show, and the guarded writes the operator makes. The actors that change it are in
// model_cluster_test.go and model_users_test.go, the operator in model_operator_test.go, the
// ground truth and the invariants in model_invariants_test.go.

// version is the operator's intent for the pod template: one per image the user pushes
// (v1, v2, ...). Its digest is what Spec.Template and RollbackStatus.FailedSpec carry.
type version string

func (v version) digest() string { return "intent-" + string(v) }

// fate is how the pods of a version behave on the kubelet.
type fate int

const (
	good fate = iota
	slowStart
	pullError
	invalidImage
	crashLoop
	volumeMissing
	configError
)

var fateNames = [...]string{"good", "slow start", "pull error", "invalid image", "crash loop", "volume missing", "config error"}

func (f fate) String() string { return fateNames[f] }

// template is a Deployment's pod template: the operator's intent and a field another manager
// owns (kubectl rollout restart's restartedAt annotation, as a counter).
type template struct {
	intent      version
	restartedAt int
}

// hash is the pod-template-hash: a deterministic function of the template's content.
func (t template) hash() string { return string(t.intent) + "." + strconv.Itoa(t.restartedAt) }

// myApp is the stored MyApp.
type myApp struct {
	rv, generation int64
	spec           appSpec
	request        string // the reconcile-request annotation's value (its digest, in the model)
	status         appStatus
}

type appSpec struct {
	version      version
	replicas     int32
	autoscale    bool // an HPA owns the Deployment's replicas
	autoRollback bool
}

type appStatus struct {
	readyTemplate string
	rolledBack    *examplev1.RollbackStatus
}

// deployment is the stored Deployment. Records (mark) are never changed in place.
type deployment struct {
	uid        int
	rv         int64
	generation int64
	tmpl       template
	mark       *examplev1.RollbackStatus
	replicas   int32
	paused     bool
	revision   int64 // deployment.kubernetes.io/revision
	status     deploymentStatus
}

type deploymentStatus struct {
	observedGeneration           int64
	replicas, updated, available int32
	progressing                  condition
}

// condition is the Progressing condition; rs is the ReplicaSet its message names.
type condition struct {
	status, reason             string
	rs                         string
	lastUpdate, lastTransition time.Time
}

// The Progressing condition's reasons, as the deployment controller writes them.
const (
	reasonNewRSCreated     = "NewReplicaSetCreated"
	reasonFoundNewRS       = "FoundNewReplicaSet"
	reasonRSUpdated        = "ReplicaSetUpdated"
	reasonNewRSAvailable   = "NewReplicaSetAvailable"
	reasonDeadlineExceeded = "ProgressDeadlineExceeded"
	reasonPaused           = "DeploymentPaused"
	reasonResumed          = "DeploymentResumed"
)

// replicaSet is a stored ReplicaSet, named after its Deployment's uid and its hash.
type replicaSet struct {
	name, hash                      string
	owner                           int // the controlling Deployment's uid
	tmpl                            template
	revision                        int64
	replicas                        int32
	desired                         int32 // deployment.kubernetes.io/desired-replicas: the Deployment's replicas at its last scale
	statusReplicas, statusAvailable int32
	seq                             int // creation order
}

// phase is where a pod is in its life, as the kubelet reports it.
type phase int

const (
	unscheduled phase = iota // waiting for a node
	creating                 // ContainerCreating
	running                  // running, not ready
	available                // ready (minReadySeconds 0)
	waiting                  // a container waits with reason
)

var phaseNames = [...]string{"unscheduled", "creating", "running", "available", "waiting"}

// pod is a stored pod of a ReplicaSet.
type pod struct {
	name, rs, hash string
	intent         version
	created        time.Time
	phase          phase
	reason         string    // the waiting reason while phase is waiting
	next           time.Time // when the kubelet moves it next; zero: never
	flaky          bool      // a good template's pod whose node cannot pull for a while
	// family and since are the ground truth of its problem: the family of the problem it is
	// in (kept while it runs unready between crashes) and when that began.
	family string
	since  time.Time
}

// errConflict is the API server's answer to a write whose precondition (resourceVersion, or
// that the object does not exist yet) does not hold.
var errConflict = errors.New("conflict")

// world is the simulated cluster.
type world struct {
	rng   *rand.Rand
	start time.Time
	now   time.Time
	rv    int64 // the API server's resourceVersion counter
	uids  int
	seq   int

	app             myApp
	dep             *deployment
	sets            []replicaSet
	pods            []pod
	revisions       map[string]version // ControllerRevisions, owned by the MyApp: intent by hash
	fates           map[version]fate
	versions        int
	inputUnreadable bool // an input of the template (a ConfigMap) cannot be read
	epoch           int  // bumped by each user change of what a rollback holds for: the template, the request, autoRollback

	apps informer[myApp]
	deps informer[*deployment]
	rss  informer[[]replicaSet]
	pds  informer[[]pod]

	op        operator
	truth     truth
	trace     trace
	operating bool  // the write being made is the operator's
	foreign   int64 // the resourceVersion of the last write by anyone but the operator
	violation string
}

func newWorld(seed uint64) *world {
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	w := &world{
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), start: start, now: start,
		revisions: map[string]version{}, fates: map[version]fate{},
	}
	w.truth = newTruth()
	w.app = myApp{generation: 1, spec: appSpec{version: w.newVersion(good), replicas: int32(1 + w.rng.IntN(3)), autoRollback: true}}
	w.saveApp()
	w.deps.record(nil)
	w.rss.record(nil)
	w.pds.record(nil)
	w.op = newOperator()
	return w
}

// newVersion makes the next version with the given fate.
func (w *world) newVersion(f fate) version {
	w.versions++
	v := version(fmt.Sprintf("v%d", w.versions))
	w.fates[v] = f
	return v
}

// Every write bumps the resourceVersion, records the new state for the informers, and tells
// the ground truth.

func (w *world) bump() int64 {
	w.rv++
	if !w.operating {
		w.foreign = w.rv
	}
	return w.rv
}

func (w *world) saveApp() {
	w.app.rv = w.bump()
	w.apps.record(w.app)
}

func (w *world) saveDeployment() {
	w.bump()
	if w.dep == nil {
		w.deps.record(nil)
		return
	}
	w.dep.rv = w.rv
	c := *w.dep
	w.deps.record(&c)
	w.truth.sawDeployment(w)
}

func (w *world) saveSets() {
	w.bump()
	w.rss.record(slices.Clone(w.sets))
}

func (w *world) savePods() {
	w.bump()
	w.pds.record(slices.Clone(w.pods))
	w.truth.sawPods(w)
}

// The API server's answers to the operator's writes.

// applyDeployment is a server-side apply of the operator's fields of the Deployment: the
// template's intent, the rollback mark, and replicas unless an HPA owns them (replicas nil).
// rv, when not zero, is a precondition: the resourceVersion the apply was decided from.
// Fields of other managers (restartedAt) stay theirs.
func (w *world) applyDeployment(rv int64, intent version, mark *examplev1.RollbackStatus, replicas *int32) (*deployment, error) {
	d := w.dep
	if d == nil || rv != 0 && d.rv != rv {
		return nil, errConflict
	}
	w.noteViolation(w.wroteDeployment(intent, mark))
	specChanged := d.tmpl.intent != intent || replicas != nil && *replicas != d.replicas
	d.tmpl.intent, d.mark = intent, mark
	if replicas != nil {
		d.replicas = *replicas
	}
	if specChanged {
		d.generation++
	}
	w.saveDeployment()
	c := *d
	return &c, nil
}

// createDeployment creates the Deployment; it fails while one exists.
func (w *world) createDeployment(intent version, mark *examplev1.RollbackStatus, replicas *int32) (*deployment, error) {
	if w.dep != nil {
		return nil, errConflict
	}
	w.noteViolation(w.wroteDeployment(intent, mark))
	w.uids++
	w.dep = &deployment{uid: w.uids, generation: 1, tmpl: template{intent: intent}, mark: mark, replicas: 1}
	if replicas != nil {
		w.dep.replicas = *replicas
	}
	w.saveDeployment()
	c := *w.dep
	return &c, nil
}

// patchStatus patches the MyApp's status, guarded by the resourceVersion it was decided
// from, and answers the new resourceVersion.
func (w *world) patchStatus(rv int64, patch func(*appStatus)) (int64, error) {
	if w.app.rv != rv {
		return 0, errConflict
	}
	patch(&w.app.status)
	w.saveApp()
	return w.app.rv, nil
}

// storeRevision creates the ControllerRevision of a template's intent; an existing one is
// kept (AlreadyExists).
func (w *world) storeRevision(hash string, intent version) {
	if _, ok := w.revisions[hash]; !ok {
		w.revisions[hash] = intent
		w.bump()
	}
}

// Reading the stored state.

// setOf is the index of the ReplicaSet of the Deployment uid with that hash, or -1.
func (w *world) setOf(uid int, hash string) int {
	return slices.IndexFunc(w.sets, func(rs replicaSet) bool { return rs.owner == uid && rs.hash == hash })
}

func (w *world) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(w.rng.Int64N(int64(hi-lo)+1))
}

func (w *world) chance(p float64) bool { return w.rng.Float64() < p }

// informer is a cache of one kind: the versions the API server stored since the cache's
// version, and the one it shows. It catches up on random steps, by one or more versions,
// and with every clock tick (a watch delivers within seconds).
type informer[T any] struct {
	history []T
	at      int
}

const informerHistory = 32

func (i *informer[T]) record(v T) {
	i.history = append(i.history, v)
	if drop := len(i.history) - informerHistory; drop > 0 {
		i.history = i.history[drop:]
		i.at = max(0, i.at-drop)
	}
}

func (i *informer[T]) cached() T    { return i.history[i.at] }
func (i *informer[T]) synced() bool { return i.at == len(i.history)-1 }
func (i *informer[T]) sync()        { i.at = len(i.history) - 1 }

// catchUp moves the cache n versions on, at most to the stored one.
func (i *informer[T]) catchUp(n int) { i.at = min(i.at+n, len(i.history)-1) }

// trace keeps the last steps for a failure's report.
type trace struct {
	lines []string
}

const traceLines = 30

func (t *trace) add(line string) {
	t.lines = append(t.lines, line)
	if len(t.lines) > traceLines {
		t.lines = t.lines[len(t.lines)-traceLines:]
	}
}

// noteViolation keeps the first violation found within a step.
func (w *world) noteViolation(v string) {
	if w.violation == "" {
		w.violation = v
	}
}
