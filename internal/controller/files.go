package controller

import (
	"context"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/ssa"
)

// A MyApp's spec.files live in an immutable ConfigMap named by a hash of their contents
// (desired.FilesOf). Since the name says the content, a files ConfigMap that exists and that
// the MyApp controls holds what the spec asks: the operator caches files ConfigMaps as
// metadata only, never their data. Each pod template mounts one of them and carries its hash
// (desired.LabelFiles), which the deployment controller copies onto the template's
// ReplicaSet; a files ConfigMap is deleted once it is neither the spec's nor carried by a
// ReplicaSet of the MyApp's Deployment, so that a rollback of the Deployment finds its files.

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch;delete

const kindConfigMap = "ConfigMap"

// configMapMetadata is an empty files ConfigMap as the manager's cache holds it: metadata only.
func configMapMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kindConfigMap))
	return m
}

// ensureFiles makes sure the files ConfigMap of the spec exists. One the cache holds, the
// MyApp controls and that carries the operator's labels needs nothing. On a cache miss the API server is asked: a missing one is
// created (not forced: should someone create one of that name in between, the apply
// conflicts instead of taking it over), and one the MyApp controls that lost the operator's
// labels gets them back (its data is the same, by its name).
func (r *MyAppReconciler) ensureFiles(ctx context.Context, app *examplev1.MyApp, ch *changes, files *desired.Files) error {
	name := ssa.NameOf(files.ConfigMap)
	labelled := func(m *metav1.PartialObjectMetadata) bool {
		return m.Labels[desired.LabelFiles] == files.Hash && m.Labels[desired.LabelManagedBy] == desired.ManagedBy &&
			m.Labels[desired.LabelSelector] == app.Name
	}
	cached := configMapMetadata()
	found, err := r.readChild(ctx, r.Client, app, name, cached)
	if err != nil || (found && labelled(cached)) {
		return err
	}
	live := configMapMetadata()
	exists, err := r.readChild(ctx, r.APIReader, app, name, live)
	if err != nil {
		return err
	}
	if exists && labelled(live) {
		return nil // created a moment ago, not yet in the cache
	}
	if err := ssa.Apply(ctx, r.Client, files.ConfigMap, &corev1.ConfigMap{}, FieldOwner, exists); err != nil {
		return &applyError{kind: kindConfigMap, name: name, err: err}
	}
	if !exists {
		ch.record(r, app, reasonCreated, kindConfigMap, name)
		log.FromContext(ctx).V(1).Info("Created child", "kind", kindConfigMap, "name", name)
	}
	return nil
}

// collectFiles deletes the MyApp's files ConfigMaps that neither the spec nor a held rollback
// (keep, the hashes of their files) nor a ReplicaSet of the MyApp mounts, once older than
// filesGrace. It deletes nothing while it cannot tell: without the Deployment d, or while the
// ReplicaSet cache cannot answer. retry, when set, is when a ConfigMap waiting out its grace
// may go.
func (r *MyAppReconciler) collectFiles(ctx context.Context, app *examplev1.MyApp, ch *changes, d *appsv1.Deployment, keep []string, now time.Time) (retry time.Duration, err error) {
	maps := &metav1.PartialObjectMetadataList{}
	maps.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kindConfigMap + "List"))
	if err := r.List(ctx, maps, client.InNamespace(app.Namespace), client.MatchingLabels{desired.LabelSelector: app.Name}); err != nil {
		return 0, err
	}
	var stale []*metav1.PartialObjectMetadata
	for i := range maps.Items {
		m := &maps.Items[i]
		if hash, ok := m.Labels[desired.LabelFiles]; ok && !slices.Contains(keep, hash) && metav1.IsControlledBy(m, app) && m.DeletionTimestamp.IsZero() {
			stale = append(stale, m)
		}
	}
	if len(stale) == 0 || d == nil || r.pods == nil {
		return 0, nil
	}
	mounted, known, err := r.mountedFiles(ctx, app)
	if err != nil || !known {
		return 0, err
	}
	for _, m := range stale {
		if mounted[m.Labels[desired.LabelFiles]] {
			continue
		}
		// A ConfigMap made a moment ago may be mounted by a ReplicaSet the cache does not
		// hold yet: it waits out filesGrace.
		if age := now.Sub(m.CreationTimestamp.Time); age < filesGrace {
			if retry == 0 || filesGrace-age < retry {
				retry = filesGrace - age
			}
			continue
		}
		err := r.Delete(ctx, m, client.Preconditions{UID: &m.UID})
		if client.IgnoreNotFound(err) != nil {
			return retry, &applyError{kind: kindConfigMap, name: m.Name, err: err}
		}
		ch.record(r, app, reasonDeleted, kindConfigMap, m.Name)
	}
	return retry, nil
}

// filesGrace is how old a files ConfigMap no ReplicaSet mounts must be before it is deleted:
// longer than the ReplicaSet cache takes to show a ReplicaSet just created.
const filesGrace = 10 * time.Second

// mountedFiles are the hashes of the files ConfigMaps the ReplicaSets of the MyApp mount,
// from the ReplicaSet cache: every ReplicaSet with the MyApp's label, whoever controls it (one
// orphaned by a Deployment deleted with --cascade=orphan is adopted by the next). known is
// false while that cache has not synced.
func (r *MyAppReconciler) mountedFiles(ctx context.Context, app *examplev1.MyApp) (map[string]bool, bool, error) {
	sets, synced, err := r.replicaSetsOf(ctx, app)
	if err != nil || !synced {
		return nil, false, err
	}
	mounted := map[string]bool{}
	for i := range sets {
		if hash, ok := sets[i].Labels[desired.LabelFiles]; ok {
			mounted[hash] = true
		}
	}
	return mounted, true, nil
}
