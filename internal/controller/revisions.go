package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/status"
)

// The operator's intent for a pod template that served (status.readyTemplate) is stored in a
// ControllerRevision the MyApp owns, as StatefulSets keep their history: named <MyApp>-<hash>,
// labelled with the MyApp's selector label and the template's pod-template-hash, its data the
// pod template as the operator applies it (only the fields it owns). A rollback applies that
// intent in place of the spec's template, so fields other managers set on the Deployment's
// template (`kubectl rollout restart`'s annotation) stay theirs; and it survives the deletion
// of the Deployment, which takes the ReplicaSets with it (docs/design/rollout-decision.md).
// A template's intent is stored before the status names it: a rollback target always has
// one, except one a release before 0.4.1 recorded, whose ReplicaSet serves instead.

// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;create;delete

// kindRevision is the kind of the stored intents.
const kindRevision = "ControllerRevision"

// intents remembers the stored intents read, by MyApp (its name and UID) and pod-template-hash.
// A stored intent never changes (the operator creates it once and never updates it), so the
// memory only saves reads; losing it loses nothing.
type intents struct {
	mu sync.Mutex
	m  map[intentKey]storedIntent
}

type intentKey struct {
	app  types.NamespacedName
	uid  types.UID
	hash string
}

func keyOfIntent(app *examplev1.MyApp, hash string) intentKey {
	return intentKey{app: types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, uid: app.UID, hash: hash}
}

// storedIntent is the pod template intent stored for a template, with its digest in the terms
// of the spec's (templateDigest).
type storedIntent struct {
	template *corev1ac.PodTemplateSpecApplyConfiguration
	digest   string
}

func (m *intents) get(app *examplev1.MyApp, hash string) (storedIntent, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.m[keyOfIntent(app, hash)]
	return s, ok
}

func (m *intents) set(app *examplev1.MyApp, hash string, s storedIntent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[intentKey]storedIntent{}
	}
	m.m[keyOfIntent(app, hash)] = s
}

// drop forgets the stored intent of one template, whose ControllerRevision is deleted: a
// later storeIntent of the same template must create it again.
func (m *intents) drop(app *examplev1.MyApp, hash string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, keyOfIntent(app, hash))
}

// forget drops what is remembered of a MyApp that is gone.
func (m *intents) forget(app types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.m {
		if k.app == app {
			delete(m.m, k)
		}
	}
}

// revisionName names the stored intent of a MyApp's template.
func revisionName(app *examplev1.MyApp, hash string) string { return app.Name + "-" + hash }

// templateDigest is the digest of a pod template intent, as the rollback records the spec's
// (RollbackStatus.FailedSpec) and as a stored intent is compared with it. The deprecated
// serviceAccount field is left out: the builder mirrors serviceAccountName into it as the API
// server would (desired.podTemplate), and a digest without it is the one releases before that
// change recorded, so that a rollback they hold still holds.
func templateDigest(t *corev1ac.PodTemplateSpecApplyConfiguration) string {
	if t == nil {
		return ""
	}
	c := *t
	if t.Spec != nil {
		spec := *t.Spec
		spec.DeprecatedServiceAccount = nil
		c.Spec = &spec
	}
	raw, err := json.Marshal(&c)
	if err != nil {
		return ""
	}
	return status.Digest(string(raw))
}

// storeIntent stores the intent of the template hash, revision being the Deployment's revision
// of it, unless the MyApp has it stored already. It is created, never updated: one that exists
// and that the MyApp controls is kept as it is.
func (r *MyAppReconciler) storeIntent(ctx context.Context, app *examplev1.MyApp, hash string, revision int64,
	template *corev1ac.PodTemplateSpecApplyConfiguration) error {
	if _, ok := r.intents.get(app, hash); ok {
		return nil
	}
	raw, err := json.Marshal(template)
	if err != nil {
		return err
	}
	labels := desired.SelectorLabels(app)
	labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	labels[desired.LabelManagedBy] = desired.ManagedBy
	rev := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: revisionName(app, hash), Namespace: app.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(app, examplev1.GroupVersion.WithKind("MyApp"))},
		},
		Data:     runtime.RawExtension{Raw: raw},
		Revision: max(revision, 1),
	}
	switch err := r.Create(ctx, rev); {
	case apierrors.IsAlreadyExists(err):
		_, _, err = r.storedIntent(ctx, app, hash)
		return err
	case err != nil:
		return &applyError{kind: kindRevision, name: rev.Name, err: err}
	}
	r.intents.set(app, hash, storedIntent{template: template, digest: templateDigest(template)})
	return nil
}

// storedIntent reads the intent stored for the template hash; found is false when there is
// none the MyApp controls.
func (r *MyAppReconciler) storedIntent(ctx context.Context, app *examplev1.MyApp, hash string) (storedIntent, bool, error) {
	if s, ok := r.intents.get(app, hash); ok {
		return s, true, nil
	}
	rev := &appsv1.ControllerRevision{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: revisionName(app, hash)}, rev)
	switch {
	case apierrors.IsNotFound(err):
		return storedIntent{}, false, nil
	case err != nil:
		return storedIntent{}, false, fmt.Errorf("reading ControllerRevision %s: %w", revisionName(app, hash), err)
	case !metav1.IsControlledBy(rev, app) || rev.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash:
		return storedIntent{}, false, nil // not ours: the operator leaves it alone
	}
	template := &corev1ac.PodTemplateSpecApplyConfiguration{}
	if err := json.Unmarshal(rev.Data.Raw, template); err != nil {
		return storedIntent{}, false, fmt.Errorf("reading ControllerRevision %s: %w", rev.Name, err)
	}
	s := storedIntent{template: template, digest: templateDigest(template)}
	r.intents.set(app, hash, s)
	return s, true, nil
}

// pruneIntents deletes the MyApp's stored intents but those of the templates keep names: once
// the status names a new target, the others are no rollback's target any more. What is
// remembered of a deleted one goes with it.
func (r *MyAppReconciler) pruneIntents(ctx context.Context, app *examplev1.MyApp, ch *changes, keep ...string) error {
	list := &appsv1.ControllerRevisionList{}
	if err := r.APIReader.List(ctx, list, client.InNamespace(app.Namespace), client.MatchingLabels(desired.SelectorLabels(app))); err != nil {
		return fmt.Errorf("listing the ControllerRevisions of %s: %w", app.Name, err)
	}
	for i := range list.Items {
		rev := &list.Items[i]
		if !metav1.IsControlledBy(rev, app) || slices.Contains(keep, rev.Labels[appsv1.DefaultDeploymentUniqueLabelKey]) {
			continue
		}
		r.intents.drop(app, rev.Labels[appsv1.DefaultDeploymentUniqueLabelKey])
		err := r.Delete(ctx, rev, client.Preconditions{UID: &rev.UID})
		if client.IgnoreNotFound(err) != nil {
			return &applyError{kind: kindRevision, name: rev.Name, err: err}
		}
		ch.record(r, app, reasonDeleted, kindRevision, rev.Name)
	}
	return nil
}
