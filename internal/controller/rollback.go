package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/status"
)

// The auto-pilot: when the rollout of a new pod template fails for a reason tied to the
// template (status.RolloutFailure), the operator returns the Deployment to the last template
// that was Ready (status.readyTemplate), as `kubectl rollout undo` would, while the old pods
// keep serving. What it decided lives in the MyApp's status (status.rolledBack), so that a
// restarted or upgraded manager decides the same; it holds until the spec changes or a
// reconcile is requested, and nothing is written to the spec.

// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get

// templateHashRetry is how soon a MyApp looks again when the Deployment names a revision whose
// ReplicaSet the cache does not hold yet.
const templateHashRetry = 10 * time.Second

// errTemplateGone: the ReplicaSet of the template to return to no longer exists (the
// Deployment pruned it past its revisionHistoryLimit), so there is nothing to roll back to.
var errTemplateGone = errors.New("the ReplicaSet of the last Ready pod template is gone")

// holdRollback keeps the Deployment d on the template of the rollback in force: while its
// current template is that one, nothing is sent. It reports false when it cannot hold (the
// template's ReplicaSet is gone), and the spec's Deployment is applied as usual.
func (r *MyAppReconciler) holdRollback(ctx context.Context, app *examplev1.MyApp, ch *changes, obs *status.Observed, d *appsv1.Deployment) (bool, error) {
	rb := app.Status.RolledBack
	if d == nil {
		return false, nil
	}
	hash, known, err := r.currentTemplateHash(ctx, app, d)
	if err != nil {
		return true, err
	}
	obs.RolledBack, obs.Deployment, obs.DeploymentStale = rb, d, true
	if known && hash == rb.Template {
		return true, nil
	}
	applied, _, err := r.rollBackTo(ctx, app, ch, d, rb.Template)
	if errors.Is(err, errTemplateGone) {
		log.FromContext(ctx).Info("Cannot hold the rollback: its template's ReplicaSet is gone", "template", rb.Template)
		obs.RolledBack, obs.DeploymentStale = nil, false
		return false, nil
	}
	if err == nil {
		obs.Deployment = applied
	}
	return true, err
}

// autoPilot reads the Deployment's current template and, while it rolls out a template other
// than the last Ready one and that rollout failed, rolls back. It runs after the children
// were applied and the pods observed; retry asks for another look while the current
// template's ReplicaSet is not yet in the cache.
func (r *MyAppReconciler) autoPilot(ctx context.Context, app *examplev1.MyApp, ch *changes, obs *status.Observed, now time.Time) (retry time.Duration, err error) {
	d := obs.Deployment
	if d == nil || obs.DeploymentStale || obs.RolledBack != nil || r.pods == nil {
		return 0, nil
	}
	hash, known, err := r.currentTemplateHash(ctx, app, d)
	if err != nil {
		return 0, err
	}
	if !known {
		if d.Annotations[revisionAnnotation] != "" {
			// The current template's ReplicaSet is not in the cache yet: the Deployment's next
			// status write usually brings the news; this is the net beneath.
			return templateHashRetry, nil
		}
		return 0, nil
	}
	obs.TemplateHash = hash
	ready := app.Status.ReadyTemplate
	if !status.AutoRollback(app) || ready == "" || hash == ready {
		return 0, nil
	}
	reason, message, failed := status.RolloutFailure(app, d, obs.Pods)
	if !failed {
		return 0, nil
	}
	applied, readyImage, err := r.rollBackTo(ctx, app, ch, d, ready)
	if errors.Is(err, errTemplateGone) {
		return 0, nil // nothing to return to: the failure is reported as it is
	}
	if err != nil {
		return 0, err
	}
	obs.RolledBack = &examplev1.RollbackStatus{
		Generation: app.Generation, ReconcileRequest: app.Annotations[examplev1.ReconcileRequestAnnotation],
		FailedTemplate: hash, Template: ready, Reason: reason, Time: metav1.NewTime(now),
		Message: fmt.Sprintf("Rolled Deployment %s back to the last Ready pod template (%s, image %q): the template of generation %d "+
			"(%s, image %q) failed. %s. Change the spec, or request a reconcile to try it again",
			d.Name, ready, readyImage, app.Generation, hash, app.Spec.Image, message),
	}
	obs.Deployment, obs.DeploymentStale, obs.TemplateHash = applied, true, ""
	log.FromContext(ctx).Info("Rolled back a failed rollout", "reason", reason, "from", hash, "to", ready)
	if r.Metrics != nil {
		r.Metrics.RolledBack(types.NamespacedName{Namespace: app.Namespace, Name: app.Name})
	}
	return 0, nil
}

// rollBackTo applies the MyApp's Deployment with the pod template of the Deployment d's
// ReplicaSet of that pod-template-hash, read from the API server, and returns the Deployment
// as stored and the template's image.
func (r *MyAppReconciler) rollBackTo(ctx context.Context, app *examplev1.MyApp, ch *changes, d *appsv1.Deployment, hash string) (*appsv1.Deployment, string, error) {
	name, err := r.replicaSetOf(ctx, app, d, hash)
	if err != nil || name == "" {
		if err == nil {
			err = errTemplateGone
		}
		return nil, "", err
	}
	rs := &appsv1.ReplicaSet{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: name}, rs); err != nil {
		return nil, "", client.IgnoreNotFound(err)
	}
	template := rs.Spec.Template.DeepCopy()
	delete(template.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	raw, err := json.Marshal(template)
	if err != nil {
		return nil, "", err
	}
	templateCfg := &corev1ac.PodTemplateSpecApplyConfiguration{}
	if err := json.Unmarshal(raw, templateCfg); err != nil {
		return nil, "", err
	}
	cfg, err := r.deploymentIntent(app, false, d)
	if err != nil {
		return nil, "", err
	}
	cfg.Spec.Template = templateCfg
	applied, err := applyChild(ctx, r, app, ch, deploymentKind, cfg, func(*appsv1.Deployment) error {
		if cfg.Spec.Replicas == nil {
			return r.holdReplicas(ctx, app)
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	image := ""
	if len(template.Spec.Containers) > 0 {
		image = template.Spec.Containers[0].Image
	}
	return applied.obj, image, nil
}

// replicaSetOf names the ReplicaSet of the Deployment d whose pod-template-hash is hash, from
// the ReplicaSet cache, or "" when there is none.
func (r *MyAppReconciler) replicaSetOf(ctx context.Context, app *examplev1.MyApp, d *appsv1.Deployment, hash string) (string, error) {
	listCtx, cancel := context.WithTimeout(ctx, replicaSetListWait)
	defer cancel()
	sets := &metav1.PartialObjectMetadataList{}
	sets.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSetList"))
	if err := r.pods.List(listCtx, sets, client.InNamespace(app.Namespace), client.MatchingFields{podsByMyApp: app.Name}); err != nil {
		return "", err
	}
	for i := range sets.Items {
		rs := &sets.Items[i]
		if owner := metav1.GetControllerOf(rs); owner != nil && owner.UID == d.UID && rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey] == hash {
			return rs.Name, nil
		}
	}
	return "", nil
}
