package controller

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func deploymentAt(rv string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: rv}}
}

func TestOwnWritesDropOnlyTheEventOfTheVersionWritten(t *testing.T) {
	for _, tc := range []struct {
		name    string
		before  string // what the cache held before the write
		written string
		event   client.Object
		dropped bool
	}{
		{"the event of our create, after its answer", "", "5", deploymentAt("5"), true},
		{"the event of our apply, after its answer", "4", "5", deploymentAt("5"), true},
		{"a later version: someone else wrote", "", "5", deploymentAt("6"), false},
		{"another kind of the same name", "", "5",
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: "5"}}, false},
		{"another name", "", "5",
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api", ResourceVersion: "5"}}, false},
		// An apply that changed nothing answers with the version the cache holds, and no event
		// follows: an entry would wait for the next one.
		{"a write that changed nothing: no entry", "5", "5", deploymentAt("5"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w ownWrites
			ownWrite(&w, tc.before, deploymentAt(tc.written))
			if got := !w.predicate().Create(event.CreateEvent{Object: tc.event}); got != tc.dropped {
				t.Errorf("create event dropped = %v, want %v", got, tc.dropped)
			}
		})
	}
}

// ownWrite is a write of ours that no event met while in flight.
func ownWrite(w *ownWrites, before string, written client.Object) {
	w.hold(keyOf(written))
	w.release(keyOf(written), before, written)
}

// queued records what ownWrites puts back in the controller's queue.
type queued []reconcile.Request

func (q *queued) Add(r reconcile.Request) { *q = append(*q, r) }

func TestOwnWritesHoldTheEventsOfAWriteInFlight(t *testing.T) {
	app := types.NamespacedName{Namespace: "ns", Name: "web"}
	for _, tc := range []struct {
		name    string
		held    []client.Object // events that arrive while the write is in flight
		before  string          // what the cache held before the write
		answer  client.Object   // nil: the write failed
		missed  bool            // the MyApp must be reconciled again
		pending bool            // an entry waits for the written version's event
	}{
		{"our own event, before the answer", []client.Object{deploymentAt("5")}, "", deploymentAt("5"), false, false},
		{"someone else's event, then our answer", []client.Object{deploymentAt("4")}, "3", deploymentAt("5"), true, true},
		{"someone else's write right after ours", []client.Object{deploymentAt("5"), deploymentAt("6")}, "4",
			deploymentAt("5"), true, false},
		{"the write failed, an event came", []client.Object{deploymentAt("4")}, "3", nil, true, false},
		{"the write failed, no event came", nil, "", nil, false, false},
		{"another child's event is not held", []client.Object{
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api", ResourceVersion: "4"}},
		}, "", deploymentAt("5"), false, true},
		{"a write that changed nothing", nil, "5", deploymentAt("5"), false, false},
	} {
		for _, withQueue := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, queue %v", tc.name, withQueue), func(t *testing.T) {
				var w ownWrites
				var q queued
				if withQueue {
					w.queue = &q // as the source's Start sets it (TestOwnWritesSourceHandsOverTheQueue)
				}
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
				w.release(key, tc.before, tc.answer)
				got := w.takeMissed(app)
				if withQueue {
					if got {
						t.Error("a missed event was left for the reconcile although the queue has the MyApp")
					}
					got = len(q) > 0
					if len(q) > 1 || (got && q[0].NamespacedName != app) {
						t.Errorf("queued %v, want at most %v once", q, app)
					}
				}
				if got != tc.missed {
					t.Errorf("MyApp to be reconciled again = %v, want %v", got, tc.missed)
				}
				if w.takeMissed(app) {
					t.Error("a missed event was reported twice")
				}
				if want := map[bool]int{true: 1, false: 0}[tc.pending]; w.size() != want {
					t.Errorf("%d entries after the answer, want %d", w.size(), want)
				}
				if tc.pending && p.Create(event.CreateEvent{Object: tc.answer}) {
					t.Error("the written version's event, after the answer, passed")
				}
				if !p.Create(event.CreateEvent{Object: deploymentAt("7")}) {
					t.Error("an event after the write's answer was held")
				}
				if w.size() != 0 {
					t.Errorf("%d entries kept after the child's next event", w.size())
				}
			})
		}
	}
}

