package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/rollout"
	"github.com/example/myapp-operator/internal/status"
)

// The auto-pilot: when the rollout of the spec's pod template fails, the operator returns the
// Deployment to the last template that served (status.readyTemplate), while the old pods keep
// serving. What to do is internal/rollout's decision (docs/design/rollout-decision.md), taken
// from stored objects and the clock; this file gathers its facts and carries out its answer,
// as the model of internal/rollout carries it out:
//
//  1. before the Deployment is applied, the rollback in force (rollout.Held), from the MyApp's
//     status or the Deployment's mark, decides which template it gets: the held target's
//     stored intent with the mark, or the spec's without;
//  2. every apply of the Deployment is guarded by the resourceVersion it was decided from, so
//     that a reconcile that reads a cache older than the last rollback cannot undo it;
//  3. after the pods are observed, rollout.Judge judges the Deployment's current template; a
//     verdict that acts is confirmed (rollout.Confirm) on the Deployment and its ReplicaSets read
//     from the API server;
//  4. a completed template's intent is stored (revisions.go) before the status names it;
//  5. a rollback is recorded in the MyApp's status, guarded by the MyApp's resourceVersion,
//     before the Deployment is changed.

// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get

// markAnnotation is where a rollback's apply records the rollback on the Deployment (JSON of
// the RollbackStatus): with the status, the second record a reconcile may see first.
const markAnnotation = "myapp.example.com/rolled-back"

// maxRollbackMessage bounds the rollback's message, which the conditions repeat (their
// messages may hold 32768 bytes) and the Deployment's mark carries.
const maxRollbackMessage = 4096

// templateHashRetry is how soon a MyApp looks again when the Deployment names a revision whose
// ReplicaSet the cache does not hold yet.
const templateHashRetry = 10 * time.Second

// pilot is what one reconcile gathers for the rollout decision before the Deployment is
// applied, and carries to the judgement after.
type pilot struct {
	facts rollout.Facts
	// spec is the spec's pod template intent (nil when the spec cannot be built).
	spec *corev1ac.PodTemplateSpecApplyConfiguration
	// held is the rollback in force, and heldIntent the intent of its target, once known.
	held       *examplev1.RollbackStatus
	heldIntent *corev1ac.PodTemplateSpecApplyConfiguration
	// applied is the digest of the template intent the Deployment carries after this
	// reconcile's apply, "" while not known.
	applied string
}

// rolloutBefore gathers the facts of the rollout decision from the MyApp and the Deployment as
// cached (nil when there is none), and the rollback in force. read is false while an input of
// the spec's template could not be read, kept true while a hash in it is the running one, kept
// for a missing ConfigMap or Secret: the template the spec asks for is not known then, and a
// rollback recorded stays in force. With none recorded, the template applied with the kept hash
// is the one judged: it rolls out (a new image, or a new reference to the missing source), so a
// failure of its pods is rolled back like any other. With no Deployment in the cache there is
// no mark to hold from, so the MyApp's status is read from the API server: a rollback recorded
// a moment ago, that the cache does not show yet, must not recreate the Deployment with the
// template that failed.
func (r *MyAppReconciler) rolloutBefore(ctx context.Context, app *examplev1.MyApp, cached *appsv1.Deployment,
	intent *appsv1ac.DeploymentApplyConfiguration, read, kept bool) (*pilot, error) {
	p := &pilot{}
	if intent != nil && intent.Spec != nil {
		p.spec = intent.Spec.Template
	}
	if cached == nil {
		fresh := &examplev1.MyApp{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(app), fresh); err != nil {
			return p, client.IgnoreNotFound(err)
		}
		if fresh.Generation != app.Generation || fresh.UID != app.UID {
			return p, &staleError{kind: "MyApp", name: app.Name}
		}
		app.Status, app.ResourceVersion = fresh.Status, fresh.ResourceVersion
	}
	p.facts = rollout.Facts{
		Spec: rollout.Spec{
			Generation: app.Generation, Request: status.Digest(app.Annotations[examplev1.ReconcileRequestAnnotation]),
			AutoRollback: status.AutoRollback(app),
		},
		ReadyTemplate: app.Status.ReadyTemplate,
		RolledBack:    app.Status.RolledBack,
		Now:           r.now(),
		Grace:         r.rolloutFailureGrace(),
	}
	if read && !kept && p.spec != nil {
		p.facts.Spec.Template = templateDigest(p.spec)
	}
	if cached != nil && r.pods != nil && r.replicaSetsSynced(ctx) {
		sets, _, err := r.replicaSetsOf(ctx, app)
		if err != nil {
			return p, err
		}
		p.facts.Deployment = deploymentFacts(cached, ownedSets(sets, cached), "")
	}
	if err := r.targetFacts(ctx, app, &p.facts); err != nil {
		return p, err
	}
	p.held = rollout.Held(p.facts)
	if read && kept && p.spec != nil && p.held == nil {
		p.facts.Spec.Template = templateDigest(p.spec)
	}
	return p, nil
}

