package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/ssa"
)

// RepairFieldOwner is the field manager of the repair of a port edited by hand
// (repairPortClash), as it was of 0.2.0's repair merge patch. Its managedFields entry is
// removed right after the apply that follows the repair, and one that survived on a later
// reconcile, since it would keep alive fields the operator no longer sends.
const RepairFieldOwner = "myapp-operator-repair"

// childKind describes how to apply one kind of child.
type childKind[T client.Object, AC runtime.ApplyConfiguration] struct {
	name    string
	newObj  func() T
	extract ssa.Extractor[T, AC]
	// cache, when set, is the cache that holds the children of this kind instead of the
	// manager's (the HTTPRoutes' own cache, started once the Gateway API is served).
	cache func(r *MyAppReconciler) client.Reader
}

// cached is the reader of the cache that holds the kind's children.
func (k childKind[T, AC]) cached(r *MyAppReconciler) client.Reader {
	if k.cache != nil {
		return k.cache(r)
	}
	return r.Client
}

// applied is what applyChild did to a child.
type applied[T client.Object] struct {
	// obj is the child as the API server stores it (the apply's answer), or as the cache or
	// the API server showed it when nothing had to change; never nil (empty when unknown).
	obj T
	// before is the child before the apply, or nil when it did not exist.
	before T
	// created and wrote say whether the child was created, and whether an apply was sent.
	created, wrote bool
	// current says that obj takes the intent: it carried it already, or the API server
	// accepted the apply (a mutating webhook may have changed a field on the way).
	current bool
}

// applyChild brings the child to cfg. It talks to the API server only when there is
// something to say: a child that already carries, under the operator's field manager,
// exactly what cfg says gets no request. The cache holds only children labelled as ours; on
// a cache miss the child is read from the API server (a new MyApp costs one GET per child),
// so that an object of that name the MyApp does not control is never applied to. A missing
// child is created by the apply itself, not forced: should someone create an object of that
// name in between, the apply conflicts instead of taking it over, and the next reconcile
// finds it.
//
// Whether a child carries its intent is read back from its managedFields once per stored
// version of the child and intent; r.carried remembers the answer (carried.go).
//
// before, when set, runs before an apply over an existing child (the replica hand-over).
// guard, when given, applies over the child only at the version it names, or read here
// (staleError).
func applyChild[T client.Object, AC runtime.ApplyConfiguration](ctx context.Context, r *MyAppReconciler, app *examplev1.MyApp,
	ch *changes, kind childKind[T, AC], cfg AC, before func(existing T) error, guard ...applyGuard) (applied[T], error) {
	name := ssa.NameOf(cfg)
	existing := kind.newObj()
	out := applied[T]{obj: existing}
	intent, err := ssa.DigestOf(cfg)
	if err != nil {
		return out, fmt.Errorf("serializing the %s %s: %w", kind.name, name, err)
	}
	exists, err := r.readChild(ctx, kind.cached(r), app, name, existing)
	if err == nil && !exists {
		exists, err = r.readChild(ctx, r.APIReader, app, name, existing)
	}
	if err != nil {
		return out, err
	}
	if exists {
		out.obj, out.before = existing, existing
		same := r.carried.holds(kind.name, existing, intent)
		if !same {
			if same, err = ssa.Carries(existing, cfg, kind.extract, FieldOwner); err != nil {
				return out, fmt.Errorf("reading what the operator owns in %s %s: %w", kind.name, name, err)
			}
			if same {
				r.carried.remember(kind.name, existing, intent)
			}
		}
		if same {
			out.current = true
			return out, r.dropStaleRepairOwner(ctx, existing)
		}
		if before != nil {
			if err := before(existing); err != nil {
				return out, err
			}
		}
	}

	live := kind.newObj()
	version := ""
	if exists && len(guard) > 0 {
		version = cmp.Or(guard[0].at, existing.GetResourceVersion())
	}
	if err := r.applyOver(ctx, existing, exists, cfg, live, version); err != nil {
		if version != "" && apierrors.IsConflict(err) {
			return out, &staleError{kind: kind.name, name: name}
		}
		return out, err
	}
	out.obj, out.wrote, out.created, out.current = live, true, !exists, true
	// The answer is remembered only when it carries the intent: a field a mutating webhook
	// changed on the way is then applied again by the next reconcile.
	carries, changed, err := ssa.Written(existing, live, exists, cfg, kind.extract, FieldOwner)
	if err == nil && carries {
		r.carried.remember(kind.name, live, intent)
	}
	if !exists {
		ch.record(r, app, reasonCreated, kind.name, name)
		log.FromContext(ctx).V(1).Info("Created child", "kind", kind.name, "name", name)
	} else if err == nil && changed {
		ch.record(r, app, reasonUpdated, kind.name, name)
		log.FromContext(ctx).V(1).Info("Updated child", "kind", kind.name, "name", name)
	}
	return out, r.dropStaleRepairOwner(ctx, live)
}

