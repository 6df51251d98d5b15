package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/log"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/status"
)

// The auto-pilot: when the rollout of a new pod template fails for a reason tied to the
// template (status.RolloutFailure), the operator returns the Deployment to the last template
// whose rollout completed (status.readyTemplate), as `kubectl rollout undo` would, while the
// old pods keep serving. What it decided lives in the MyApp's status (status.rolledBack), so
// that a restarted or upgraded manager decides the same; it holds while the spec asks for
// the failed template and no reconcile is requested, and nothing is written to the spec.
//
// The status is read from the cache, which may not hold the status write of the reconcile
// that rolled back when the next one starts (that one is queued by the rollback's own change
// to the Deployment): the reconciler also remembers each rollback it made, and holds it from
// either. The memory is a cache of the status, and of the template returned to; losing it
// loses nothing.

// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get

// templateHashRetry is how soon a MyApp looks again when the Deployment names a revision whose
// ReplicaSet the cache does not hold yet.
const templateHashRetry = 10 * time.Second

// maxRollbackMessage bounds the rollback's message, which the conditions repeat (their
// messages may hold 32768 bytes).
const maxRollbackMessage = 4096

// errTemplateGone: the ReplicaSet of the template to return to no longer exists (the
// Deployment pruned it past its revisionHistoryLimit), so there is nothing to roll back to.
var errTemplateGone = errors.New("the ReplicaSet of the last Ready pod template is gone")

// rollbacks remembers, per MyApp, the rollback the reconciler made or held last and the pod
// template it returned to.
type rollbacks struct {
	mu sync.Mutex
	m  map[types.NamespacedName]rollbackMemo
}

type rollbackMemo struct {
	app      types.UID
	record   examplev1.RollbackStatus
	template *corev1.PodTemplateSpec
}

func (r *rollbacks) get(app *examplev1.MyApp) (rollbackMemo, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.m[types.NamespacedName{Namespace: app.Namespace, Name: app.Name}]
	return m, ok && m.app == app.UID
}

func (r *rollbacks) set(app *examplev1.MyApp, m rollbackMemo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[types.NamespacedName]rollbackMemo{}
	}
	m.app = app.UID
	r.m[types.NamespacedName{Namespace: app.Namespace, Name: app.Name}] = m
}

func (r *rollbacks) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, key)
}

// specTemplateDigest is the digest of the pod template the spec asks for, as the rollback
// records it (RollbackStatus.FailedSpec).
func specTemplateDigest(deployment *appsv1ac.DeploymentApplyConfiguration) string {
	if deployment == nil || deployment.Spec == nil {
		return ""
	}
	raw, err := json.Marshal(deployment.Spec.Template)
	if err != nil {
		return ""
	}
	return status.Digest(string(raw))
}

// heldRollback is the rollback in force for the MyApp whose spec asks for the template of
// digest spec: the status's, or the one this reconciler made and the cache does not show yet.
// While the spec's template is not known (specKnown false: a ConfigMap it takes a hash of could
// not be read, or is missing), a rollback recorded stays in force whatever spec is, and nothing
// is forgotten.
func (r *MyAppReconciler) heldRollback(app *examplev1.MyApp, spec string, specKnown bool) (*examplev1.RollbackStatus, *corev1.PodTemplateSpec) {
	memo, known := r.rollbacks.get(app)
	if !specKnown {
		switch {
		case app.Status.RolledBack != nil:
			return app.Status.RolledBack, nil
		case known:
			return &memo.record, memo.template
		}
		return nil, nil
	}
	if status.RollbackHolds(app.Status.RolledBack, app, spec) {
		if known && memo.record.FailedSpec == spec && memo.record.Template == app.Status.RolledBack.Template {
			return app.Status.RolledBack, memo.template
		}
		return app.Status.RolledBack, nil
	}
	if known && status.RollbackHolds(&memo.record, app, spec) {
		return &memo.record, memo.template
	}
	if known {
		r.rollbacks.forget(types.NamespacedName{Namespace: app.Namespace, Name: app.Name})
	}
	return nil, nil
}