// targetFacts says whether the target's intent is stored, or its ReplicaSet still is.
func (r *MyAppReconciler) targetFacts(ctx context.Context, app *examplev1.MyApp, f *rollout.Facts) error {
	if f.ReadyTemplate == "" {
		return nil
	}
	stored, found, err := r.storedIntent(ctx, app, f.ReadyTemplate)
	if err != nil {
		return err
	}
	if found {
		f.TargetStored, f.TargetIntent = true, stored.digest
		return nil
	}
	// Recorded by a release before 0.4.1, which stored no intent: its ReplicaSet serves.
	name, err := r.replicaSetWithHash(ctx, app, f.ReadyTemplate)
	f.TargetStored = name != ""
	return err
}

// holdRollback applies the Deployment (intent, the spec's, d as cached or nil) with the held
// rollback's target template in place of the spec's, and the mark. It reports false when
// there is nothing to hold with (no stored intent, and the target's ReplicaSet is gone).
func (r *MyAppReconciler) holdRollback(ctx context.Context, app *examplev1.MyApp, ch *changes, obs *status.Observed,
	d *appsv1.Deployment, intent *appsv1ac.DeploymentApplyConfiguration, p *pilot) (bool, error) {
	target, err := r.targetIntent(ctx, app, p.held.Template)
	if err != nil {
		obs.RolledBack, obs.Deployment, obs.DeploymentStale = p.held, d, true
		return true, err
	}
	if target == nil {
		log.FromContext(ctx).Info("Cannot hold the rollback: its target's intent is not stored and its ReplicaSet is gone",
			"template", p.held.Template)
		return false, nil
	}
	p.heldIntent = target
	obs.RolledBack, obs.Deployment, obs.DeploymentStale = p.held, d, true
	// The hold was decided from d as cached (Held's completedBefore): the apply goes over that
	// version only.
	version := ""
	if d != nil {
		version = d.ResourceVersion
	}
	applied, err := r.applyTarget(ctx, app, ch, intent, target, p.held, guardedAt(version))
	if err != nil {
		return true, err
	}
	r.countMade(ctx, app, applied, p.held)
	if metav1.IsControlledBy(applied.obj, app) {
		obs.Deployment = applied.obj
	}
	if applied.current {
		p.applied = templateDigest(target)
	}
	return true, nil
}

