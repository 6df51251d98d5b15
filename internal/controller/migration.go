package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/status"
)

// The selector migration. 0.2.0 selected pods on app.kubernetes.io/name and instance, the
// labels Helm charts select on too; 0.3.0 selects on a key of its own. A Deployment's
// selector is immutable, so a 0.2.0 Deployment is replaced, without a gap in service:
//
//  1. orphaning: the Service is switched to a selector that matches the old pods and the new
//     ones alike and marked with AnnotationSelectorMigration; then the old Deployment is
//     deleted with orphan propagation, so its ReplicaSet and pods keep running and serving.
//  2. replacing: the new Deployment is created. Once it runs all its desired pods, available,
//     the orphaned 0.2.0 ReplicaSets (and so their pods) are deleted, and the Service gets
//     the new selector without the mark.
//
// The state lives in the objects (the old Deployment's selector, the Service's mark), so a
// restart of the operator at any point resumes where it was.
type migration int

const (
	migrationNone migration = iota
	migrationOrphaning
	migrationReplacing
)

var migrationWaiting = status.Failure{
	Reason: status.ReasonSelectorMigration,
	Message: "Replacing the Deployment made by 0.2.0 with one that selects pods on " + desired.LabelSelector +
		"; its pods keep serving until the new ones are available",
}

// migrationPhase reads where the migration stands from the cached Deployment and Service.
func (r *MyAppReconciler) migrationPhase(ctx context.Context, app *examplev1.MyApp) (migration, *appsv1.Deployment) {
	d := &appsv1.Deployment{}
	if found, err := r.cachedChild(ctx, app, app.Name, d); err == nil && found && isLegacy(app, d) {
		return migrationOrphaning, d
	}
	s := &corev1.Service{}
	if found, err := r.cachedChild(ctx, app, app.Name, s); err == nil && found &&
		s.Annotations[desired.AnnotationSelectorMigration] != "" {
		return migrationReplacing, nil
	}
	return migrationNone, nil
}

// isLegacy tells whether the Deployment selects pods as 0.2.0 did.
func isLegacy(app *examplev1.MyApp, d *appsv1.Deployment) bool {
	return d.Spec.Selector != nil && len(d.Spec.Selector.MatchExpressions) == 0 &&
		equality.Semantic.DeepEqual(d.Spec.Selector.MatchLabels, desired.LegacySelectorLabels(app))
}

// orphanLegacyDeployment deletes the 0.2.0 Deployment but not its ReplicaSets and pods.
func (r *MyAppReconciler) orphanLegacyDeployment(ctx context.Context, app *examplev1.MyApp, d *appsv1.Deployment) error {
	if !d.DeletionTimestamp.IsZero() {
		return nil // the garbage collector is orphaning its ReplicaSets
	}
	err := r.Delete(ctx, d, client.PropagationPolicy(metav1.DeletePropagationOrphan), client.Preconditions{UID: ptrTo(d.UID)})
	if client.IgnoreNotFound(err) != nil {
		return &applyError{kind: "Deployment", name: d.Name, err: err}
	}
	r.Recorder.Eventf(app, corev1.EventTypeNormal, status.ReasonSelectorMigration,
		"Replacing Deployment %s, made by 0.2.0, with one that selects pods on %s; its pods keep serving meanwhile",
		d.Name, desired.LabelSelector)
	return nil
}

// legacyReplicaSets lists the 0.2.0 ReplicaSets the migration orphaned. It is the one live
// list the operator makes, and only while a migration is under way.
func (r *MyAppReconciler) legacyReplicaSets(ctx context.Context, app *examplev1.MyApp) ([]appsv1.ReplicaSet, error) {
	list := &appsv1.ReplicaSetList{}
	sel := desired.LegacySelectorLabels(app)
	sel[desired.LabelManagedBy] = desired.ManagedBy
	if err := r.APIReader.List(ctx, list, client.InNamespace(app.Namespace), client.MatchingLabels(sel)); err != nil {
		return nil, fmt.Errorf("listing the ReplicaSets of the 0.2.0 Deployment %s: %w", app.Name, err)
	}
	var out []appsv1.ReplicaSet
	for _, rs := range list.Items {
		if metav1.GetControllerOf(&rs) == nil {
			out = append(out, rs)
		}
	}
	return out, nil
}

// keepLegacyCount starts a new Deployment that an autoscaler will own with as many pods as
// the 0.2.0 one ran, rather than the default of one; the replica hand-over then gives the
// field to the autoscaler as usual.
func (r *MyAppReconciler) keepLegacyCount(ctx context.Context, app *examplev1.MyApp, deployment *appsv1ac.DeploymentApplyConfiguration) error {
	if found, err := r.cachedChild(ctx, app, app.Name, &appsv1.Deployment{}); err != nil || found {
		return nil // the new Deployment exists; applyChild reports any ownership problem
	}
	sets, err := r.legacyReplicaSets(ctx, app)
	if err != nil {
		return err
	}
	count := int32(0)
	for _, rs := range sets {
		if rs.Spec.Replicas != nil {
			count += *rs.Spec.Replicas
		}
	}
	if count > 0 {
		deployment.Spec.WithReplicas(count)
	}
	return nil
}

// finishMigration removes the orphaned 0.2.0 ReplicaSets once the new Deployment runs all its
// pods, available, and then gives the Service its final selector.
func (r *MyAppReconciler) finishMigration(ctx context.Context, app *examplev1.MyApp, obs *status.Observed, serviceApplied bool) error {
	obs.Waiting = &migrationWaiting
	if !status.FullyAvailable(obs.Deployment) || !serviceApplied {
		return nil
	}
	sets, err := r.legacyReplicaSets(ctx, app)
	if err != nil {
		return err
	}
	for i := range sets {
		rs := &sets[i]
		err := r.Delete(ctx, rs, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: ptrTo(rs.UID)})
		if client.IgnoreNotFound(err) != nil {
			return &applyError{kind: "ReplicaSet", name: rs.Name, err: err}
		}
	}
	if _, err := applyChild(ctx, r, app, nil, serviceKind, desired.Service(app, false), nil); err != nil {
		return err
	}
	obs.Waiting = nil
	r.Recorder.Eventf(app, corev1.EventTypeNormal, "Migrated", "Deployment %s now selects pods on %s", app.Name, desired.LabelSelector)
	return nil
}
