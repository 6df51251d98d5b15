package controller

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/status"
)

// An optional kind is one whose CRD the operator does not require (the Gateway API's
// HTTPRoute, the Prometheus Operator's PodMonitor): the operator starts and works without it,
// a MyApp that asks for one says so, and a CRD installed later is noticed.

// optionalAPILookInterval is how often, at most, the operator asks the API server whether it
// now serves an optional kind while it does not (probe asks that often whatever the MyApps
// need): installing a CRD fires no event the operator watches, and a watch of CRDs would need
// read access to every CRD of the cluster.
const optionalAPILookInterval = 10 * time.Second

// optionalAPI knows whether the cluster serves an optional kind, and starts the watch of the
// MyApps' children of that kind the first time it finds that it does.
type optionalAPI struct {
	// kind is the optional kind, at the version the operator makes.
	kind schema.GroupVersionKind
	// what names the API in logs and messages ("the Gateway API").
	what   string
	mapper meta.RESTMapper
	// discovery answers stillServed, past the mapper's memory.
	discovery discovery.DiscoveryInterface
	// watch starts the watch of the kind; called once.
	watch func() error
	// found reconciles every MyApp, once a look first finds the kind served: those that wait
	// for it go on at once, not at their next retry. It runs in a goroutine of its own.
	found func(context.Context)

	// served is read by every reconcile without the lock, which a look holds while it asks
	// the API server.
	served   atomic.Bool
	mu       sync.Mutex
	lookedAt time.Time
}

func (o *optionalAPI) isServed() bool { return o.served.Load() }

// look asks the API server's discovery, at most once per optionalAPILookInterval, whether it
// serves the kind, and starts its watch once it does.
func (o *optionalAPI) look(ctx context.Context, now time.Time) (bool, error) {
	return o.lookAfter(ctx, now, optionalAPILookInterval)
}

// lookNow is look without the interval.
func (o *optionalAPI) lookNow(ctx context.Context, now time.Time) (bool, error) {
	return o.lookAfter(ctx, now, 0)
}

