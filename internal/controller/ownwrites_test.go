package controller

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// cacheAt is a cache holding one version of every object asked for ("" holds none).
type cacheAt string

func (c cacheAt) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if c == "" {
		return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
	}
	obj.SetName(key.Name)
	obj.SetNamespace(key.Namespace)
	obj.SetResourceVersion(string(c))
	return nil
}

func (c cacheAt) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

func deploymentAt(rv string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: rv}}
}

func TestOwnWritesDropOnlyTheEventOfTheVersionWritten(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		cached  cacheAt // what the cache holds when the write is recorded
		written string
		event   client.Object
		dropped bool
	}{
		{"the create event of our create", "", "5", deploymentAt("5"), true},
		{"an update event of our apply", "4", "5", deploymentAt("5"), true},
		{"a later version: someone else wrote", "", "5", deploymentAt("6"), false},
		{"another kind of the same name", "", "5",
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: "5"}}, false},
		{"another name", "", "5",
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api", ResourceVersion: "5"}}, false},
		{"the cache had it already: its event was handed over before the record", "5", "5", deploymentAt("5"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w ownWrites
			ownWrite(ctx, &w, tc.cached, deploymentAt(tc.written))
			if got := !w.predicate().Create(event.CreateEvent{Object: tc.event}); got != tc.dropped {
				t.Errorf("create event dropped = %v, want %v", got, tc.dropped)
			}
		})
	}
}

// ownWrite is a write of ours that no event met while in flight.
func ownWrite(ctx context.Context, w *ownWrites, cache client.Reader, written client.Object) {
	w.hold(keyOf(written))
	w.release(ctx, cache, keyOf(written), written)
}

func TestOwnWritesHoldTheEventsOfAWriteInFlight(t *testing.T) {
	ctx := context.Background()
	app := types.NamespacedName{Namespace: "ns", Name: "web"}
	created := func(rv string) event.CreateEvent { return event.CreateEvent{Object: deploymentAt(rv)} }
	for _, tc := range []struct {
		name   string
		held   []client.Object // events that arrive while the write is in flight
		cache  cacheAt         // what the cache holds when the answer comes
		answer client.Object   // nil: the write failed
		missed bool            // the MyApp must be reconciled again
	}{
		{"our own event, before the answer", []client.Object{deploymentAt("5")}, "5", deploymentAt("5"), false},
		{"someone else's event, then our answer", []client.Object{deploymentAt("4")}, "5", deploymentAt("5"), true},
		{"someone else's write right after ours", []client.Object{deploymentAt("5"), deploymentAt("6")}, "6",
			deploymentAt("5"), true},
		{"the write failed, an event came", []client.Object{deploymentAt("4")}, "4", nil, true},
		{"the write failed, no event came", nil, "", nil, false},
		{"another child's event is not held", []client.Object{
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api", ResourceVersion: "4"}},
		}, "5", deploymentAt("5"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w ownWrites
			p := w.predicate()
			key := keyOf(deploymentAt(""))
			w.hold(key)
			for _, e := range tc.held {
				passed := p.Create(event.CreateEvent{Object: e})
				if keyOf(e) == key && passed {
					t.Errorf("an event of version %s passed while the write was in flight", e.GetResourceVersion())
				}
				if keyOf(e) != key && !passed {
					t.Errorf("an event of another child was held")
				}
			}
			w.release(ctx, tc.cache, key, tc.answer)
			if got := w.takeMissed(app); got != tc.missed {
				t.Errorf("MyApp to be reconciled again = %v, want %v", got, tc.missed)
			}
			if w.takeMissed(app) {
				t.Error("a missed event was reported twice")
			}
			if w.size() != 0 {
				t.Errorf("%d entries kept after the answer, with the cache at the written version", w.size())
			}
			if !p.Create(created("7")) {
				t.Error("an event after the write's answer was held")
			}
		})
	}
}

func TestOwnWritesDropThePreviousWritesEventDuringTheNext(t *testing.T) {
	ctx := context.Background()
	var w ownWrites
	p := w.predicate()
	ownWrite(ctx, &w, cacheAt(""), deploymentAt("5")) // its event is late
	key := keyOf(deploymentAt(""))
	w.hold(key)
	if p.Update(event.UpdateEvent{ObjectOld: deploymentAt("4"), ObjectNew: deploymentAt("5")}) {
		t.Error("the first write's event passed during the second write")
	}
	w.release(ctx, cacheAt("6"), key, deploymentAt("6"))
	if w.takeMissed(types.NamespacedName{Namespace: "ns", Name: "web"}) {
		t.Error("the first write's own event made the MyApp be reconciled again")
	}
	if w.size() != 0 {
		t.Errorf("%d entries kept", w.size())
	}
}

func TestOwnWritesLetDeletionsPassDuringAWrite(t *testing.T) {
	var w ownWrites
	w.hold(keyOf(deploymentAt("")))
	if !w.predicate().Delete(event.DeleteEvent{Object: deploymentAt("5")}) {
		t.Error("a deletion was held")
	}
}

func TestOwnWritesForgetAfterTheFirstEvent(t *testing.T) {
	ctx := context.Background()
	var w ownWrites
	p := w.predicate()

	ownWrite(ctx, &w, cacheAt(""), deploymentAt("5"))
	if !p.Update(event.UpdateEvent{ObjectOld: deploymentAt("4"), ObjectNew: deploymentAt("6")}) {
		t.Error("an update to a version we did not write was dropped")
	}
	if w.size() != 0 {
		t.Errorf("%d entries kept after the child's next event", w.size())
	}
	if !p.Update(event.UpdateEvent{ObjectOld: deploymentAt("5"), ObjectNew: deploymentAt("5")}) {
		t.Error("a later resync of the version we wrote was dropped, after its entry was settled")
	}

	ownWrite(ctx, &w, cacheAt(""), deploymentAt("7"))
	if !p.Delete(event.DeleteEvent{Object: deploymentAt("7")}) {
		t.Error("a deletion was dropped")
	}
	if w.size() != 0 {
		t.Errorf("%d entries kept after the child's deletion", w.size())
	}

	ownWrite(ctx, &w, cacheAt(""), deploymentAt(""))
	if w.size() != 0 {
		t.Error("an object with no resourceVersion was recorded")
	}
}