// targetIntent is the operator's intent for the template hash: the stored one, or for a target
// a release before 0.4.1 recorded, its ReplicaSet's whole template, which is then stored as
// the target's intent (so that the target outlives its ReplicaSet, which goes with a deleted
// Deployment); nil when neither is there.
func (r *MyAppReconciler) targetIntent(ctx context.Context, app *examplev1.MyApp, hash string) (*corev1ac.PodTemplateSpecApplyConfiguration, error) {
	stored, found, err := r.storedIntent(ctx, app, hash)
	if err != nil || found {
		return stored.template, err
	}
	name, err := r.replicaSetWithHash(ctx, app, hash)
	if err != nil || name == "" {
		return nil, err
	}
	rs := &appsv1.ReplicaSet{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: name}, rs); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("reading ReplicaSet %s: %w", name, err)
	}
	template := rs.Spec.Template.DeepCopy()
	delete(template.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	intent, err := asApplyConfiguration(template)
	if err != nil {
		return nil, err
	}
	revision, _ := strconv.ParseInt(rs.Annotations[revisionAnnotation], 10, 64)
	if err := r.storeIntent(ctx, app, hash, revision, intent); err != nil {
		// The ReplicaSet serves this look; the next one stores it.
		log.FromContext(ctx).Info("Could not store the intent of a rollback's target", "template", hash, "error", err.Error())
	}
	return intent, nil
}

// applyTarget applies intent, the MyApp's Deployment intent, with target in place of the
// spec's pod template and the rollback rb, when given, as the Deployment's mark, guarded. The
// intent is not changed.
func (r *MyAppReconciler) applyTarget(ctx context.Context, app *examplev1.MyApp, ch *changes,
	intent *appsv1ac.DeploymentApplyConfiguration, target *corev1ac.PodTemplateSpecApplyConfiguration,
	rb *examplev1.RollbackStatus, guard applyGuard) (applied[*appsv1.Deployment], error) {
	cfg := *intent
	spec := *intent.Spec
	spec.Template = target
	cfg.Spec = &spec
	meta := *intent.ObjectMetaApplyConfiguration
	meta.Annotations = maps.Clone(meta.Annotations)
	cfg.ObjectMetaApplyConfiguration = &meta
	if rb != nil {
		mark, err := json.Marshal(rb)
		if err != nil {
			return applied[*appsv1.Deployment]{obj: &appsv1.Deployment{}}, err
		}
		cfg.WithAnnotations(map[string]string{markAnnotation: string(mark)})
	}
	return applyChild(ctx, r, app, ch, deploymentKind, &cfg, func(*appsv1.Deployment) error {
		if cfg.Spec.Replicas == nil {
			return r.holdReplicas(ctx, app)
		}
		return nil
	}, guard)
}

// autoPilot judges the rollout the Deployment carries after this reconcile's apply (obs), and
// acts on the verdict: stores a completed template's intent before the status names it, or
// rolls a failed one back. retry asks for another look: when a problem's grace ends, or when a
// ReplicaSet is not in the cache yet.
func (r *MyAppReconciler) autoPilot(ctx context.Context, app *examplev1.MyApp, ch *changes, obs *status.Observed,
	intent *appsv1ac.DeploymentApplyConfiguration, p *pilot) (retry time.Duration, err error) {
	d := obs.Deployment
	if p == nil || d == nil || !metav1.IsControlledBy(d, app) || r.pods == nil || !r.replicaSetsSynced(ctx) {
		return 0, nil
	}
	sets, _, err := r.replicaSetsOf(ctx, app)
	if err != nil {
		return 0, err
	}
	f := p.facts
	f.Deployment = deploymentFacts(d, ownedSets(sets, d), p.applied)
	if f.Deployment.Current == "" && d.Annotations[revisionAnnotation] != "" {
		// The current template's ReplicaSet is not in the cache yet: the Deployment's next
		// status write usually brings the news; this is the net beneath.
		retry = templateHashRetry
	}
	if f.Problems, err = r.problemsOf(ctx, app, d, f, obs); err != nil {
		return retry, err
	}
	v := rollout.Judge(f)
	confirmedAt := d.ResourceVersion
	if v.ReadyTemplate != f.ReadyTemplate || v.RollBack != nil {
		// A verdict that acts is confirmed on the Deployment and its ReplicaSets as the API
		// server has them now: the caches lag each by its own.
		latest, judged, version, err := r.readLatest(ctx, app, d, f.Deployment, p.applied)
		if err != nil {
			return retry, err
		}
		v, confirmedAt = rollout.Confirm(f, judged, latest), version
	}
	if v.Recheck > 0 && (retry == 0 || v.Recheck < retry) {
		retry = v.Recheck
	}
	if v.ReadyTemplate != "" && v.ReadyTemplate != app.Status.ReadyTemplate {
		if err := r.recordReady(ctx, app, d, v.ReadyTemplate, f.Spec.Template, p); err != nil {
			return retry, err
		}
		obs.ReadyTemplate = v.ReadyTemplate
	}
	if v.Completed && v.Judged == app.Status.ReadyTemplate && v.RollBack == nil {
		// Best effort: without it, a later rollback to this template falls back to its
		// ReplicaSet, as 0.4.0's did; the next look tries again.
		if err := r.adoptReady(ctx, app, d, v.Judged, f.Spec.Template, p); err != nil {
			log.FromContext(ctx).Info("Could not store the intent of the template readyTemplate names", "template", v.Judged, "error", err.Error())
		}
	}
	if v.RollBack != nil {
		return retry, r.rollBack(ctx, app, ch, obs, intent, v, p, confirmedAt)
	}
	return retry, nil
}

