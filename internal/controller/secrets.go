package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

// Secret-aware rollouts. The default install grants the operator nothing on Secrets. Where an
// administrator binds, in a namespace, the ClusterRole the project ships for it
// (config/rbac/secret-tracking: get, list and watch on Secrets), the operator
// watches the Secrets of that namespace as metadata only, so that their data never enters the
// operator, and a MyApp with spec.rolloutOnConfigChange carries on its pod template a hash of
// the versions of the Secrets it references (desired.AnnotationSecretHash). Without the grant,
// Secrets are not tracked, and the template keeps the hash it has.
//
// A namespace's watch lives while a MyApp there tracks Secrets: it starts at the first reconcile
// of such a MyApp that finds the grant, and stops once the last one is deleted or stops
// tracking them (the MyApps' own watch events say when to look), so that the operator holds no
// watch, nor a copy of the Secrets' metadata, for a namespace that needs none.

// secretGrantRecheck is how long the operator trusts what it found about its grant on the
// Secrets of a namespace; a reconcile requested through the reconcile-request annotation
// asks again at once.
const secretGrantRecheck = 5 * time.Minute

// secretVerbs are the verbs the operator needs on a namespace's Secrets to track them.
var secretVerbs = []string{"get", "list", "watch"}

// secretWatches are the metadata-only watches of Secrets, one per namespace where the operator
// holds the grant and a MyApp needs one.
type secretWatches struct {
	// newCache makes the metadata cache of one namespace's Secrets.
	newCache func(namespace string) (cache.Cache, error)
	// watch adds the watch of a namespace's Secrets, the informer of its cache, to the
	// controller.
	watch func(secrets cache.Informer) error
	// allowed asks the API server whether the operator may do verb on the namespace's Secrets.
	allowed func(ctx context.Context, namespace, verb string) (bool, error)
	// tracked tells whether a MyApp of the namespace, as the manager's cache holds them, rolls
	// out on Secrets (secretsOf).
	tracked func(ctx context.Context, namespace string) (bool, error)
	// myApps is the manager's informer of MyApps: its deletions, and its changes that stop a
	// MyApp tracking Secrets, queue the namespace for release.
	myApps func(ctx context.Context) (cache.Informer, error)

	mu sync.Mutex
	// base is the context of the manager while it leads: the caches run within it.
	base context.Context
	ns   map[string]*namespaceSecrets
}

// namespaceSecrets is what is known of one namespace: the grant, when it was last asked, and
// the cache of its Secrets while granted. Its own lock serializes the looks at one
// namespace, so that a look (three reviews, a cache's first list) holds up no other
// namespace.
type namespaceSecrets struct {
	mu        sync.Mutex
	checkedAt time.Time
	cache     cache.Cache
	stop      context.CancelFunc
	// released: the entry was dropped from secretWatches.ns, its cache stopped; whoever finds
	// it so takes the namespace's new entry.
	released bool
}

// Start records the manager's context, for the caches of the namespaces granted later, and
// while the manager leads releases the namespaces whose MyApps no longer track Secrets.
func (s *secretWatches) Start(ctx context.Context) error {
	s.mu.Lock()
	s.base = ctx
	s.mu.Unlock()
	// One worker, each namespace queued once however many MyApps went at once (a namespace
	// deleted); a failed look is retried with the controllers' backoff.
	released := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	go func() {
		<-ctx.Done()
		released.ShutDown()
	}()
	var apps cache.Informer
	// The informer is the controller's own; should the kind not be served yet, ask again as
	// controller-runtime's sources do.
	if err := wait.PollUntilContextCancel(ctx, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		if apps, err = s.myApps(ctx); err != nil {
			log.FromContext(ctx).Error(err, "Cannot watch MyApps to release the Secret watches nobody needs; retrying")
			return false, nil
		}
		return true, nil
	}); err != nil {
		return nil // the manager stops
	}
	handle, err := apps.AddEventHandler(releaseOn(released))
	if err != nil {
		return fmt.Errorf("watching MyApps to release the Secret watches nobody needs: %w", err)
	}
	defer func() { _ = apps.RemoveEventHandler(handle) }()
	for s.releaseNext(ctx, released) {
	}
	return nil
}

