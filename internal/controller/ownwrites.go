package controller

import (
	"context"
	"reflect"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// ownWrites remembers, for each child the operator has just created or applied, the
// resourceVersion the write returned, until the watch event of that version arrives. That
// event tells the controller nothing new: the reconcile that wrote the child computed the
// MyApp's status from the very object the write returned. So it is dropped instead of
// queueing the MyApp again, and a new MyApp costs one reconcile instead of two.
//
// An entry lives from the write's answer to its event, milliseconds. None is made when the
// cache already holds that version: an informer updates its cache before it hands the event
// to the handlers, so that event has been (or is being) handed over and would never take the
// entry away. Any other event of the child, and its deletion, drop the entry too.
type ownWrites struct {
	mu      sync.Mutex
	pending map[ownWriteKey]string // the resourceVersion each child's write returned
}

type ownWriteKey struct {
	kind            reflect.Type // *appsv1.Deployment, *corev1.Service...
	namespace, name string
}

func keyOf(obj client.Object) ownWriteKey {
	return ownWriteKey{kind: reflect.TypeOf(obj), namespace: obj.GetNamespace(), name: obj.GetName()}
}

// record notes that written is the object a write of ours returned. cache reads the manager's
// cache.
func (w *ownWrites) record(ctx context.Context, cache client.Reader, written client.Object) {
	rv := written.GetResourceVersion()
	if rv == "" {
		return
	}
	cached := reflect.New(reflect.TypeOf(written).Elem()).Interface().(client.Object)
	w.mu.Lock()
	defer w.mu.Unlock()
	// Under the lock, so that the event cannot be handed over between this look and the entry.
	if err := cache.Get(ctx, client.ObjectKeyFromObject(written), cached); err == nil && cached.GetResourceVersion() == rv {
		return
	}
	if w.pending == nil {
		w.pending = map[ownWriteKey]string{}
	}
	w.pending[keyOf(written)] = rv
}

// ours tells whether obj is the version a write of ours returned, and forgets the entry
// either way: the first event of a child after its write settles the question.
func (w *ownWrites) ours(obj client.Object) bool {
	if obj == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	key := keyOf(obj)
	rv, ok := w.pending[key]
	if !ok {
		return false
	}
	delete(w.pending, key)
	return rv == obj.GetResourceVersion()
}

// size is how many writes await their event (for tests).
func (w *ownWrites) size() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

// predicate drops the events of the children's versions the operator wrote itself. It must
// come first among a watch's predicates, so that it sees every event.
func (w *ownWrites) predicate() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return !w.ours(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool { return !w.ours(e.ObjectNew) },
		DeleteFunc: func(e event.DeleteEvent) bool { w.ours(e.Object); return true },
	}
}