// problemsOf lists the problems of the MyApp's pods (rolloutProblems) for the rollout decision
// f, and adds those of missing volume sources to the observation for the status.
func (r *MyAppReconciler) problemsOf(ctx context.Context, app *examplev1.MyApp, d *appsv1.Deployment, f rollout.Facts,
	obs *status.Observed) ([]rollout.Problem, error) {
	// The spec's volumes are the current template's once the Deployment carries the spec's
	// intent and the deployment controller has observed it; before, or while a rollback holds,
	// a missing source of the spec's is no problem of the template that runs.
	spec := f.Deployment.Applied != "" && f.Deployment.Applied == f.Spec.Template
	volumesOf := ""
	if spec && f.Deployment.ObservedGeneration >= f.Deployment.Generation {
		volumesOf = f.Deployment.Current
	}
	problems, err := r.rolloutProblems(ctx, app, d, volumesOf)
	if err != nil || !spec {
		return problems, err
	}
	// The kubelet gives a pod that waits to mount a missing volume source no reason: the
	// status names the source, as it names a missing Secret of env.
	for _, pr := range problems {
		if pr.Reason == examplev1.ReasonVolumeSourceMissing {
			obs.Pods = append(obs.Pods, status.ContainerWaiting{Reason: pr.Reason, Message: pr.Message})
		}
	}
	return problems, nil
}

// recordReady stores the intent of the completed template hash: the spec's when the
// Deployment carries the spec's intent, else the held target's (a rollback's target that
// completed its rollout again). The status names the template only once it is stored.
func (r *MyAppReconciler) recordReady(ctx context.Context, app *examplev1.MyApp, d *appsv1.Deployment, hash, spec string, p *pilot) error {
	template := p.spec
	if p.applied != spec {
		template = p.heldIntent
	}
	if template == nil {
		return nil
	}
	revision, _ := strconv.ParseInt(d.Annotations[revisionAnnotation], 10, 64)
	if err := r.storeIntent(ctx, app, hash, revision, template); err != nil {
		return err
	}
	// The status still names the template before: its intent goes the next time. The target
	// of a rollback in force stays while it holds: readyTemplate moves while the target serves
	// under another hash (`kubectl rollout restart`), and the hold applies the target's intent.
	keep := []string{hash, app.Status.ReadyTemplate}
	if p.held != nil {
		keep = append(keep, p.held.Template)
	}
	if err := r.pruneIntents(ctx, app, &changes{}, keep...); err != nil {
		log.FromContext(ctx).Info("Could not delete stored intents no rollback targets any more", "error", err.Error())
	}
	return nil
}