// releaseOn queues the namespace of a MyApp that tracked Secrets and was deleted or stopped
// tracking them: the namespace's watch may have no reader left.
func releaseOn(queue workqueue.TypedInterface[string]) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, updated any) {
			if tracksSecrets(old) && !tracksSecrets(updated) {
				queue.Add(updated.(client.Object).GetNamespace())
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				// A deletion the watch missed: its last state may be stale, look anyway.
				if namespace, _, err := toolscache.SplitMetaNamespaceKey(tomb.Key); err == nil {
					queue.Add(namespace)
				}
				return
			}
			if tracksSecrets(obj) {
				queue.Add(obj.(client.Object).GetNamespace())
			}
		},
	}
}

// tracksSecrets tells whether obj, from the MyApps' informer, is a MyApp that rolls out on
// Secrets.
func tracksSecrets(obj any) bool {
	app, ok := obj.(*examplev1.MyApp)
	return ok && len(secretsOf(app)) > 0
}

// releaseNext releases the next namespace queued, and tells whether to go on.
func (s *secretWatches) releaseNext(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string]) bool {
	namespace, shutdown := queue.Get()
	if shutdown {
		return false
	}
	defer queue.Done(namespace)
	if err := s.release(ctx, namespace); err != nil {
		log.FromContext(ctx).Error(err, "Cannot tell whether a MyApp still tracks the Secrets of a namespace; retrying", "namespace", namespace)
		queue.AddRateLimited(namespace)
		return true
	}
	queue.Forget(namespace)
	return true
}

// release stops the watch of the namespace's Secrets and forgets what is known of the
// namespace (the grant included) when no MyApp there tracks Secrets any more. The look at the
// MyApps holds the namespace's lock: a MyApp that starts tracking is in the manager's cache
// before its reconcile asks for the watch, so either this look sees it and keeps the watch,
// or its reconcile comes after the release and starts a new one.
func (s *secretWatches) release(ctx context.Context, namespace string) error {
	s.mu.Lock()
	n := s.ns[namespace]
	s.mu.Unlock()
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.released {
		return nil
	}
	tracked, err := s.tracked(ctx, namespace)
	if err != nil || tracked {
		return err
	}
	if n.stop != nil {
		n.stop()
		log.FromContext(ctx).Info("No MyApp of the namespace tracks Secrets any more: stopped watching them", "namespace", namespace)
	}
	n.cache, n.stop, n.released = nil, nil, true
	s.mu.Lock()
	if s.ns[namespace] == n {
		delete(s.ns, namespace)
	}
	s.mu.Unlock()
	return nil
}

// NeedLeaderElection: the watches run only while the manager leads, as the reconciles do.
func (s *secretWatches) NeedLeaderElection() bool { return true }

// errNotLeading: a reconcile ran before the watches could start; it is retried.
var errNotLeading = errors.New("the Secret watches have not started yet")

// secretCacheSyncTimeout bounds the first list of a namespace's Secrets once the grant is
// found: a grant withdrawn in between leaves the namespace untracked, and no reconcile waits.
const secretCacheSyncTimeout = 20 * time.Second

// lock locks the entry of a namespace, made on first use, and returns it with the manager's
// context. The caller unlocks it.
func (s *secretWatches) lock(name string) (*namespaceSecrets, context.Context) {
	for {
		s.mu.Lock()
		n := s.ns[name]
		if n == nil {
			n = &namespaceSecrets{}
			if s.ns == nil {
				s.ns = map[string]*namespaceSecrets{}
			}
			s.ns[name] = n
		}
		base := s.base
		s.mu.Unlock()
		n.mu.Lock()
		if !n.released {
			return n, base
		}
		// Released between the two locks: the next turn makes the namespace's new entry.
		n.mu.Unlock()
	}
}

// forget makes the next look at the namespace ask about the grant again: an answer of the API
// server refused it meanwhile.
func (s *secretWatches) forget(name string) {
	n, _ := s.lock(name)
	defer n.mu.Unlock()
	n.checkedAt = time.Time{}
}

