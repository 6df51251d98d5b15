package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/ssa"
)

// HandoverFieldOwner holds a Deployment's spec.replicas for the moment between the operator
// dropping the field (autoscaling turned on) and the autoscaler first writing it.
const HandoverFieldOwner = "myapp-operator-handover"

// The replica count changes hands between the MyApp and a HorizontalPodAutoscaler
// (desired.Replicas decides, from the MyApp and the Deployment as stored):
//
//   - Autoscaling on: the Deployment intent leaves spec.replicas out, so the autoscaler owns
//     it. Were the operator the field's only owner, server-side apply would reset it to one
//     pod until the autoscaler acts; so a second field manager first holds the current count,
//     brought within [minReplicas, maxReplicas]: the autoscaler never scales a target at 0.
//   - Autoscaling turned off with spec.replicas left at 1: the hand-over keeps the count the
//     autoscaler left, recorded in an annotation of the Deployment, until spec.replicas
//     changes. Otherwise the operator applies spec.replicas, and puts back any hand edit.

// holdReplicas runs before an apply that leaves spec.replicas out (autoscaling on). Who owns
// the field is read from the live object's managedFields, not from the cache or from whether
// an autoscaler exists: if nobody but the operator (or this hand-over) holds it, the hand-over
// field manager applies the current count clamped to the autoscaler's range, and the
// autoscaler's first scale takes it over. A count another field manager holds is theirs and
// left alone. (The API server does not always record a scale through the scale subresource
// in managedFields, so a count the autoscaler set may be held again, unchanged.) The apply is
// made only over the version read, so that no count written since is replaced.
func (r *MyAppReconciler) holdReplicas(ctx context.Context, app *examplev1.MyApp) error {
	live := &appsv1.Deployment{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, live); err != nil {
		return client.IgnoreNotFound(err)
	}
	if live.Spec.Replicas == nil {
		return nil
	}
	for _, owner := range ssa.Owners(live, "f:spec", "f:replicas") {
		if owner != FieldOwner && owner != HandoverFieldOwner {
			return nil
		}
	}
	count := desired.AutoscalerStartReplicas(app, *live.Spec.Replicas)
	if count == *live.Spec.Replicas && !ssa.Owns(live, FieldOwner, "f:spec", "f:replicas") {
		return nil // already held at a count the autoscaler can start from
	}
	// Only over the version read: a scale between the read and the apply (the autoscaler's
	// first) would otherwise be overwritten with the count read before it.
	cfg := appsv1ac.Deployment(app.Name, app.Namespace).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(count))
	if err := ssa.ApplyAt(ctx, r.Client, cfg, &appsv1.Deployment{}, HandoverFieldOwner, true, live.ResourceVersion); err != nil {
		if apierrors.IsConflict(err) {
			return &staleError{kind: "Deployment", name: app.Name}
		}
		return &applyError{kind: "Deployment", name: app.Name, err: err}
	}
	return nil
}

// autoscalerFieldManager is the field manager under which the HorizontalPodAutoscaler
// controller, part of kube-controller-manager, writes a Deployment's scale.
const autoscalerFieldManager = "kube-controller-manager"

// deploymentReplicas reads from the cached Deployment (nil when there is none) what
// desired.Replicas needs.
func deploymentReplicas(cached *appsv1.Deployment) *desired.DeploymentReplicas {
	if cached == nil {
		return nil
	}
	return &desired.DeploymentReplicas{Replicas: cached.Spec.Replicas,
		Annotation: cached.Annotations[desired.AnnotationReplicas], HeldForAutoscaler: heldForAutoscaler(cached)}
}

// heldForAutoscaler tells whether no field manager but the autoscaler or the hand-over holds
// the Deployment's spec.replicas: none does after a scale through the scale subresource (the
// API server does not always record one in managedFields), the hand-over's is an apply. It is
// read only of a Deployment an earlier release applied, which carries no
// desired.AnnotationReplicas; the cache keeps every owner's entry for spec.replicas (cache.go).
func heldForAutoscaler(d *appsv1.Deployment) bool {
	for _, mf := range ssa.EntriesOwning(d, desired.ReplicasFieldPath...) {
		if !isAutoscalerHold(mf) {
			return false
		}
	}
	return true
}

// isAutoscalerHold tells whether a managedFields entry is the autoscaler's scale or the
// hand-over field manager's apply.
func isAutoscalerHold(mf metav1.ManagedFieldsEntry) bool {
	return mf.Manager == HandoverFieldOwner || (mf.Manager == autoscalerFieldManager && mf.Subresource == "scale")
}