func TestOwnWritesSourceHandsOverTheQueue(t *testing.T) {
	var w ownWrites
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	if err := w.source().Start(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	key := keyOf(deploymentAt(""))
	w.hold(key)
	w.predicate().Create(event.CreateEvent{Object: deploymentAt("4")})
	w.release(key, "3", deploymentAt("5"))
	if q.Len() != 1 {
		t.Fatalf("the controller's queue holds %d requests, want the MyApp", q.Len())
	}
	if r, _ := q.Get(); r.NamespacedName != (types.NamespacedName{Namespace: "ns", Name: "web"}) {
		t.Errorf("queued %v", r)
	}
}

func TestOwnWritesNeverLoseAHeldEvent(t *testing.T) {
	app := types.NamespacedName{Namespace: "ns", Name: "web"}
	key := keyOf(deploymentAt(""))

	t.Run("a deletion during the write", func(t *testing.T) {
		var w ownWrites
		w.hold(key)
		if !w.predicate().Delete(event.DeleteEvent{Object: deploymentAt("5")}) {
			t.Error("a deletion was held")
		}
		w.release(key, "", nil)
		if !w.takeMissed(app) {
			t.Error("a deletion during a failed write did not queue the MyApp again")
		}
	})

	t.Run("a hold that was never released", func(t *testing.T) {
		var w ownWrites
		w.hold(key)
		w.predicate().Create(event.CreateEvent{Object: deploymentAt("4")})
		w.hold(key) // the next write to the child
		if !w.takeMissed(app) {
			t.Error("the event held by a hold never released was lost")
		}
	})

	t.Run("a write that panics", func(t *testing.T) {
		r := &MyAppReconciler{}
		func() {
			defer func() { _ = recover() }()
			_ = r.heldWrite(deploymentAt(""), "3", func() error {
				r.writes.predicate().Create(event.CreateEvent{Object: deploymentAt("4")})
				panic("boom")
			})
		}()
		if r.writes.size() != 0 {
			t.Errorf("%d entries left: the child's events are still held", r.writes.size())
		}
		if !r.writes.takeMissed(app) {
			t.Error("the event held during a write that panicked was lost")
		}
	})
}

func TestOwnWritesDropThePreviousWritesEventDuringTheNext(t *testing.T) {
	var w ownWrites
	p := w.predicate()
	ownWrite(&w, "", deploymentAt("5")) // its event is late
	key := keyOf(deploymentAt(""))
	w.hold(key)
	if p.Update(event.UpdateEvent{ObjectOld: deploymentAt("4"), ObjectNew: deploymentAt("5")}) {
		t.Error("the first write's event passed during the second write")
	}
	w.release(key, "5", deploymentAt("6"))
	if p.Update(event.UpdateEvent{ObjectOld: deploymentAt("5"), ObjectNew: deploymentAt("6")}) {
		t.Error("the second write's event passed")
	}
	if w.takeMissed(types.NamespacedName{Namespace: "ns", Name: "web"}) {
		t.Error("the first write's own event made the MyApp be reconciled again")
	}
	if w.size() != 0 {
		t.Errorf("%d entries kept", w.size())
	}
}

func TestOwnWritesForgetAfterTheFirstEvent(t *testing.T) {
	var w ownWrites
	p := w.predicate()

	ownWrite(&w, "", deploymentAt("5"))
	if !p.Update(event.UpdateEvent{ObjectOld: deploymentAt("4"), ObjectNew: deploymentAt("6")}) {
		t.Error("an update to a version we did not write was dropped")
	}
	if w.size() != 0 {
		t.Errorf("%d entries kept after the child's next event", w.size())
	}
	if !p.Update(event.UpdateEvent{ObjectOld: deploymentAt("5"), ObjectNew: deploymentAt("5")}) {
		t.Error("a later resync of the version we wrote was dropped, after its entry was settled")
	}

	ownWrite(&w, "", deploymentAt("7"))
	if !p.Delete(event.DeleteEvent{Object: deploymentAt("7")}) {
		t.Error("a deletion was dropped")
	}
	if w.size() != 0 {
		t.Errorf("%d entries kept after the child's deletion", w.size())
	}

	ownWrite(&w, "", deploymentAt(""))
	if w.size() != 0 {
		t.Error("an object with no resourceVersion was recorded")
	}
}

func TestHeldWriteWaitsForTheEventOfANewVersionOnly(t *testing.T) {
	for _, tc := range []struct {
		name    string
		before  string // the child's version the write started from
		pending int    // entries waiting for the written version's event
	}{
		{"a write that made a new version", "4", 1},
		{"a create", "", 1},
		{"a write that changed nothing", "5", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &MyAppReconciler{}
			obj := deploymentAt("")
			if err := r.heldWrite(obj, tc.before, func() error {
				obj.SetResourceVersion("5") // the API server's answer
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if r.writes.size() != tc.pending {
				t.Errorf("%d entries after the write, want %d", r.writes.size(), tc.pending)
			}
		})
	}
}