// holdRollback applies the MyApp's Deployment (deployment, its intent) with the template of
// the rollback rb in place of the spec's; d is the Deployment as cached. It reports false when
// it cannot hold (the template's ReplicaSet is gone), and the spec's Deployment is applied as
// usual.
func (r *MyAppReconciler) holdRollback(ctx context.Context, app *examplev1.MyApp, ch *changes, obs *status.Observed,
	d *appsv1.Deployment, deployment *appsv1ac.DeploymentApplyConfiguration, rb *examplev1.RollbackStatus, template *corev1.PodTemplateSpec) (bool, error) {
	if d == nil {
		return false, nil
	}
	if template == nil {
		var err error
		if template, err = r.templateOf(ctx, app, d, rb.Template); errors.Is(err, errTemplateGone) {
			log.FromContext(ctx).Info("Cannot hold the rollback: its template's ReplicaSet is gone", "template", rb.Template)
			return false, nil
		} else if err != nil {
			obs.RolledBack, obs.Deployment, obs.DeploymentStale = rb, d, true
			return true, err
		}
	}
	r.rollbacks.set(app, rollbackMemo{record: *rb, template: template})
	obs.RolledBack, obs.Deployment, obs.DeploymentStale = rb, d, true
	applied, err := r.applyTemplate(ctx, app, ch, deployment, template)
	if err == nil {
		obs.Deployment = applied
	}
	return true, err
}

// autoPilot reads the Deployment's current template and, while it rolls out a template other
// than the last Ready one and that rollout failed, rolls back. It runs after the children
// were applied and the pods observed; retry asks for another look (a ReplicaSet not yet in the
// cache, a pod problem within its grace).
func (r *MyAppReconciler) autoPilot(ctx context.Context, app *examplev1.MyApp, ch *changes, obs *status.Observed,
	deployment *appsv1ac.DeploymentApplyConfiguration, now time.Time) (retry time.Duration, err error) {
	d := obs.Deployment
	if d == nil || obs.DeploymentStale || obs.RolledBack != nil || r.pods == nil || !r.replicaSetsSynced(ctx) {
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
	if !status.AutoRollback(app) || ready == "" || hash == ready || deployment == nil {
		return 0, nil
	}
	reason, message, failed, recheck := status.RolloutFailure(app, d, obs.Pods, now, r.rolloutFailureGrace())
	if !failed {
		return recheck, nil
	}
	template, err := r.templateOf(ctx, app, d, ready)
	if errors.Is(err, errTemplateGone) {
		return 0, nil // nothing to return to: the failure is reported as it is
	}
	if err != nil {
		return 0, err
	}
	applied, err := r.applyTemplate(ctx, app, ch, deployment, template)
	if err != nil {
		return 0, err
	}
	readyImage := ""
	if len(template.Spec.Containers) > 0 {
		readyImage = template.Spec.Containers[0].Image
	}
	change := "Change the spec"
	if names := desired.ReferencedConfigMaps(app); desired.RollsOnConfigChange(app) && len(names) > 0 {
		// The template also holds the data of these ConfigMaps: a change of theirs is a new template.
		change = fmt.Sprintf("Change the spec or the ConfigMaps it rolls out on (%s)", strings.Join(names, ", "))
	}
	rb := examplev1.RollbackStatus{
		Generation: app.Generation, FailedSpec: specTemplateDigest(deployment),
		ReconcileRequest: status.Digest(app.Annotations[examplev1.ReconcileRequestAnnotation]),
		FailedTemplate:   hash, Template: ready, Reason: reason, Time: metav1.NewTime(now),
		Message: truncate(fmt.Sprintf("Rolled Deployment %s back to the last Ready pod template (%s, image %q): the template of generation %d "+
			"(%s, image %q) failed. %s. %s, or request a reconcile to try it again",
			d.Name, ready, readyImage, app.Generation, hash, app.Spec.Image, message, change), maxRollbackMessage),
	}
	r.rollbacks.set(app, rollbackMemo{record: rb, template: template})
	obs.RolledBack = &rb
	obs.Deployment, obs.DeploymentStale, obs.TemplateHash = applied, true, ""
	log.FromContext(ctx).Info("Rolled back a failed rollout", "reason", reason, "from", hash, "to", ready)
	if r.Metrics != nil {
		r.Metrics.RolledBack(types.NamespacedName{Namespace: app.Namespace, Name: app.Name})
	}
	return 0, nil
}

func (r *MyAppReconciler) rolloutFailureGrace() time.Duration {
	if r.RolloutFailureGrace > 0 {
		return r.RolloutFailureGrace
	}
	return status.DefaultRolloutFailureGrace
}

// replicaSetsSynced tells, without waiting, whether the ReplicaSet cache has synced: without
// it (no RBAC to list ReplicaSets) the auto-pilot does nothing rather than hold a worker.
func (r *MyAppReconciler) replicaSetsSynced(ctx context.Context) bool {
	sets, _ := replicaSetMetadata()
	informer, err := r.pods.GetInformer(ctx, sets, cache.BlockUntilSynced(false))
	return err == nil && informer.HasSynced()
}

// templateOf reads, from the API server, the pod template of the ReplicaSet of the MyApp with
// that pod-template-hash, without the hash label (the Deployment's template has none).
func (r *MyAppReconciler) templateOf(ctx context.Context, app *examplev1.MyApp, d *appsv1.Deployment, hash string) (*corev1.PodTemplateSpec, error) {
	name, err := r.replicaSetOf(ctx, app, d, hash)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, errTemplateGone
	}
	rs := &appsv1.ReplicaSet{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: name}, rs); apierrors.IsNotFound(err) {
		return nil, errTemplateGone
	} else if err != nil {
		return nil, fmt.Errorf("reading ReplicaSet %s: %w", name, err)
	}
	template := rs.Spec.Template.DeepCopy()
	delete(template.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return template, nil
}

