package controller

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
			w.record(ctx, tc.cached, deploymentAt(tc.written))
			if got := !w.predicate().Create(event.CreateEvent{Object: tc.event}); got != tc.dropped {
				t.Errorf("create event dropped = %v, want %v", got, tc.dropped)
			}
		})
	}
}

func TestOwnWritesForgetAfterTheFirstEvent(t *testing.T) {
	ctx := context.Background()
	var w ownWrites
	p := w.predicate()

	w.record(ctx, cacheAt(""), deploymentAt("5"))
	if !p.Update(event.UpdateEvent{ObjectOld: deploymentAt("4"), ObjectNew: deploymentAt("6")}) {
		t.Error("an update to a version we did not write was dropped")
	}
	if w.size() != 0 {
		t.Errorf("%d entries kept after the child's next event", w.size())
	}
	if !p.Update(event.UpdateEvent{ObjectOld: deploymentAt("5"), ObjectNew: deploymentAt("5")}) {
		t.Error("a later resync of the version we wrote was dropped, after its entry was settled")
	}

	w.record(ctx, cacheAt(""), deploymentAt("7"))
	if !p.Delete(event.DeleteEvent{Object: deploymentAt("7")}) {
		t.Error("a deletion was dropped")
	}
	if w.size() != 0 {
		t.Errorf("%d entries kept after the child's deletion", w.size())
	}

	w.record(ctx, cacheAt(""), deploymentAt(""))
	if w.size() != 0 {
		t.Error("an object with no resourceVersion was recorded")
	}
}
