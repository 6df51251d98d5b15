package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/managedfields"
)

// HandoverFieldOwner holds a Deployment's spec.replicas for the moment between the operator
// dropping the field (autoscaling turned on) and the autoscaler first writing it.
const HandoverFieldOwner = "myapp-operator-handover"

// RepairFieldOwner is the field manager of 0.2.0's repair merge patch. 0.2.0 removed its
// managedFields entry right after the repair; one that survived is removed on a later
// reconcile, since it would keep alive fields the operator no longer sends.
const RepairFieldOwner = "myapp-operator-repair"

// extractor reads back from an object the apply configuration of what one field manager
// owns in it: appsv1ac.ExtractDeployment and its kin.
type extractor[T client.Object, AC runtime.ApplyConfiguration] func(T, string) (AC, error)

// childKind describes how to apply one kind of child.
type childKind[T client.Object, AC runtime.ApplyConfiguration] struct {
	newObj  func() T
	extract extractor[T, AC]
}

// applyChild brings the child to cfg and returns it as the API server stores it (or, when
// nothing had to change, as the cache holds it). It talks to the API server only when there
// is something to say: a child in the cache that already carries, under our field manager,
// exactly what cfg says is left alone, with no request at all. A hand edit of a field we
// own moves that field to another manager, so the comparison sees it and the apply puts it
// back. The cache holds only objects labelled as ours; a child it does not hold is created
// with an apply that only creates (see create), and only when an object of that name exists
// is it looked up: an object of that name that the MyApp does not control is never touched.
//
// before, when set, runs before an apply over an existing child (the replica hand-over).
func applyChild[T client.Object, AC runtime.ApplyConfiguration](ctx context.Context, r *MyAppReconciler, app *examplev1.MyApp,
	ch *changes, kind childKind[T, AC], cfg AC, before func(existing T) error) (T, error) {
	name := nameOf(cfg)
	existing := kind.newObj()
	inCache, err := r.cachedChild(ctx, app, name, existing)
	if err != nil {
		return existing, err
	}
	exists := inCache
	live := kind.newObj()
	created := false
	if !inCache && mutantSkipsCreate(app) {
		return existing, nil
	}
	if !inCache {
		if created, exists, err = r.createOrFind(ctx, app, name, cfg, live, existing); err != nil {
			return existing, err
		}
	}

	owned, err := kind.extract(existing, FieldOwner)
	if err != nil {
		return existing, fmt.Errorf("reading what the operator owns in %s %s: %w", r.kindOf(existing), name, err)
	}
	if exists && equality.Semantic.DeepEqual(owned, cfg) {
		return existing, r.dropStaleRepairOwner(ctx, existing)
	}
	if !created {
		if exists && before != nil {
			if err := before(existing); err != nil {
				return existing, err
			}
		}
		if err := r.applyOver(ctx, existing, exists, cfg, live); err != nil {
			return existing, err
		}
	}
	if !exists {
		ch.record(r, app, reasonCreated, r.kindOf(live), name)
		log.FromContext(ctx).V(1).Info("Created child", "kind", r.kindOf(live), "name", name)
		return live, r.dropStaleRepairOwner(ctx, live)
	}
	// Reading back what we own is half of an apply's cost in the operator's CPU; a created
	// child needs no comparison.
	if after, err := kind.extract(live, FieldOwner); err == nil && !equality.Semantic.DeepEqual(owned, after) {
		ch.record(r, app, reasonUpdated, r.kindOf(live), name)
		log.FromContext(ctx).V(1).Info("Updated child", "kind", r.kindOf(live), "name", name)
	}
	return live, r.dropStaleRepairOwner(ctx, live)
}