// applyTemplate applies deployment, the MyApp's Deployment intent, with template in place of
// the spec's pod template, and returns the Deployment as stored. The intent is not changed.
func (r *MyAppReconciler) applyTemplate(ctx context.Context, app *examplev1.MyApp, ch *changes,
	deployment *appsv1ac.DeploymentApplyConfiguration, template *corev1.PodTemplateSpec) (*appsv1.Deployment, error) {
	raw, err := json.Marshal(template)
	if err != nil {
		return nil, err
	}
	templateCfg := &corev1ac.PodTemplateSpecApplyConfiguration{}
	if err := json.Unmarshal(raw, templateCfg); err != nil {
		return nil, err
	}
	cfg := *deployment
	spec := *deployment.Spec
	spec.Template = templateCfg
	cfg.Spec = &spec
	applied, err := applyChild(ctx, r, app, ch, deploymentKind, &cfg, func(*appsv1.Deployment) error {
		if cfg.Spec.Replicas == nil {
			return r.holdReplicas(ctx, app)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return applied.obj, nil
}

// replicaSetOf names the ReplicaSet of the Deployment d whose pod-template-hash is hash, from
// the ReplicaSet cache, or "" when there is none.
func (r *MyAppReconciler) replicaSetOf(ctx context.Context, app *examplev1.MyApp, d *appsv1.Deployment, hash string) (string, error) {
	sets, synced, err := r.replicaSetsOf(ctx, app)
	if err != nil {
		return "", err
	}
	if !synced {
		return "", errors.New("the ReplicaSet cache has not synced")
	}
	for i := range sets {
		rs := &sets[i]
		if owner := metav1.GetControllerOf(rs); owner != nil && owner.UID == d.UID && rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey] == hash {
			return rs.Name, nil
		}
	}
	return "", nil
}

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