// applyOver applies cfg over the child, forced when it exists (our fields that someone
// edited are taken back), leaving the stored object in live; only at that resourceVersion,
// when one is given. When a hand edit of a list item's key makes the apply invalid, the
// clashing item is repaired and the apply tried once more.
func (r *MyAppReconciler) applyOver(ctx context.Context, existing client.Object, exists bool,
	cfg runtime.ApplyConfiguration, live client.Object, resourceVersion string) error {
	kind, name := r.kindOf(live), ssa.NameOf(cfg)
	err := ssa.ApplyAt(ctx, r.Client, cfg, live, FieldOwner, exists, resourceVersion)
	if err == nil {
		return nil
	}
	if !apierrors.IsInvalid(err) || !exists {
		return &applyError{kind: kind, name: name, err: err}
	}
	repaired, rerr := r.repairPortClash(ctx, existing, cfg)
	if rerr != nil {
		log.FromContext(ctx).Info("Could not repair a hand-edited child", "kind", kind, "name", name, "reason", rerr.Error())
	}
	if !repaired {
		return &applyError{kind: kind, name: name, err: err}
	}
	if err := ssa.Apply(ctx, r.Client, cfg, live, FieldOwner, true); err != nil {
		return &applyError{kind: kind, name: name, err: err}
	}
	return nil
}

// applyGuard makes applyChild apply over an existing child only at one version of it: the
// version the decision was made from (at), or, when at is "", the version applyChild reads.
type applyGuard struct{ at string }

// guarded is the applyGuard of an apply decided from the child as read: the rollout decision's
// applies of the Deployment, so that one decided from a cache older than the stored Deployment
// (a rollback another reconcile applied a moment ago) never undoes what it did not see.
var guarded = applyGuard{}

// guardedAt is the applyGuard of an apply decided from the child at version: what changed
// since (a rollout that completed after the decision) refuses the apply, whatever the cache
// shows by the time of it.
func guardedAt(version string) applyGuard { return applyGuard{at: version} }

// staleError: a guarded apply met a newer version of the child than the one it was decided
// from. It is no problem to report: the reconcile looks again once the cache has caught up.
type staleError struct{ kind, name string }

func (e *staleError) Error() string {
	return fmt.Sprintf("%s %s changed since it was read; looking again", e.kind, e.name)
}

// cachedChild reads the child of that name from the cache into obj and checks that the
// MyApp controls it. It reports whether the cache holds it; the cache holds only objects
// labelled as ours.
func (r *MyAppReconciler) cachedChild(ctx context.Context, app *examplev1.MyApp, name string, obj client.Object) (bool, error) {
	return r.readChild(ctx, r.Client, app, name, obj)
}

// readChild reads the object of that name from reader into obj and checks that the MyApp
// controls it; it reports whether one exists.
func (r *MyAppReconciler) readChild(ctx context.Context, reader client.Reader, app *examplev1.MyApp, name string, obj client.Object) (bool, error) {
	err := reader.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading %s %s: %w", r.kindOf(obj), name, err)
	}
	return true, r.checkOwner(app, obj)
}

// checkOwner fails unless the MyApp controls obj. A child controlled by an earlier MyApp of
// the same name (same name, another UID) is the garbage collector's to remove: that is a
// wait, not a conflict.
func (r *MyAppReconciler) checkOwner(app *examplev1.MyApp, obj client.Object) error {
	if metav1.IsControlledBy(obj, app) {
		return nil
	}
	if ref := metav1.GetControllerOf(obj); ref != nil && ref.Kind == "MyApp" && ref.Name == app.Name &&
		ref.APIVersion == examplev1.GroupVersion.String() {
		return &predecessorError{kind: r.kindOf(obj), name: obj.GetName()}
	}
	return &notOwnedError{kind: r.kindOf(obj), name: obj.GetName()}
}

// deleteChild deletes the cached child if the MyApp controls it; a child the cache does not
// hold is not ours to delete.
func (r *MyAppReconciler) deleteChild(ctx context.Context, app *examplev1.MyApp, ch *changes, obj client.Object, name string) error {
	return r.deleteChildIn(ctx, r.Client, app, ch, obj, name)
}

// deleteChildIn is deleteChild for a child held by the cache of reader.
func (r *MyAppReconciler) deleteChildIn(ctx context.Context, reader client.Reader, app *examplev1.MyApp, ch *changes, obj client.Object, name string) error {
	found, err := r.readChild(ctx, reader, app, name, obj)
	var notOwned *notOwnedError
	var predecessor *predecessorError
	if errors.As(err, &notOwned) || errors.As(err, &predecessor) {
		return nil // someone else's; none of ours is wanted
	}
	if err != nil || !found || !obj.GetDeletionTimestamp().IsZero() {
		return err
	}
	kind := r.kindOf(obj)
	err = r.Delete(ctx, obj, client.Preconditions{UID: ptrTo(obj.GetUID())})
	if client.IgnoreNotFound(err) != nil {
		return &applyError{kind: kind, name: name, err: err}
	}
	ch.record(r, app, reasonDeleted, kind, name)
	r.carried.forget(client.ObjectKeyFromObject(app), kind)
	return nil
}

// dropStaleRepairOwner removes a managedFields entry of 0.2.0's repair, guarded by the
// object's resourceVersion.
func (r *MyAppReconciler) dropStaleRepairOwner(ctx context.Context, obj client.Object) error {
	if !ssa.Has(obj, RepairFieldOwner) {
		return nil
	}
	if err := ssa.DropManager(ctx, r.APIReader, r.Client, obj, RepairFieldOwner); err != nil {
		return &applyError{kind: r.kindOf(obj), name: obj.GetName(), err: err}
	}
	return nil
}

func (r *MyAppReconciler) kindOf(obj runtime.Object) string {
	gvk, err := apiutil.GVKForObject(obj, r.Scheme())
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return gvk.Kind
}

func ptrTo[T any](v T) *T { return &v }
