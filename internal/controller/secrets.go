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
// (config/rbac/secret_tracking_role.yaml: get, list and watch on Secrets), the operator
// watches the Secrets of that namespace as metadata only, so that their data never enters the
// operator, and a MyApp with spec.rolloutOnConfigChange carries on its pod template a hash of
// the versions of the Secrets it references (desired.AnnotationSecretHash). Without the grant,
// Secrets are not tracked, and the template keeps the hash it has.

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
	// watch adds the watch of a namespace's Secrets in its cache to the controller.
	watch func(c cache.Cache) error
	// allowed asks the API server whether the operator may do verb on the namespace's Secrets.
	allowed func(ctx context.Context, namespace, verb string) (bool, error)

	mu sync.Mutex
	// base is the context of the manager while it leads: the caches run within it.
	base context.Context
	ns   map[string]*namespaceSecrets
}

// namespaceSecrets is what is known of one namespace: the grant, when it was last asked, and
// the cache of its Secrets while granted.
type namespaceSecrets struct {
	checkedAt time.Time
	cache     cache.Cache
	stop      context.CancelFunc
}

// Start records the manager's context, for the caches of the namespaces granted later, and
// holds it while the manager leads.
func (s *secretWatches) Start(ctx context.Context) error {
	s.mu.Lock()
	s.base = ctx
	s.mu.Unlock()
	<-ctx.Done()
	return nil
}

// NeedLeaderElection: the watches run only while the manager leads, as the reconciles do.
func (s *secretWatches) NeedLeaderElection() bool { return true }

// errNotLeading: a reconcile ran before the watches could start; it is retried.
var errNotLeading = errors.New("the Secret watches have not started yet")

// cacheOf is the cache of the namespace's Secrets, or nil when the operator may not watch
// them. What it found is trusted for secretGrantRecheck, unless recheck.
func (s *secretWatches) cacheOf(ctx context.Context, namespace string, now time.Time, recheck bool) (cache.Cache, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.base == nil {
		return nil, errNotLeading
	}
	n := s.ns[namespace]
	if n != nil && !recheck && now.Sub(n.checkedAt) < secretGrantRecheck {
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
	if n == nil {
		n = &namespaceSecrets{}
		if s.ns == nil {
			s.ns = map[string]*namespaceSecrets{}
		}
		s.ns[namespace] = n
	}
	n.checkedAt = now
	switch {
	case granted && n.cache == nil:
		c, err := s.newCache(namespace)
		if err != nil {
			return nil, err
		}
		cctx, stop := context.WithCancel(s.base)
		go func() {
			if err := c.Start(cctx); err != nil {
				log.FromContext(cctx).Error(err, "The Secrets' metadata cache stopped", "namespace", namespace)
			}
		}()
		if err := s.watch(c); err != nil {
			stop()
			return nil, err
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

// secretsOf are the Secrets a MyApp rolls out on: none without spec.rolloutOnConfigChange.
func secretsOf(app *examplev1.MyApp) []string {
	if !desired.RollsOnConfigChange(app) {
		return nil
	}
	return desired.ReferencedSecrets(app)
}

// secretHash is the AnnotationSecretHash of the MyApp's pod template, "" when it asks for
// none, and whether it is the running Deployment's (kept): where the operator may not watch
// Secrets, and while a Secret the pods cannot start without is missing. The template the
// spec asks for is not known then (see configHash).
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
	running := func() (string, error) {
		d, err := r.runningDeployment(ctx, app, current)
		if err != nil || d == nil {
			return "", err
		}
		return d.Spec.Template.Annotations[desired.AnnotationSecretHash], nil
	}
	if secrets == nil {
		// Not granted: the Secrets are not tracked, and the template keeps what it has, so
		// that a grant withdrawn restarts nothing. That is the template the spec asks for.
		hash, err := running()
		return hash, false, err
	}
	required := desired.RequiredSecrets(app)
	versions := make(map[string]string, len(names))
	for _, name := range names {
		v, err := r.secretVersion(ctx, secrets, types.NamespacedName{Namespace: app.Namespace, Name: name})
		if err != nil {
			return "", false, err
		}
		if v == desired.SecretAbsent && required[name] {
			switch d, err := r.runningDeployment(ctx, app, current); {
			case err != nil:
				return "", false, err
			case d != nil:
				log.FromContext(ctx).V(1).Info("A Secret the pods need is missing: the template keeps its secret hash", "secret", name)
				return d.Spec.Template.Annotations[desired.AnnotationSecretHash], true, nil
			}
		}
		versions[name] = v
	}
	return desired.SecretHash(versions), false, nil
}

// secretVersion is the version of a referenced Secret (desired.SecretVersion, or
// desired.SecretAbsent), from its metadata: from the cache, or from the API server when the
// cache does not show it (the cache may lag behind its creation).
func (r *MyAppReconciler) secretVersion(ctx context.Context, secrets cache.Cache, key types.NamespacedName) (string, error) {
	meta := secretMetadata()
	err := secrets.Get(ctx, key, meta)
	if apierrors.IsNotFound(err) {
		meta = secretMetadata()
		err = r.APIReader.Get(ctx, key, meta)
	}
	switch {
	case apierrors.IsNotFound(err):
		return desired.SecretAbsent, nil
	case err != nil:
		return "", fmt.Errorf("reading the metadata of Secret %s: %w", key.Name, err)
	}
	return desired.SecretVersion(string(meta.UID), meta.ResourceVersion), nil
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
// created, changed or deleted.
func (r *MyAppReconciler) setupSecrets(mgr ctrl.Manager, c interface{ Watch(source.Source) error }) error {
	r.secrets = &secretWatches{
		newCache: func(namespace string) (cache.Cache, error) {
			return cache.New(mgr.GetConfig(), cache.Options{
				HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
				DefaultNamespaces: map[string]cache.Config{namespace: {}},
				ByObject:          map[client.Object]cache.ByObject{secretMetadata(): {Transform: trimSecret}},
			})
		},
		watch: func(sc cache.Cache) error {
			return c.Watch(source.Kind[client.Object](sc, secretMetadata(), r.referencedChanged(secretsOf, nil)))
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
	}
	return mgr.Add(r.secrets)
}

var _ manager.LeaderElectionRunnable = &secretWatches{}
