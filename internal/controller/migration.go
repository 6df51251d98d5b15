package controller

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/ssa"
	"github.com/example/myapp-operator/internal/status"
)

// The selector migration. 0.2.0 selected pods on app.kubernetes.io/name and instance, the
// labels Helm charts select on too; 0.3.0 selects on a key of its own. A Deployment's selector is
// immutable, so a 0.2.0 Deployment is replaced, without a gap in service:
//
//  1. orphaning: the Service and the PodDisruptionBudget are switched to a selector that
//     matches the old pods and the new ones alike, and the Service is marked with
//     AnnotationSelectorMigration. The old ReplicaSets get an owner reference to the MyApp, so
//     that deleting the MyApp still removes them once they are orphaned; then the old
//     Deployment is deleted with orphan propagation, so its ReplicaSets and pods keep running
//     and serving.
//  2. replacing: the new Deployment is created, carrying the mark too. Once it runs all its
//     desired pods, available, the orphaned 0.2.0 ReplicaSets (and so their pods) are
//     deleted, and the Service, the budget and the Deployment get their final form, without
//     the mark.
//
// The state lives in the objects (the old Deployment's selector, the marks), so a restart of
// the operator at any point resumes where it was, and the Service or the new Deployment may
// be deleted or replaced mid-way without losing it. A migration that has not finished
// migrationDeadline after the new Deployment was created is Stalled, with what blocks it.
type migration int

const (
	migrationNone migration = iota
	migrationOrphaning
	migrationReplacing
)

// migrationDeadline is how long the replacing phase may take before the MyApp is Stalled:
// longer than a Deployment's default progress deadline (10 minutes), which reports new pods
// that never become available on its own.
const migrationDeadline = 15 * time.Minute

var migrationWaiting = status.Failure{
	Reason: examplev1.ReasonSelectorMigration,
	Message: "Replacing the Deployment made by 0.2.0 with one that selects pods on " + desired.LabelSelector +
		"; its pods keep serving until the new ones are available",
}

// migrationPhase reads where the migration stands from the cached Deployment and Service.
// The cache can lag behind the operator's own writes: a reconcile that starts right after the
// migration finished may still read the mark on one child, and would start the migration
// again (the bridge selector, the mark) for nothing. A mark seen in the cache is therefore
// confirmed with the API server; these reads happen only while a migration looks under way.
func (r *MyAppReconciler) migrationPhase(ctx context.Context, app *examplev1.MyApp) (migration, *appsv1.Deployment) {
	d := &appsv1.Deployment{}
	foundDeployment, err := r.cachedChild(ctx, app, app.Name, d)
	foundDeployment = err == nil && foundDeployment
	if foundDeployment && isLegacy(app, d) {
		return migrationOrphaning, d
	}
	marked := foundDeployment && d.Annotations[desired.AnnotationSelectorMigration] != ""
	if !marked {
		s := &corev1.Service{}
		found, err := r.cachedChild(ctx, app, app.Name, s)
		marked = err == nil && found && s.Annotations[desired.AnnotationSelectorMigration] != ""
	}
	if marked && r.markedLive(ctx, app) {
		return migrationReplacing, nil
	}
	return migrationNone, nil
}

// markedLive tells whether the Deployment or the Service the API server holds carries the
// migration mark. When it cannot tell (an error), it says yes, the cache's answer.
func (r *MyAppReconciler) markedLive(ctx context.Context, app *examplev1.MyApp) bool {
	key := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
	for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
		err := r.APIReader.Get(ctx, key, obj)
		if client.IgnoreNotFound(err) != nil {
			return true
		}
		if err == nil && obj.GetAnnotations()[desired.AnnotationSelectorMigration] != "" {
			return true
		}
	}
	return false
}

// isLegacy tells whether the Deployment selects pods as 0.2.0 did.
func isLegacy(app *examplev1.MyApp, d *appsv1.Deployment) bool {
	return d.Spec.Selector != nil && len(d.Spec.Selector.MatchExpressions) == 0 &&
		equality.Semantic.DeepEqual(d.Spec.Selector.MatchLabels, desired.LegacySelectorLabels(app))
}

// orphanLegacyDeployment deletes the 0.2.0 Deployment but not its ReplicaSets and pods, after
// giving those ReplicaSets an owner reference to the MyApp: the orphan deletion removes the
// Deployment's reference, their only owner until then.
func (r *MyAppReconciler) orphanLegacyDeployment(ctx context.Context, app *examplev1.MyApp, d *appsv1.Deployment) error {
	if !d.DeletionTimestamp.IsZero() {
		return nil // the garbage collector is orphaning its ReplicaSets
	}
	sets, err := r.legacyReplicaSets(ctx, app, d.UID)
	if err != nil {
		return err
	}
	for i := range sets {
		if err := r.ownLegacyReplicaSet(ctx, app, &sets[i]); err != nil {
			return err
		}
	}
	err = r.Delete(ctx, d, client.PropagationPolicy(metav1.DeletePropagationOrphan), client.Preconditions{UID: ptrTo(d.UID)})
	if client.IgnoreNotFound(err) != nil {
		return &applyError{kind: "Deployment", name: d.Name, err: err}
	}
	r.Recorder.Eventf(app, corev1.EventTypeNormal, examplev1.ReasonSelectorMigration,
		"Replacing Deployment %s, made by 0.2.0, with one that selects pods on %s; its pods keep serving meanwhile",
		d.Name, desired.LabelSelector)
	return nil
}