// adoptReady stores the intent of the template readyTemplate names when it has none: a
// release before 0.4.1 recorded the template without one. It is the spec's intent when the
// Deployment carries the spec's intent (applied) and the template judged completed is that
// one, so that a later rollback to it applies the operator's own fields only and survives the
// Deployment's deletion. Once stored (or found), the memory of intents answers without a read.
func (r *MyAppReconciler) adoptReady(ctx context.Context, app *examplev1.MyApp, d *appsv1.Deployment, hash, spec string, p *pilot) error {
	if p.spec == nil || p.held != nil || p.applied != spec {
		return nil
	}
	if _, found, err := r.storedIntent(ctx, app, hash); err != nil || found {
		return err
	}
	revision, _ := strconv.ParseInt(d.Annotations[revisionAnnotation], 10, 64)
	return r.storeIntent(ctx, app, hash, revision, p.spec)
}

// readLatest reads the Deployment, then its ReplicaSets, from the API server: ReplicaSets read
// after a Deployment are at least as new as it is. judged is the Deployment the verdict was
// made on, with its current template from those ReplicaSets; latest is nil when the Deployment
// is gone, and version its resourceVersion, which an apply of the confirmed verdict is guarded
// by.
func (r *MyAppReconciler) readLatest(ctx context.Context, app *examplev1.MyApp, seenD *appsv1.Deployment, seen *rollout.Deployment,
	applied string) (latest, judged *rollout.Deployment, version string, err error) {
	d := &appsv1.Deployment{}
	err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(app), d)
	found := err == nil
	if client.IgnoreNotFound(err) != nil {
		return nil, nil, "", fmt.Errorf("reading Deployment %s: %w", app.Name, err)
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSetList"))
	if err := r.APIReader.List(ctx, list, client.InNamespace(app.Namespace),
		client.MatchingLabels(desired.SelectorLabels(app))); err != nil {
		return nil, nil, "", fmt.Errorf("listing the ReplicaSets of %s: %w", app.Name, err)
	}
	j := *seen
	j.Current = rollout.CurrentTemplate(seenD.Annotations[revisionAnnotation], ownedSets(list.Items, seenD))
	if !found || !metav1.IsControlledBy(d, app) {
		return nil, &j, "", nil
	}
	sets := ownedSets(list.Items, d)
	if err := r.readCurrentTemplate(ctx, d, sets); err != nil {
		return nil, nil, "", err
	}
	l := deploymentFacts(d, sets, applied)
	return l, &j, d.ResourceVersion, nil
}

// readCurrentTemplate reads, from the API server, the ReplicaSet among sets (those the
// Deployment controls) at its revision, and notes whether its pod template is another than
// the Deployment's: the deployment controller may
// have observed the Deployment's generation before it made the ReplicaSet of its template
// (CurrentTemplate says when), and the metadata the caches hold cannot tell. The templates are
// compared as the deployment controller's EqualIgnoreHash compares them (semantically, without
// the pod-template-hash label), so that a quantity written another way is the same template,
// as it is for the deployment controller.
func (r *MyAppReconciler) readCurrentTemplate(ctx context.Context, d *appsv1.Deployment, sets []rollout.ReplicaSet) error {
	for i := range sets {
		set := &sets[i]
		if set.Revision != d.Annotations[revisionAnnotation] {
			continue
		}
		rs := &appsv1.ReplicaSet{}
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: d.Namespace, Name: set.Name}, rs)
		switch {
		case apierrors.IsNotFound(err):
			set.Other = true // gone since the list: the next look finds what replaced it
		case err != nil:
			return fmt.Errorf("reading ReplicaSet %s: %w", set.Name, err)
		default:
			set.Other = !sameTemplate(rs.Spec.Template, d.Spec.Template)
		}
	}
	return nil
}

// sameTemplate is the deployment controller's EqualIgnoreHash: the two pod templates are
// semantically equal once the pod-template-hash label is left out of both.
func sameTemplate(a, b corev1.PodTemplateSpec) bool {
	a, b = *a.DeepCopy(), *b.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return equality.Semantic.DeepEqual(a, b)
}