// lookAfter asks, unless the kind is known to be served or the last look is less than
// interval ago (0: whenever the last look was).
func (o *optionalAPI) lookAfter(ctx context.Context, now time.Time, interval time.Duration) (bool, error) {
	if o.served.Load() {
		return true, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.served.Load() || (interval > 0 && !o.lookedAt.IsZero() && now.Sub(o.lookedAt) < interval) {
		return o.served.Load(), nil
	}
	o.lookedAt = now
	_, err := o.mapper.RESTMapping(o.kind.GroupKind(), o.kind.Version)
	switch {
	case meta.IsNoMatchError(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("asking the API server whether it serves %s: %w", o.kind.Kind, err)
	}
	if err := o.watch(); err != nil {
		return false, fmt.Errorf("watching %s: %w", o.kind.Kind, err)
	}
	o.served.Store(true)
	log.FromContext(ctx).Info("The cluster serves the API; watching the MyApps' children of its kind", "api", o.what, "kind", o.kind.Kind)
	if o.found != nil {
		go o.found(context.WithoutCancel(ctx))
	}
	return true, nil
}

// stillServed asks the API server's discovery, uncached, whether it serves the kind now,
// after a request about one met an answer that may mean it stopped. It gives up after
// discoveryTimeout, as the manager's HTTP client sets no timeout of its own.
func (o *optionalAPI) stillServed(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	list := &metav1.APIResourceList{}
	err := o.discovery.RESTClient().Get().AbsPath("/apis", o.kind.GroupVersion().String()).Do(ctx).Into(list)
	served := kindListed(list, err, o.kind.Kind)
	if err != nil && served {
		log.FromContext(ctx).Error(err, "Could not tell whether the API is still served", "api", o.what)
	}
	return served
}

// discoveryTimeout bounds stillServed's one request.
const discoveryTimeout = 10 * time.Second

// kindListed reads discovery's answer for a group version: the kind is served when the list
// holds it; a NotFound, or a list without it, says it is not. Any other failure counts as
// served, so that the MyApp reports the request's own error rather than a missing API it
// cannot tell.
func kindListed(list *metav1.APIResourceList, err error, kind string) bool {
	switch {
	case apierrors.IsNotFound(err):
		return false
	case err != nil:
		return true
	}
	for _, r := range list.APIResources {
		if r.Kind == kind {
			return true
		}
	}
	return false
}

// probe looks, once the manager leads, whether the kind is served, asking again with backoff
// while it has no answer, and then every optionalAPILookInterval until it is served: children
// of MyApps that no longer ask for one are found only through the watch a look starts, and a
// CRD installed later is noticed within the interval, whatever the MyApps' retries.
func (o *optionalAPI) probe(ctx context.Context) error {
	delay := time.Second
	for {
		served, err := o.lookNow(ctx, time.Now())
		switch {
		case err != nil:
			log.FromContext(ctx).Error(err, "Could not tell whether the API is served; asking again", "api", o.what, "after", delay)
		case served:
			return nil
		default:
			delay = optionalAPILookInterval
		}
		// A look finds it served once; a CRD removed after that is the MyApps' to see.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, optionalAPILookInterval)
	}
}

// optionalKinds is what the watches of the optional kinds are made from: the cache that
// holds their children (only those labelled as the operator's; its own, as the manager's
// cannot be configured for a kind the cluster may not serve), the controller that watches
// them, and the channel through which a first find reconciles every MyApp.
type optionalKinds struct {
	mgr        ctrl.Manager
	controller interface{ Watch(source.Source) error }
	cache      cache.Cache
	discovery  discovery.DiscoveryInterface
	everyMyApp chan<- event.GenericEvent
}

// api makes the optionalAPI of kind (what names it in logs and messages) and adds its probe
// to the manager. Its watch, started by the first look that finds kind served, enqueues the
// controlling MyApp of each child of obj's type on the updates childChanged(statusChanged)
// passes.
func (k optionalKinds) api(kind schema.GroupVersionKind, what string, obj client.Object,
	statusChanged func(old, new client.Object) bool) (*optionalAPI, error) {
	api := &optionalAPI{kind: kind, what: what, mapper: k.mgr.GetRESTMapper(), discovery: k.discovery,
		watch: func() error {
			return k.controller.Watch(source.Kind[client.Object](k.cache, obj,
				handler.EnqueueRequestForOwner(k.mgr.GetScheme(), k.mgr.GetRESTMapper(), &examplev1.MyApp{}, handler.OnlyControllerOwner()),
				childChanged(statusChanged)))
		},
		found: func(ctx context.Context) { enqueueEveryMyApp(ctx, k.mgr.GetClient(), k.everyMyApp) }}
	return api, k.mgr.Add(manager.RunnableFunc(api.probe))
}

// enqueueEveryMyApp sends every MyApp of the cache to the controller's queue through events.
func enqueueEveryMyApp(ctx context.Context, c client.Reader, events chan<- event.GenericEvent) {
	list := &examplev1.MyAppList{}
	if err := c.List(ctx, list); err != nil {
		log.FromContext(ctx).Error(err, "Could not list the MyApps to reconcile now that an optional API is served; each looks again at its retry")
		return
	}
	for i := range list.Items {
		events <- event.GenericEvent{Object: &list.Items[i]}
	}
}

// reconcileOptionalChild brings the MyApp's child of an optional kind, named after the MyApp,
// to cfg: applied while wanted and the cluster serves the kind (missing is the MyApp's error
// while it does not), deleted once it is not wanted. It returns the child as applied, and
// whether it carries cfg.
func reconcileOptionalChild[T client.Object, AC runtime.ApplyConfiguration](ctx context.Context, r *MyAppReconciler, app *examplev1.MyApp,
	obs *status.Observed, out *outcome, api *optionalAPI, kind childKind[T, AC], cfg AC, wanted bool, missing error) (applied[T], bool) {
	if !wanted {
		if !api.isServed() {
			return applied[T]{}, false
		}
		err := r.deleteChildIn(ctx, kind.cached(r), app, &out.changes, kind.newObj(), app.Name)
		if mayBeUnserved(err) {
			// The CRD went after the operator found it (its objects with it), or its cache has
			// not synced yet: nothing to remove now, and every MyApp that does not ask for one
			// would otherwise report it. The next reconcile looks again.
			log.FromContext(ctx).V(1).Info("Could not look for a child of an optional kind to remove", "kind", kind.name, "reason", err.Error())
			return applied[T]{}, false
		}
		out.add(r, app, obs, err)
		return applied[T]{}, false
	}
	served, err := api.look(ctx, r.now())
	if err == nil && !served {
		err = missing
	}
	if err != nil {
		out.add(r, app, obs, err)
		return applied[T]{}, false
	}
	child, err := applyChild(ctx, r, app, &out.changes, kind, cfg, nil)
	if mayBeUnserved(err) && !api.stillServed(ctx) {
		err = missing
	}
	out.add(r, app, obs, err)
	return child, err == nil && child.current
}