// cacheOf is the cache of the namespace's Secrets, synced, or nil when the operator may not
// watch them. What it found is trusted for secretGrantRecheck, unless recheck.
func (s *secretWatches) cacheOf(ctx context.Context, namespace string, now time.Time, recheck bool) (cache.Cache, error) {
	n, base := s.lock(namespace)
	defer n.mu.Unlock()
	if base == nil {
		return nil, errNotLeading
	}
	if !n.checkedAt.IsZero() && !recheck && now.Sub(n.checkedAt) < secretGrantRecheck {
		return n.cache, nil
	}
	granted := true
	for _, verb := range secretVerbs {
		ok, err := s.allowed(ctx, namespace, verb)
		if err != nil {
			return nil, fmt.Errorf("asking whether the operator may %s Secrets in %s: %w", verb, namespace, err)
		}
		granted = granted && ok
	}
	n.checkedAt = now
	switch {
	case granted && n.cache == nil:
		c, stop, err := s.start(ctx, base, namespace)
		if err != nil {
			log.FromContext(ctx).Error(err, "Granted the Secrets of a namespace, and could not list them: not tracking them", "namespace", namespace)
			return nil, nil
		}
		n.cache, n.stop = c, stop
		log.FromContext(ctx).Info("Granted the Secrets of a namespace: tracking those MyApps reference", "namespace", namespace)
	case !granted && n.cache != nil:
		n.stop()
		n.cache, n.stop = nil, nil
		log.FromContext(ctx).Info("No longer granted the Secrets of a namespace: not tracking them", "namespace", namespace)
	}
	return n.cache, nil
}

// start runs the namespace's metadata cache of Secrets within base, waits (within
// secretCacheSyncTimeout) for its first list, and adds its watch to the controller.
func (s *secretWatches) start(ctx, base context.Context, namespace string) (cache.Cache, context.CancelFunc, error) {
	c, err := s.newCache(namespace)
	if err != nil {
		return nil, nil, err
	}
	informer, err := c.GetInformer(ctx, secretMetadata(), cache.BlockUntilSynced(false))
	if err != nil {
		return nil, nil, err
	}
	cctx, stop := context.WithCancel(base)
	go func() {
		if err := c.Start(cctx); err != nil {
			log.FromContext(cctx).Error(err, "The Secrets' metadata cache stopped", "namespace", namespace)
		}
	}()
	syncing, cancel := context.WithTimeout(ctx, secretCacheSyncTimeout)
	defer cancel()
	if !c.WaitForCacheSync(syncing) {
		stop()
		return nil, nil, fmt.Errorf("the Secrets of %s did not list within %s", namespace, secretCacheSyncTimeout)
	}
	if err := s.watch(informer); err != nil {
		stop()
		return nil, nil, err
	}
	return c, stop, nil
}

// secretsOf are the Secrets a MyApp rolls out on: none without spec.rolloutOnConfigChange.
func secretsOf(app *examplev1.MyApp) []string {
	if !desired.RollsOnConfigChange(app) {
		return nil
	}
	return desired.ReferencedSecrets(app)
}

// secretHash is the AnnotationSecretHash of the MyApp's pod template, "" when it asks for
// none, and whether it is the spec's last known one rather than one computed now (kept): the
// template the spec asks for is not known then (see configHash).
//
// The spec's last hash is the one the Deployment carries on itself (not on its template, which
// a rollback replaces): where the operator may not watch the namespace's Secrets, the template
// keeps it, so that a grant withdrawn restarts nothing and a rollback in force holds. It is
// kept too while a Secret the pods cannot start without is missing, and while a Secret the
// cache does not show yet exists (the watch queues the MyApp once it does): a version read
// around the cache could be newer than the one the cache shows next, and the template would
// go back and forth.
func (r *MyAppReconciler) secretHash(ctx context.Context, app *examplev1.MyApp, current *appsv1.Deployment) (hash string, kept bool, err error) {
	if !desired.RollsOnConfigChange(app) {
		return "", false, nil
	}
	names := desired.ReferencedSecrets(app)
	if len(names) == 0 {
		return "", false, nil
	}
	recheck := app.Annotations[examplev1.ReconcileRequestAnnotation] != app.Status.LastHandledReconcileAt
	secrets, err := r.secrets.cacheOf(ctx, app.Namespace, r.now(), recheck)
	if err != nil {
		return "", false, err
	}
	running, err := r.runningDeployment(ctx, app, current)
	if err != nil {
		return "", false, err
	}
	last := ""
	if running != nil {
		last = running.Annotations[desired.AnnotationSecretHash]
	}
	if secrets == nil {
		// Not granted: the Secrets are not tracked; the spec asks for what it asked for.
		return last, false, nil
	}
	required := desired.RequiredSecrets(app)
	versions := make(map[string]string, len(names))
	for _, name := range names {
		v, err := r.secretVersion(ctx, secrets, types.NamespacedName{Namespace: app.Namespace, Name: name})
		switch {
		case apierrors.IsForbidden(err):
			// The grant was withdrawn since the last look: ask again next time.
			r.secrets.forget(app.Namespace)
			return last, false, nil
		case err != nil:
			return "", false, err
		case v == secretNotCached || (v == desired.SecretAbsent && required[name] && running != nil):
			log.FromContext(ctx).V(1).Info("A Secret is missing or not yet cached: the template keeps its secret hash", "secret", name)
			return last, true, nil
		}
		versions[name] = v
	}
	return desired.SecretHash(versions), false, nil
}