// rollBack records the verdict's rollback in the MyApp's status, guarded by the MyApp's
// resourceVersion, then applies its target with the mark, guarded by the Deployment's version
// the verdict was confirmed on (confirmedAt): a manager stopped between the two finds the
// record and holds; a MyApp changed since (a fix pushed) refuses the record, and nothing is
// applied; a Deployment changed since (its rollout completed) refuses the apply, and a later
// reconcile holds the record (countMade counts it when an apply makes it).
func (r *MyAppReconciler) rollBack(ctx context.Context, app *examplev1.MyApp, ch *changes, obs *status.Observed,
	intent *appsv1ac.DeploymentApplyConfiguration, v rollout.Verdict, p *pilot, confirmedAt string) error {
	rb := *v.RollBack
	target, err := r.targetIntent(ctx, app, rb.Template)
	if err != nil || target == nil {
		return err // the target's intent is gone since the decision: nothing to return to
	}
	rb.Message = rollbackMessage(app, obs.Deployment, v.Failure, rb, target)

	before := app.DeepCopy()
	app.Status.RolledBack = &rb
	if err := r.Status().Patch(ctx, app, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		*app = *before
		if apierrors.IsConflict(err) {
			return &staleError{kind: "MyApp", name: app.Name}
		}
		return client.IgnoreNotFound(err)
	}
	r.statusWrites.remember(client.ObjectKeyFromObject(app), app.ResourceVersion)
	obs.RolledBack = &rb
	p.heldIntent = target

	applied, err := r.applyTarget(ctx, app, ch, intent, target, &rb, guardedAt(confirmedAt))
	if err != nil {
		return err // recorded: the next reconcile holds it
	}
	r.countMade(ctx, app, applied, &rb)
	obs.Deployment, obs.DeploymentStale = applied.obj, true
	return nil
}

// countMade counts and logs the rollback rb once an apply has made it: the apply wrote over a
// Deployment that did not carry rb's mark yet. That is the rollback's own apply, or, when that
// one was refused, the hold's that made it later. A record voided before any apply made it (its
// rollout completed first) is not counted, nor a Deployment made again on the target after its
// deletion, nor a restarted manager holding a rollback made before.
func (r *MyAppReconciler) countMade(ctx context.Context, app *examplev1.MyApp, applied applied[*appsv1.Deployment], rb *examplev1.RollbackStatus) {
	if !applied.wrote || applied.before == nil {
		return
	}
	if m := markOf(applied.before); m != nil && *m == *rb {
		return
	}
	log.FromContext(ctx).Info("Rolled back a failed rollout", "reason", rb.Reason, "from", rb.FailedTemplate, "to", rb.Template)
	if r.Metrics != nil {
		r.Metrics.RolledBack(types.NamespacedName{Namespace: app.Namespace, Name: app.Name})
	}
}

// rollbackMessage says what was rolled back, why, and how to try the template again.
func rollbackMessage(app *examplev1.MyApp, d *appsv1.Deployment, f *rollout.Failure, rb examplev1.RollbackStatus,
	target *corev1ac.PodTemplateSpecApplyConfiguration) string {
	targetImage := ""
	if target.Spec != nil && len(target.Spec.Containers) > 0 && target.Spec.Containers[0].Image != nil {
		targetImage = *target.Spec.Containers[0].Image
	}
	why := status.DeadlineMessage(d.Name)
	if f != nil && f.Problem != nil {
		pr := f.Problem
		why = status.RolloutProblemMessage(app, status.ContainerWaiting{Pod: pr.Pod, Container: pr.Container, Image: pr.Image,
			Reason: pr.Reason, Message: pr.Message})
	}
	change := "Change the spec"
	if names := desired.ReferencedConfigMaps(app); desired.RollsOnConfigChange(app) && len(names) > 0 {
		// The template also holds the data of these ConfigMaps: a change of theirs is a new template.
		change = fmt.Sprintf("Change the spec or the ConfigMaps it rolls out on (%s)", strings.Join(names, ", "))
	}
	return truncate(fmt.Sprintf("Rolled Deployment %s back to the last Ready pod template (%s, image %q): the template of generation %d "+
		"(%s, image %q) failed. %s. %s, or request a reconcile to try it again",
		d.Name, rb.Template, targetImage, rb.Generation, rb.FailedTemplate, app.Spec.Image, why, change), maxRollbackMessage)
}

