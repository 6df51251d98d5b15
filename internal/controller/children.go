package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// HandoverFieldOwner holds a Deployment's spec.replicas for the moment between the operator
// dropping the field (autoscaling turned on) and the autoscaler first writing it.
const HandoverFieldOwner = "myapp-operator-handover"

// RepairFieldOwner is the field manager of repairChild's merge patch, removed right after.
const RepairFieldOwner = "myapp-operator-repair"

// getChild reads the child of the MyApp with the given name into obj. It reports whether the
// child exists, and fails with a notOwnedError when an object of that name exists that the
// MyApp does not control. The cache only holds labelled objects, so a miss there is checked
// against the API server before the child is taken to be absent.
func (r *MyAppReconciler) getChild(ctx context.Context, app *examplev1.MyApp, name string, obj client.Object) (bool, error) {
	key := types.NamespacedName{Namespace: app.Namespace, Name: name}
	err := r.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, obj)
	}
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading %s %s: %w", kindOf(r.Scheme(), obj), name, err)
	case !metav1.IsControlledBy(obj, app):
		return true, &notOwnedError{kind: kindOf(r.Scheme(), obj), name: name}
	}
	return true, nil
}

// applyChild server-side applies cfg, unless an object of that name exists that the MyApp
// does not control, and leaves in obj the child as the API server stored it. It records an
// event when the apply created or changed the child.
func (r *MyAppReconciler) applyChild(ctx context.Context, app *examplev1.MyApp, cfg runtime.ApplyConfiguration, obj client.Object) error {
	name := nameOf(cfg)
	existed, err := r.getChild(ctx, app, name, obj)
	if err != nil {
		return err
	}
	before := obj.GetResourceVersion()
	kind := kindOf(r.Scheme(), obj)

	err = r.Apply(ctx, cfg, client.FieldOwner(FieldOwner), client.ForceOwnership)
	if apierrors.IsInvalid(err) && existed {
		if rerr := r.repairChild(ctx, cfg, obj); rerr != nil {
			log.FromContext(ctx).Error(rerr, "Repairing child failed", "kind", kind, "name", name)
		} else {
			err = nil
		}
	}
	if err != nil {
		return &applyError{kind: kind, name: name, err: err}
	}
	// The API server's answer was decoded into cfg; read it back as the typed object.
	if err := replaceFromApplied(cfg, obj); err != nil {
		return fmt.Errorf("reading back applied %s %s: %w", kind, name, err)
	}

	switch {
	case !existed:
		r.Recorder.Eventf(app, corev1.EventTypeNormal, "Created", "Created %s %s", kind, name)
	case obj.GetResourceVersion() != before:
		r.Recorder.Eventf(app, corev1.EventTypeNormal, "Updated", "Updated %s %s", kind, name)
	default:
		return nil
	}
	log.FromContext(ctx).V(1).Info("Applied child", "kind", kind, "name", name, "created", !existed)
	return nil
}

// repairChild brings back a child of ours whose apply the API server rejected because of a
// hand edit. Server-side apply merges list items by key: when someone changes the key of an
// item we own (a Service port, a container port), the edited item becomes theirs and ours
// is added beside it, and the two clash (say, on a port name). A JSON merge patch replaces
// such lists whole; the forced apply that follows owns every field again; and the repair's
// own managedFields entry is dropped, so that it does not keep alive fields we later stop
// sending.
func (r *MyAppReconciler) repairChild(ctx context.Context, cfg runtime.ApplyConfiguration, obj client.Object) error {
	body, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := r.Patch(ctx, obj, client.RawPatch(types.MergePatchType, body), client.FieldOwner(RepairFieldOwner)); err != nil {
		return fmt.Errorf("merge patch: %w", err)
	}
	if err := r.Apply(ctx, cfg, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply after merge patch: %w", err)
	}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	var kept []metav1.ManagedFieldsEntry
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager != RepairFieldOwner {
			kept = append(kept, mf)
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"managedFields": kept, "resourceVersion": obj.GetResourceVersion(),
	}})
	if err != nil {
		return err
	}
	if err := r.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("dropping the repair's field ownership: %w", err)
	}
	return nil
}

// deleteChild deletes a child the MyApp controls (getChild checked that) and no longer wants.
func (r *MyAppReconciler) deleteChild(ctx context.Context, app *examplev1.MyApp, obj client.Object) error {
	kind := kindOf(r.Scheme(), obj)
	err := r.Delete(ctx, obj, client.Preconditions{UID: ptrTo(obj.GetUID())})
	if client.IgnoreNotFound(err) != nil {
		return &applyError{kind: kind, name: obj.GetName(), err: err}
	}
	r.Recorder.Eventf(app, corev1.EventTypeNormal, "Deleted", "Deleted %s %s", kind, obj.GetName())
	return nil
}

// handOverReplicas keeps the Deployment's replica count when autoscaling is turned on. The
// operator is then about to stop applying spec.replicas; were it the field's only owner,
// server-side apply would reset the field to its default of one pod until the autoscaler
// acts. A second field manager takes co-ownership of the current value first; the
// autoscaler's first scale then takes the field from it.
func (r *MyAppReconciler) handOverReplicas(ctx context.Context, app *examplev1.MyApp) error {
	live := &appsv1.Deployment{}
	exists, err := r.getChild(ctx, app, app.Name, live)
	if err != nil || !exists || live.Spec.Replicas == nil {
		return err
	}
	cfg := appsv1ac.Deployment(app.Name, app.Namespace).
		WithSpec(appsv1ac.DeploymentSpec().WithReplicas(*live.Spec.Replicas))
	if err := r.Apply(ctx, cfg, client.FieldOwner(HandoverFieldOwner)); err != nil {
		return &applyError{kind: "Deployment", name: app.Name, err: err}
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

func kindOf(scheme *runtime.Scheme, obj runtime.Object) string {
	gvk, err := apiutil.GVKForObject(obj, scheme)
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

func ptrTo[T any](v T) *T { return &v }