// ownLegacyReplicaSet adds to a 0.2.0 ReplicaSet an owner reference to the MyApp, not as its
// controller (the old Deployment still is): server-side apply merges owner references by
// UID, so only this one is added and the Deployment's stays.
func (r *MyAppReconciler) ownLegacyReplicaSet(ctx context.Context, app *examplev1.MyApp, rs *appsv1.ReplicaSet) error {
	for _, ref := range rs.OwnerReferences {
		if ref.UID == app.UID {
			return nil
		}
	}
	cfg := appsv1ac.ReplicaSet(rs.Name, rs.Namespace).WithOwnerReferences(metav1ac.OwnerReference().
		WithAPIVersion(examplev1.GroupVersion.String()).WithKind("MyApp").WithName(app.Name).WithUID(app.UID).
		WithBlockOwnerDeletion(true))
	if err := ssa.Apply(ctx, r.Client, cfg, &appsv1.ReplicaSet{}, FieldOwner, false); err != nil {
		return &applyError{kind: "ReplicaSet", name: rs.Name, err: err}
	}
	return nil
}

// legacyReplicaSets lists the 0.2.0 ReplicaSets of the MyApp that the given Deployment
// controls, or, when controller is empty, those the migration orphaned. It is the one live
// list the operator makes, and only while a migration is under way.
func (r *MyAppReconciler) legacyReplicaSets(ctx context.Context, app *examplev1.MyApp, controller types.UID) ([]appsv1.ReplicaSet, error) {
	list := &appsv1.ReplicaSetList{}
	sel := desired.LegacySelectorLabels(app)
	sel[desired.LabelManagedBy] = desired.ManagedBy
	if err := r.APIReader.List(ctx, list, client.InNamespace(app.Namespace), client.MatchingLabels(sel)); err != nil {
		return nil, fmt.Errorf("listing the ReplicaSets of the 0.2.0 Deployment %s: %w", app.Name, err)
	}
	var out []appsv1.ReplicaSet
	for _, rs := range list.Items {
		ref := metav1.GetControllerOf(&rs)
		if (controller == "" && ref == nil) || (controller != "" && ref != nil && ref.UID == controller) {
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
	sets, err := r.legacyReplicaSets(ctx, app, "")
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
// pods, available, and then gives the Service, the budget and the Deployment their final form.
// Until then it reports the migration as work under way, and once migrationDeadline has passed
// since the new Deployment was created, as Stalled with what blocks it; retryAfter is how long
// until that deadline.
func (r *MyAppReconciler) finishMigration(ctx context.Context, app *examplev1.MyApp, obs *status.Observed,
	serviceApplied bool, now time.Time) (retryAfter time.Duration, err error) {
	obs.Waiting = &migrationWaiting
	if d := obs.Deployment; !status.FullyAvailable(d) || !serviceApplied {
		if d == nil {
			return 0, nil
		}
		left := d.CreationTimestamp.Add(migrationDeadline).Sub(now)
		if left > 0 {
			return left, nil
		}
		blocker := fmt.Sprintf("the new Deployment %s does not run all its pods, available", d.Name)
		if !serviceApplied {
			blocker = fmt.Sprintf("the Service %s cannot be applied (see the Degraded condition and the events)", app.Name)
		}
		obs.Waiting = nil
		return 0, &migrationStuckError{message: fmt.Sprintf("The selector migration of Deployment %s, made by 0.2.0, has not "+
			"finished within %s: %s. 0.2.0's pods keep serving until it finishes", app.Name, migrationDeadline, blocker)}
	}
	sets, err := r.legacyReplicaSets(ctx, app, "")
	if err != nil {
		return 0, err
	}
	for i := range sets {
		rs := &sets[i]
		err := r.Delete(ctx, rs, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: ptrTo(rs.UID)})
		if client.IgnoreNotFound(err) != nil {
			return 0, &applyError{kind: "ReplicaSet", name: rs.Name, err: err}
		}
	}
	if _, err := applyChild(ctx, r, app, nil, serviceKind, desired.Service(app, false), nil); err != nil {
		return 0, err
	}
	// A spec that cannot be built into a budget is reported by reconcileChildren.
	if budget, err := desired.PodDisruptionBudget(app, false); err == nil && budget != nil {
		if _, err := applyChild(ctx, r, app, nil, budgetKind, budget, nil); err != nil {
			return 0, err
		}
	}
	// The config hash is the one the Deployment was applied with in this reconcile.
	if deployment, err := r.deploymentIntent(app, false, obs.Deployment, configHashesOf(obs.Deployment)); err == nil {
		if _, err := applyChild(ctx, r, app, nil, deploymentKind, deployment, nil); err != nil {
			return 0, err
		}
	}
	obs.Waiting = nil
	r.Recorder.Eventf(app, corev1.EventTypeNormal, "Migrated", "Deployment %s now selects pods on %s", app.Name, desired.LabelSelector)
	return 0, nil
}