// rolloutProblems lists the problems of the MyApp's pods, of any template, with their first
// sightings, and, for the Deployment's current template (hash current) while some of its pods
// are not available, the ConfigMaps its volumes take that do not exist: the kubelet waits to
// mount them and reports no reason for it.
func (r *MyAppReconciler) rolloutProblems(ctx context.Context, app *examplev1.MyApp, d *appsv1.Deployment, current string) ([]rollout.Problem, error) {
	pods := &corev1.PodList{}
	if err := r.pods.List(ctx, pods, client.InNamespace(app.Namespace), client.MatchingFields{podsByMyApp: app.Name}); err != nil {
		return nil, err
	}
	var problems []rollout.Problem
	waiting := make(map[string]bool, len(pods.Items))
	for i := range pods.Items {
		pod := &pods.Items[i]
		waiting[pod.Name] = !podReady(pod)
		for _, w := range waitingIn(pod) {
			problems = append(problems, rollout.Problem{Template: pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey],
				Pod: w.Pod, Container: w.Container, Image: w.Image, Reason: w.Reason, Message: w.Message})
		}
	}
	// Some of the current template's pods may wait: it has pods, and not every pod is
	// available. (Not "fewer available than updated": during a rolling update the old pods are
	// the available ones, and the new pod that waits hides behind them.)
	if current != "" && d.Status.UpdatedReplicas > 0 && d.Status.AvailableReplicas < d.Status.Replicas {
		for _, src := range r.missingVolumeSources(ctx, app) {
			problems = append(problems, rollout.Problem{Template: current, Container: src.Kind + "/" + src.Name,
				Reason: examplev1.ReasonVolumeSourceMissing, Message: fmt.Sprintf("%s %s (%s)", src.Kind, src.Name, src.Field)})
		}
	}
	r.sightings.stamp(client.ObjectKeyFromObject(app), problems, waiting, r.now())
	return problems, nil
}

// kindPersistentVolumeClaim is the kind of a claim a volume takes (desired.VolumeSource.Kind).
const kindPersistentVolumeClaim = "PersistentVolumeClaim"

// missingVolumeSources are the ConfigMaps and PersistentVolumeClaims the MyApp's volumes take,
// not optional, that do not exist: a ConfigMap the manager's cache (every ConfigMap's
// metadata) does not hold, a claim the API server does not have (read as metadata, and only
// while pods of the current template wait, as here). A pod of a missing claim waits
// unscheduled, with nothing but the scheduler's message to say why. Secrets are not read: the
// operator is granted nothing on them. A claim the operator may not read (a grant older than
// 0.4.1's) is left to the progress deadline, as before. An error is never a missing source.
func (r *MyAppReconciler) missingVolumeSources(ctx context.Context, app *examplev1.MyApp) []desired.VolumeSource {
	var missing []desired.VolumeSource
	for _, src := range desired.RequiredVolumeSources(app) {
		key := types.NamespacedName{Namespace: app.Namespace, Name: src.Name}
		var err error
		switch src.Kind {
		case kindConfigMap:
			err = r.Get(ctx, key, configMapMetadata())
		case kindPersistentVolumeClaim:
			claim := &metav1.PartialObjectMetadata{}
			claim.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kindPersistentVolumeClaim))
			if err = r.APIReader.Get(ctx, key, claim); apierrors.IsForbidden(err) {
				continue
			}
		default:
			continue
		}
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, src)
		case err != nil:
			// No answer is no evidence that the source is missing: the rest of the decision
			// goes on without it, and the next look asks again.
			log.FromContext(ctx).V(1).Info("Could not tell whether a volume source exists", "kind", src.Kind, "name", src.Name, "error", err.Error())
		}
	}
	return missing
}

