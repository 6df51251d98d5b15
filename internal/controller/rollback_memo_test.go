package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/status"
)

// TestHeldRollbackBeforeTheCacheShowsIt: the reconcile after a rollback often reads the MyApp
// from a cache without the status write that recorded it (the rollback's own change to the
// Deployment queues it). The reconciler must hold the rollback from its memory then, or it
// applies the failed template again and rolls back a second time (seen once in CI: two
// rollbacks counted for one failure).
func TestHeldRollbackBeforeTheCacheShowsIt(t *testing.T) {
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "uid-1", Generation: 2}}
	record := examplev1.RollbackStatus{Generation: 2, FailedSpec: "spec-b", Template: "a", FailedTemplate: "b"}
	r := &MyAppReconciler{}

	if rb, _ := r.heldRollback(app, "spec-b"); rb != nil {
		t.Fatal("a rollback held with none made")
	}
	r.rollbacks.set(app, rollbackMemo{record: record})
	if rb, _ := r.heldRollback(app, "spec-b"); rb == nil || *rb != record {
		t.Fatalf("held %v, want the rollback this reconciler made while the cached status lacks it", rb)
	}

	other := app.DeepCopy()
	other.UID = "uid-2" // deleted and created again under the same name
	if rb, _ := r.heldRollback(other, "spec-b"); rb != nil {
		t.Fatal("a rollback of an earlier MyApp of the same name held")
	}

	app.Annotations = map[string]string{examplev1.ReconcileRequestAnnotation: "again"}
	if rb, _ := r.heldRollback(app, "spec-b"); rb != nil {
		t.Fatal("a rollback held past a reconcile request")
	}
	if _, known := r.rollbacks.get(app); known {
		t.Fatal("a rollback that no longer holds is still remembered")
	}

	app.Annotations = nil
	app.Status.RolledBack = &record
	if rb, _ := r.heldRollback(app, "spec-b"); rb == nil {
		t.Fatal("the status's rollback not held (a restarted manager has no memory)")
	}
	if rb, _ := r.heldRollback(app, "spec-c"); rb != nil {
		t.Fatal("a rollback held for a spec that asks for another template")
	}
	if status.Digest("") != "" {
		t.Fatal("no reconcile request must digest to nothing")
	}
}