// secretNotCached is the version of a Secret that exists and that the cache does not show yet.
const secretNotCached = "not cached"

// secretVersion is the version of a referenced Secret (desired.SecretVersion), from its
// metadata in the cache: desired.SecretAbsent when the API server confirms that it does not
// exist, secretNotCached when it does and the cache does not show it yet.
func (r *MyAppReconciler) secretVersion(ctx context.Context, secrets cache.Cache, key types.NamespacedName) (string, error) {
	meta := secretMetadata()
	switch err := secrets.Get(ctx, key, meta); {
	case err == nil:
		return desired.SecretVersion(string(meta.UID), meta.ResourceVersion), nil
	case !apierrors.IsNotFound(err):
		return "", fmt.Errorf("reading the metadata of Secret %s: %w", key.Name, err)
	}
	switch err := r.APIReader.Get(ctx, key, secretMetadata()); {
	case apierrors.IsNotFound(err):
		return desired.SecretAbsent, nil
	case err != nil:
		return "", fmt.Errorf("reading the metadata of Secret %s: %w", key.Name, err)
	}
	return secretNotCached, nil
}

// secretMetadata is an empty Secret as metadata only: reading one never transfers its data.
func secretMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// trimSecret keeps of a Secret's metadata what identifies its version.
func trimSecret(in any) (any, error) {
	m, ok := in.(*metav1.PartialObjectMetadata)
	if !ok {
		return in, nil
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
	}}, nil
}

// setupSecrets gives the reconciler its Secret watches: per namespace, a metadata cache made
// once the grant is found, and its watch, which queues the MyApps that roll out on a Secret
// created, changed or deleted. The watch is added as the informer it is, already synced: a
// source of kind would wait, in a goroutine of its own, for a handler that a cache stopped
// early never syncs.
func (r *MyAppReconciler) setupSecrets(mgr ctrl.Manager, c interface{ Watch(source.Source) error }) error {
	r.secrets = &secretWatches{
		newCache: func(namespace string) (cache.Cache, error) {
			return cache.New(mgr.GetConfig(), cache.Options{
				HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
				DefaultNamespaces: map[string]cache.Config{namespace: {}},
				ByObject:          map[client.Object]cache.ByObject{secretMetadata(): {Transform: trimSecret}},
				// No read may start an informer of whole Secrets by mistake.
				ReaderFailOnMissingInformer: true,
			})
		},
		watch: func(secrets cache.Informer) error {
			return c.Watch(&source.Informer{Informer: secrets, Handler: r.referencedChanged(secretsOf, nil)})
		},
		allowed: func(ctx context.Context, namespace, verb string) (bool, error) {
			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: verb, Resource: "secrets"},
			}}
			if err := r.Create(ctx, review); err != nil {
				return false, err
			}
			return review.Status.Allowed, nil
		},
		tracked: func(ctx context.Context, namespace string) (bool, error) {
			apps := &examplev1.MyAppList{}
			if err := r.List(ctx, apps, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
				return false, err
			}
			for i := range apps.Items {
				if len(secretsOf(&apps.Items[i])) > 0 {
					return true, nil
				}
			}
			return false, nil
		},
		myApps: func(ctx context.Context) (cache.Informer, error) {
			return mgr.GetCache().GetInformer(ctx, &examplev1.MyApp{}, cache.BlockUntilSynced(false))
		},
	}
	return mgr.Add(r.secrets)
}

var _ manager.LeaderElectionRunnable = &secretWatches{}
