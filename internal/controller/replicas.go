package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
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

// The replica count changes hands between the MyApp and a HorizontalPodAutoscaler:
//
//   - Autoscaling on: the Deployment intent leaves spec.replicas out, so the autoscaler owns
//     it. Were the operator the field's only owner, server-side apply would reset it to one
//     pod until the autoscaler acts; so a second field manager first holds the current count,
//     brought within [minReplicas, maxReplicas]: the autoscaler never scales a target at 0.
//   - Autoscaling off: the operator applies spec.replicas again, unless the user never set it
//     (desired.ReplicasSetByUser): then the Deployment keeps the count the autoscaler left,
//     as `kubectl apply` of a Deployment without replicas does, until the user sets one.

// holdReplicas runs before an apply that leaves spec.replicas out (autoscaling on). Who owns
// the field is read from the live object's managedFields, not from the cache or from whether
// an autoscaler exists: if nobody but the operator (or this hand-over) holds it, the hand-over
// field manager applies the current count clamped to the autoscaler's range, and the
// autoscaler's first scale takes it over. A count another field manager holds is theirs and
// left alone. (The API server does not always record a scale through the scale subresource
// in managedFields, so a count the autoscaler set may be held again, unchanged.)
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
	cfg := appsv1ac.Deployment(app.Name, app.Namespace).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(count))
	if err := ssa.Apply(ctx, r.Client, cfg, &appsv1.Deployment{}, HandoverFieldOwner, true); err != nil {
		return &applyError{kind: "Deployment", name: app.Name, err: err}
	}
	return nil
}

// keepsAutoscalerCount tells whether the Deployment intent of a MyApp with autoscaling off
// leaves spec.replicas out: the operator does not own the field of the cached Deployment
// (the autoscaler, or the hand-over, last set it), and the user never set spec.replicas.
func keepsAutoscalerCount(app *examplev1.MyApp, cached *appsv1.Deployment) bool {
	return cached != nil && cached.Spec.Replicas != nil && !desired.AutoscalingEnabled(app) &&
		!ssa.Owns(cached, FieldOwner, "f:spec", "f:replicas") && !desired.ReplicasSetByUser(app)
}
