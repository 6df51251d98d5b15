package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

// Config-aware rollouts: a MyApp with spec.rolloutOnConfigChange carries on its pod template
// a hash of the data of the ConfigMaps it references (desired.ConfigHash), so that a change of
// their data rolls its pods out. The manager's cache holds every ConfigMap's metadata and no
// ConfigMap's data: a change shows as a new resourceVersion, and only then is the data of that
// one ConfigMap read from the API server, once for all the MyApps that reference it.

// configMapsOf are the ConfigMaps a MyApp rolls out on: none without
// spec.rolloutOnConfigChange.
func configMapsOf(app *examplev1.MyApp) []string {
	if !desired.RollsOnConfigChange(app) {
		return nil
	}
	return desired.ReferencedConfigMaps(app)
}

// configMapsWatched are the ConfigMaps whose changes reconcile a MyApp: those it rolls out on,
// and those its volumes take, whose creation lets pods that wait to mount them start
// (rollback.go reports one that is missing).
func configMapsWatched(app *examplev1.MyApp) []string {
	names := configMapsOf(app)
	for _, src := range desired.RequiredVolumeSources(app) {
		if src.Kind == kindConfigMap {
			names = append(names, src.Name)
		}
	}
	return names
}

// configDigests remembers, per ConfigMap, the digest of its data at one resourceVersion ("" for
// one found missing), so that a ConfigMap is read again only once it changed.
type configDigests struct {
	mu sync.Mutex
	m  map[types.NamespacedName]configDigest
}

type configDigest struct {
	resourceVersion string
	digest          string
}

func (c *configDigests) get(key types.NamespacedName) (configDigest, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[key]
	return d, ok
}

// swap stores d for key if the entry is still old (or still missing, when found is false):
// of two reconcilers that read one ConfigMap at once, the one that read it earlier may store
// last, and must not put back an older version the other replaced.
func (c *configDigests) swap(key types.NamespacedName, old configDigest, found bool, d configDigest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if current, ok := c.m[key]; ok != found || current != old {
		return
	}
	if c.m == nil {
		c.m = map[types.NamespacedName]configDigest{}
	}
	c.m[key] = d
}

func (c *configDigests) forget(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}

// configHash is the hash the MyApp's pod template carries for the ConfigMaps it references,
// or "" when it asks for none. current is the Deployment as cached, or nil.
//
// While a ConfigMap the pods cannot start without is missing (deleted to be created again, as
// `kubectl replace --force` does), the hash is the one the Deployment carries (kept is true): a
// rollout then would only replace running pods with pods that cannot start. The template the
// spec asks for is not known then, so a rollback in force stays in force. Only a Deployment
// that does not exist (asked of the API server on a cache miss) gets a hash with the
// ConfigMap absent.
func (r *MyAppReconciler) configHash(ctx context.Context, app *examplev1.MyApp, current *appsv1.Deployment) (hash string, kept bool, err error) {
	if !desired.RollsOnConfigChange(app) {
		return "", false, nil
	}
	names := desired.ReferencedConfigMaps(app)
	if len(names) == 0 {
		return "", false, nil
	}
	required := desired.RequiredConfigMaps(app)
	digests := make(map[string]string, len(names))
	for _, name := range names {
		d, err := r.configMapDigest(ctx, types.NamespacedName{Namespace: app.Namespace, Name: name})
		if err != nil {
			return "", false, err
		}
		if d == desired.ConfigMapAbsent && required[name] {
			running, err := r.runningDeployment(ctx, app, current)
			if err != nil {
				return "", false, err
			}
			if running != nil {
				log.FromContext(ctx).V(1).Info("A ConfigMap the pods need is missing: the template keeps its config hash", "configMap", name)
				return configHashesOf(running).ConfigMaps, true, nil
			}
		}
		digests[name] = d
	}
	return desired.ConfigHash(digests), false, nil
}

// runningDeployment is the MyApp's Deployment: current, the cached one, or on a cache miss
// the API server's; nil when there is none.
func (r *MyAppReconciler) runningDeployment(ctx context.Context, app *examplev1.MyApp, current *appsv1.Deployment) (*appsv1.Deployment, error) {
	if current != nil {
		return current, nil
	}
	d := &appsv1.Deployment{}
	switch err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, d); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading Deployment %s: %w", app.Name, err)
	}
	return d, nil
}

// configMapDigest is the digest of a referenced ConfigMap's data (desired.ConfigMapDigest, or
// desired.ConfigMapAbsent). The cache gives its resourceVersion; the API server gives its data
// when that version is not the one remembered. A ConfigMap the cache does not show is asked
// for too, unless it was found missing last time: the cache may lag behind its creation.
func (r *MyAppReconciler) configMapDigest(ctx context.Context, key types.NamespacedName) (string, error) {
	meta := configMapMetadata()
	version := ""
	switch err := r.Get(ctx, key, meta); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return "", fmt.Errorf("reading ConfigMap %s: %w", key.Name, err)
	default:
		version = meta.ResourceVersion
	}
	known, found := r.configDigests.get(key)
	if found && known.resourceVersion == version {
		return known.digest, nil
	}
	cm := &corev1.ConfigMap{}
	switch err := r.APIReader.Get(ctx, key, cm); {
	case apierrors.IsNotFound(err):
		r.configDigests.swap(key, known, found, configDigest{digest: desired.ConfigMapAbsent})
		return desired.ConfigMapAbsent, nil
	case err != nil:
		return "", fmt.Errorf("reading ConfigMap %s: %w", key.Name, err)
	}
	d := desired.ConfigMapDigest(cm)
	r.configDigests.swap(key, known, found, configDigest{resourceVersion: cm.ResourceVersion, digest: d})
	return d, nil
}

// referencedChanged queues the MyApps that roll out on (namesOf) an object created, changed
// or deleted: a ConfigMap or a Secret (a resync, which changes nothing, queues none: the
// MyApps have their own), and calls forget, when set, with a deleted one. It reads the
// namespace's MyApps from the cache, without copies, rather than through a field index: an
// index would make the manager start the MyApp informer before it leads, and a manager whose
// informers cannot sync (no RBAC yet) could not be stopped.
func (r *MyAppReconciler) referencedChanged(namesOf func(*examplev1.MyApp) []string,
	forget func(types.NamespacedName)) handler.TypedEventHandler[client.Object, reconcile.Request] {
	enqueue := func(ctx context.Context, obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		apps := &examplev1.MyAppList{}
		if err := r.List(ctx, apps, client.InNamespace(obj.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
			return
		}
		for i := range apps.Items {
			if slices.Contains(namesOf(&apps.Items[i]), obj.GetName()) {
				q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&apps.Items[i])})
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectOld.GetResourceVersion() != e.ObjectNew.GetResourceVersion() {
				enqueue(ctx, e.ObjectNew, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if forget != nil {
				forget(client.ObjectKeyFromObject(e.Object))
			}
			enqueue(ctx, e.Object, q)
		},
	}
}

// configHashesOf are the config hashes the Deployment's pod template carries ("" for none).
func configHashesOf(d *appsv1.Deployment) desired.ConfigHashes {
	if d == nil {
		return desired.ConfigHashes{}
	}
	a := d.Spec.Template.Annotations
	return desired.ConfigHashes{ConfigMaps: a[desired.AnnotationConfigHash], Secrets: a[desired.AnnotationSecretHash]}
}