// deploymentFacts is what the rollout decision reads of the Deployment d, whose ReplicaSets
// are sets, and whose template intent after this reconcile's apply is applied ("" unknown).
func deploymentFacts(d *appsv1.Deployment, sets []rollout.ReplicaSet, applied string) *rollout.Deployment {
	f := &rollout.Deployment{
		Generation: d.Generation, ObservedGeneration: d.Status.ObservedGeneration, Paused: d.Spec.Paused,
		Replicas: wantedReplicas(d), StatusReplicas: d.Status.Replicas, UpdatedReplicas: d.Status.UpdatedReplicas,
		AvailableReplicas: d.Status.AvailableReplicas, Applied: applied, Mark: markOf(d),
	}
	f.Current = rollout.CurrentTemplate(d.Annotations[revisionAnnotation], sets)
	currentName := ""
	if f.Current != "" {
		currentName = d.Name + "-" + f.Current
	}
	for _, c := range d.Status.Conditions {
		if c.Type != appsv1.DeploymentProgressing {
			continue
		}
		f.NewReplicaSetAvailable = c.Status == corev1.ConditionTrue && c.Reason == "NewReplicaSetAvailable"
		f.DeadlineExceeded = rollout.DeadlineExceeded(string(c.Status), c.Reason, c.Message, currentName)
	}
	return f
}

// wantedReplicas is the Deployment's spec.replicas, 1 when unset (the API server's default).
func wantedReplicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas != nil {
		return *d.Spec.Replicas
	}
	return 1
}

// ownedSets are the ReplicaSets the Deployment d controls, as the decision reads them.
func ownedSets(sets []metav1.PartialObjectMetadata, d *appsv1.Deployment) []rollout.ReplicaSet {
	var out []rollout.ReplicaSet
	for i := range sets {
		rs := &sets[i]
		if owner := metav1.GetControllerOf(rs); owner != nil && owner.UID == d.UID {
			out = append(out, rollout.ReplicaSet{Name: rs.Name, Hash: rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey],
				Revision: rs.Annotations[revisionAnnotation]})
		}
	}
	return out
}

// markOf reads the rollback the Deployment's mark records, or nil (none, or not one the
// operator wrote).
func markOf(d *appsv1.Deployment) *examplev1.RollbackStatus {
	raw, ok := d.Annotations[markAnnotation]
	if !ok {
		return nil
	}
	rb := &examplev1.RollbackStatus{}
	if err := json.Unmarshal([]byte(raw), rb); err != nil || rb.FailedSpec == "" || rb.Template == "" {
		return nil
	}
	return rb
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

// replicaSetWithHash names the MyApp's ReplicaSet with that pod-template-hash, from the
// ReplicaSet cache, or "" when there is none.
func (r *MyAppReconciler) replicaSetWithHash(ctx context.Context, app *examplev1.MyApp, hash string) (string, error) {
	if r.pods == nil {
		return "", nil
	}
	sets, synced, err := r.replicaSetsOf(ctx, app)
	if err != nil {
		return "", err
	}
	if !synced {
		return "", errors.New("the ReplicaSet cache has not synced")
	}
	for i := range sets {
		if rs := &sets[i]; rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey] == hash && metav1.GetControllerOf(rs) != nil {
			return rs.Name, nil
		}
	}
	return "", nil
}

// asApplyConfiguration turns a pod template into an apply configuration of the same fields.
func asApplyConfiguration(template *corev1.PodTemplateSpec) (*corev1ac.PodTemplateSpecApplyConfiguration, error) {
	raw, err := json.Marshal(template)
	if err != nil {
		return nil, err
	}
	cfg := &corev1ac.PodTemplateSpecApplyConfiguration{}
	return cfg, json.Unmarshal(raw, cfg)
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
