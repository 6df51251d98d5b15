package controller

import (
	"context"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// ownWrites remembers, for each child the operator has just created or applied, the
// resourceVersion the write returned, until the watch event of that version arrives. That
// event tells the controller nothing new: the reconcile that wrote the child computed the
// MyApp's status from the very object the write returned. So it is dropped instead of
// queueing the MyApp again, and a new MyApp costs one reconcile instead of two.
//
// The event often comes before the answer. So a child's events are held while a write to it
// is in flight (hold, release): when the answer comes, an event of the version it returned is
// dropped, and any other (someone else's write, or one met by a write that failed) queues the
// MyApp again, as the event would have. A held event is never lost, only late by the write's
// round trip. The children carry their MyApp's name (internal/desired), which is how a
// child's event finds its MyApp here. When the answer comes first, an entry lives from the
// answer to the event, milliseconds; any other event of the child, and its deletion, drop
// it too.
type ownWrites struct {
	mu       sync.Mutex
	pending  map[ownWriteKey]string        // the resourceVersion each child's write returned
	inFlight map[ownWriteKey][]string      // the versions of events held while a write is in flight
	queue    requeuer                      // the controller's work queue, once it started (source)
	missed   map[types.NamespacedName]bool // MyApps to queue again, while there is no queue
}

// requeuer is the part of the controller's work queue that ownWrites uses.
type requeuer interface{ Add(reconcile.Request) }

// source hands the controller's work queue to ownWrites when the controller starts, before
// any worker (and so any write) runs. It sends no event of its own.
func (w *ownWrites) source() source.Source { return queueSource{w} }

type queueSource struct{ w *ownWrites }

func (s queueSource) Start(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	s.w.queue = q
	return nil
}

// requeueLocked queues the MyApp again (or notes it for takeMissed, without a queue).
func (w *ownWrites) requeueLocked(app types.NamespacedName) {
	if w.queue != nil {
		w.queue.Add(reconcile.Request{NamespacedName: app})
		return
	}
	if w.missed == nil {
		w.missed = map[types.NamespacedName]bool{}
	}
	w.missed[app] = true
}

type ownWriteKey struct {
	kind            reflect.Type // *appsv1.Deployment, *corev1.Service...
	namespace, name string
}

func keyOf(obj client.Object) ownWriteKey {
	return ownWriteKey{kind: reflect.TypeOf(obj), namespace: obj.GetNamespace(), name: obj.GetName()}
}

// hold starts holding the events of the child key: a write to it is about to be sent.
func (w *ownWrites) hold(key ownWriteKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inFlight == nil {
		w.inFlight = map[ownWriteKey][]string{}
	}
	if len(w.inFlight[key]) > 0 { // a hold never released: do not lose what it held
		w.requeueLocked(types.NamespacedName{Namespace: key.namespace, Name: key.name})
	}
	w.inFlight[key] = nil
}

// release ends the hold of the child key: written is the object the write returned, or nil
// when it failed; before is the version the cache held before the write ("" for none). An
// event held meanwhile of another version queues the child's MyApp (whose name the child
// carries) again; one of the written version is dropped. When that event has not come yet,
// an entry waits for it: the hold began before the write was sent, so the event has not been
// handed to the predicate yet. A write that changed nothing (the version it returned is the
// one the cache held) has no event to wait for.
func (w *ownWrites) release(key ownWriteKey, before string, written client.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	held := w.inFlight[key]
	delete(w.inFlight, key)
	rv := ""
	if written != nil {
		rv = written.GetResourceVersion()
	}
	seen := false   // the written version's event came while the write was in flight
	missed := false // another one came
	for _, v := range held {
		if v == rv && rv != "" {
			seen = true
			continue
		}
		missed = true
	}
	if missed {
		w.requeueLocked(types.NamespacedName{Namespace: key.namespace, Name: key.name})
	}
	if rv == "" || seen || rv == before {
		return
	}
	if w.pending == nil {
		w.pending = map[ownWriteKey]string{}
	}
	w.pending[key] = rv
}

// takeMissed tells whether an event of one of the MyApp's children was held during a write
// and was not that write's while there was no queue to put the MyApp back in (a reconciler
// run without its controller), and forgets it.
func (w *ownWrites) takeMissed(app types.NamespacedName) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	missed := w.missed[app]
	delete(w.missed, app)
	return missed
}

// ours tells whether obj is the version a write of ours returned, and forgets the entry
// either way: the first event of a child after its write settles the question. While a write
// to the child is in flight, any other event is held (and reported as ours): release settles
// it.
func (w *ownWrites) ours(obj client.Object) bool {
	if obj == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	key := keyOf(obj)
	rv := obj.GetResourceVersion()
	if written, ok := w.pending[key]; ok {
		delete(w.pending, key)
		if written == rv {
			return true
		}
	}
	if held, ok := w.inFlight[key]; ok {
		w.inFlight[key] = append(held, rv)
		return true
	}
	return false
}

// size is how many writes await their event or their answer (for tests).
func (w *ownWrites) size() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending) + len(w.inFlight)
}

// predicate drops the events of the children's versions the operator wrote itself, and holds
// those that come while a write is in flight. It must come first among a watch's predicates,
// so that it sees every event. Deletions always pass.
func (w *ownWrites) predicate() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return !w.ours(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool { return !w.ours(e.ObjectNew) },
		DeleteFunc: func(e event.DeleteEvent) bool { w.ours(e.Object); return true },
	}
}