// applyOver applies cfg, forced, over the child (existing or not), leaving the stored object
// in live. When a hand edit of a list item's key makes the apply invalid, the clashing item
// is repaired and the apply tried once more.
func (r *MyAppReconciler) applyOver(ctx context.Context, existing client.Object, exists bool,
	cfg runtime.ApplyConfiguration, live client.Object) error {
	name := existing.GetName()
	if name == "" {
		name = nameOf(cfg)
	}
	before := "" // the version the write starts from, for ownWrites
	if exists {
		before = existing.GetResourceVersion()
	}
	err := r.apply(ctx, cfg, before, live)
	if err == nil {
		return nil
	}
	if !apierrors.IsInvalid(err) || !exists {
		return &applyError{kind: r.kindOf(existing), name: name, err: err}
	}
	repaired, rerr := r.repairListKeyClash(ctx, existing, cfg)
	if rerr != nil {
		log.FromContext(ctx).Info("Could not repair a hand-edited child", "kind", r.kindOf(existing), "name", name, "reason", rerr.Error())
	}
	if !repaired {
		return &applyError{kind: r.kindOf(existing), name: name, err: err}
	}
	if err := r.apply(ctx, cfg, before, live); err != nil {
		return &applyError{kind: r.kindOf(existing), name: name, err: err}
	}
	return nil
}

// createOrFind creates a child the cache does not hold, leaving it in live. When that fails,
// the object of that name is read into existing and its controller checked: exists tells
// the forced apply that follows (and its repair of a hand-edited list key) that there is one.
// A conflict followed by no object means one was being deleted: the create is tried once
// more, never replaced by a forced apply, which would take over an object someone made in
// between.
func (r *MyAppReconciler) createOrFind(ctx context.Context, app *examplev1.MyApp, name string,
	cfg runtime.ApplyConfiguration, live, existing client.Object) (created, exists bool, err error) {
	for attempt := 1; ; attempt++ {
		cerr := r.create(ctx, app.Namespace, name, cfg, live)
		if cerr == nil {
			return true, false, nil
		}
		exists, err := r.lookUp(ctx, app, name, existing)
		switch {
		case err != nil:
			return false, exists, err
		case exists:
			return false, true, nil
		case !apierrors.IsConflict(cerr) || attempt == 2:
			return false, false, &applyError{kind: r.kindOf(existing), name: name, err: cerr}
		}
	}
}

// lookUp reads the object of the child's name from the API server and checks that the MyApp
// controls it; it reports whether one exists.
func (r *MyAppReconciler) lookUp(ctx context.Context, app *examplev1.MyApp, name string, obj client.Object) (bool, error) {
	return r.readChild(ctx, r.APIReader, app, name, obj)
}

// createOnly is the resourceVersion that makes a server-side apply a create and nothing
// else. The API server checks an apply's resourceVersion against the stored object's and
// answers 409 Conflict when they differ, while it ignores it when there is no object to
// check against and creates one. No stored object can carry "1": etcd starts at revision 1
// with no keys, so every write, the first included, gets a later revision. (Repeating the
// create of an object exactly as it is stored, our controller reference included, was seen
// answered with that object rather than 409: harmless, as such an object is ours as it is.)
// This is what lets a child be created without a look-up first.
const createOnly = "1"

// create applies cfg as a new object named name, leaving it, as stored, in obj. It fails
// with a conflict when an object of that name exists.
func (r *MyAppReconciler) create(ctx context.Context, namespace, name string, cfg runtime.ApplyConfiguration, obj client.Object) error {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	var body map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keeps an int64 beyond 2^53 exact
	if err := dec.Decode(&body); err != nil {
		return err
	}
	meta, ok := body["metadata"].(map[string]any)
	if !ok {
		return fmt.Errorf("apply configuration of %s %s has no metadata", r.kindOf(obj), name)
	}
	meta["resourceVersion"] = createOnly
	if raw, err = json.Marshal(body); err != nil {
		return err
	}
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return r.heldWrite(obj, "", func() error {
		return r.Patch(ctx, obj, client.RawPatch(types.ApplyPatchType, raw), client.FieldOwner(mutantFieldOwner(FieldOwner)))
	})
}

// heldWrite sends write, a write of the child obj names (and that leaves the stored object in
// obj), holding the child's watch events while it is in flight (ownwrites.go). before is the
// child's resourceVersion as the caller last read it, "" when there was none.
func (r *MyAppReconciler) heldWrite(obj client.Object, before string, write func() error) error {
	key := keyOf(obj)
	r.writes.hold(key)
	var written client.Object
	// Deferred, so that even a panic in write does not leave the child's events held.
	defer func() { r.writes.release(key, before, written) }()
	if err := write(); err != nil {
		return err
	}
	written = obj
	return nil
}

// apply server-side applies cfg with the operator's field owner, forced, over the child at
// version before ("" for none), and leaves in obj the object the API server answered.
func (r *MyAppReconciler) apply(ctx context.Context, cfg runtime.ApplyConfiguration, before string, obj client.Object) error {
	obj.SetNamespace(namespaceOf(cfg))
	obj.SetName(nameOf(cfg))
	return r.heldWrite(obj, before, func() error {
		if err := r.Apply(ctx, cfg, client.FieldOwner(mutantFieldOwner(FieldOwner)), client.ForceOwnership); err != nil {
			return err
		}
		return replaceFromApplied(cfg, obj)
	})
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
	found, err := r.cachedChild(ctx, app, name, obj)
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
	return nil
}

// holdReplicas keeps the Deployment's replica count when the operator is about to apply it
// without spec.replicas (autoscaling on). Were the operator the field's only owner,
// server-side apply would reset it to the default of one pod until the autoscaler acts. Who
// owns the field is read from the live object's managedFields, not from the cache or from
// whether an autoscaler exists: if nobody else holds it, a second field manager takes
// co-ownership of the current value first, and the autoscaler's first scale takes it over.
func (r *MyAppReconciler) holdReplicas(ctx context.Context, app *examplev1.MyApp) error {
	live := &appsv1.Deployment{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, live); err != nil {
		return client.IgnoreNotFound(err)
	}
	if live.Spec.Replicas == nil {
		return nil
	}
	for _, owner := range managedfields.Owners(live, "f:spec", "f:replicas") {
		if owner != FieldOwner {
			return nil
		}
	}
	cfg := appsv1ac.Deployment(app.Name, app.Namespace).
		WithSpec(appsv1ac.DeploymentSpec().WithReplicas(*live.Spec.Replicas))
	if err := r.Apply(ctx, cfg, client.FieldOwner(HandoverFieldOwner)); err != nil {
		return &applyError{kind: "Deployment", name: app.Name, err: err}
	}
	return nil
}

// dropStaleRepairOwner removes a managedFields entry of 0.2.0's repair, guarded by the
// object's resourceVersion.
func (r *MyAppReconciler) dropStaleRepairOwner(ctx context.Context, obj client.Object) error {
	if !managedfields.Has(obj, RepairFieldOwner) {
		return nil
	}
	live := obj.DeepCopyObject().(client.Object)
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return client.IgnoreNotFound(err)
	}
	var kept []metav1.ManagedFieldsEntry
	for _, mf := range live.GetManagedFields() {
		if mf.Manager != RepairFieldOwner {
			kept = append(kept, mf)
		}
	}
	if len(kept) == len(live.GetManagedFields()) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"managedFields": kept, "resourceVersion": live.GetResourceVersion(),
	}})
	if err != nil {
		return err
	}
	if err := r.Patch(ctx, live, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return &applyError{kind: r.kindOf(obj), name: obj.GetName(), err: err}
	}
	return nil
}

// replaceFromApplied makes obj exactly the object the API server returned into cfg. obj is
// emptied first: decoding JSON into a filled struct would keep whatever the answer leaves
// out, such as a status count that dropped to zero (omitempty) or a removed annotation.
func replaceFromApplied(cfg runtime.ApplyConfiguration, obj client.Object) error {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	v := reflect.ValueOf(obj).Elem()
	v.Set(reflect.Zero(v.Type()))
	return json.Unmarshal(raw, obj)
}

func (r *MyAppReconciler) kindOf(obj runtime.Object) string {
	gvk, err := apiutil.GVKForObject(obj, r.Scheme())
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return gvk.Kind
}

// nameOf reads the name every apply configuration of package desired carries.
func nameOf(cfg runtime.ApplyConfiguration) string {
	if named, ok := cfg.(interface{ GetName() *string }); ok && named.GetName() != nil {
		return *named.GetName()
	}
	return ""
}

func namespaceOf(cfg runtime.ApplyConfiguration) string {
	if named, ok := cfg.(interface{ GetNamespace() *string }); ok && named.GetNamespace() != nil {
		return *named.GetNamespace()
	}
	return ""
}

func ptrTo[T any](v T) *T { return &v }
