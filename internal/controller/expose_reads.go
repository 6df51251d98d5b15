package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/status"
)

// Who serves a MyApp's exposure is told by cluster-wide objects the MyApp does not own: the
// IngressClass its Ingress names (does it exist?), and the Gateway its route attaches to, whose
// GatewayClass names the controller whose entries of the route's status count
// (status.ParentController). The operator reads them from caches of their own, made on first
// use and only where it may list and watch them cluster-wide:
//
//	networking.k8s.io          ingressclasses            get, list, watch
//	gateway.networking.k8s.io  gateways, gatewayclasses  get, list, watch
//
// The IngressClasses and GatewayClasses are cluster-scoped, and a Gateway usually lives in
// another namespace than the routes attached to it, so a namespaced grant (a Role, or an OLM
// install for some namespaces without clusterPermissions) cannot serve them. Without the grant
// the operator decides as it did before it read them: an Ingress's class is taken to exist,
// and every controller's entry for the Gateway counts. It never fails or waits for them.
//
// Reading the Gateway and its class is the one sound way to know which entry counts: a
// Gateway's status names no controller, so a rule from the route's status alone (say, "the
// controller whose entry came first") cannot tell the Gateway's controller from another
// implementation's, or from the stale entry of the Gateway's former class.

// clusterReadRecheck is how long the operator trusts a refusal of the grant, or a failure to
// start the cache (the Gateway kinds not served yet), before it asks again.
const clusterReadRecheck = 5 * time.Minute

// clusterReadRetry is how soon a reconcile that could not use a cluster read (an error of the
// API server) looks again; it decides without the read meanwhile.
const clusterReadRetry = 10 * time.Second

// clusterReadSyncTimeout bounds the first list of a cache of cluster reads.
const clusterReadSyncTimeout = 20 * time.Second

// clusterReadStartWait bounds how long a reconcile that runs as the manager starts to lead
// waits for the reads' Start (they start beside the controller).
const clusterReadStartWait = 10 * time.Second

// readKind is one kind a cache of cluster reads holds, and its resource for RBAC.
type readKind struct {
	obj             client.Object
	group, resource string
}

// clusterReads is a cache of cluster-wide objects, made once the operator may list and watch
// every kind of it in all namespaces (SelfSubjectAccessReviews), as secrets.go does per
// namespace for Secrets. Once made, it stays for the manager's life.
type clusterReads struct {
	// what names the kinds in logs.
	what  string
	kinds []readKind
	// newCache makes the cache; watch adds the controller's watches of it.
	newCache func() (cache.Cache, error)
	watch    func(cache.Cache) error
	// allowed asks the API server whether the operator may do verb on the resource in every
	// namespace.
	allowed func(ctx context.Context, group, resource, verb string) (bool, error)

	// started is closed by Start, which sets base, the manager's context while it leads.
	started chan struct{}
	base    context.Context

	mu        sync.Mutex
	checkedAt time.Time
	cache     cache.Cache
	// stop stops the cache before the manager does (a shutdown stops it with the manager).
	stop context.CancelFunc
}

func newClusterReads(what string, kinds []readKind) *clusterReads {
	return &clusterReads{what: what, kinds: kinds, started: make(chan struct{})}
}

// Start records the manager's context, for the cache made later, and holds it while the
// manager leads.
func (c *clusterReads) Start(ctx context.Context) error {
	c.base = ctx
	close(c.started)
	<-ctx.Done()
	return nil
}

// NeedLeaderElection: the reads run only while the manager leads, as the reconciles do.
func (c *clusterReads) NeedLeaderElection() bool { return true }

var _ manager.LeaderElectionRunnable = &clusterReads{}

// errReadsNotStarted: a reconcile ran before the reads could start.
var errReadsNotStarted = errors.New("the cluster reads have not started yet")

// reader is the cache, synced, or nil while the operator may not read the kinds, or could not
// start the cache, within clusterReadRecheck of the last look.
func (c *clusterReads) reader(ctx context.Context, now time.Time) (client.Reader, error) {
	wait, cancel := context.WithTimeout(ctx, clusterReadStartWait)
	defer cancel()
	select {
	case <-c.started:
	case <-wait.Done():
		return nil, errReadsNotStarted
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache != nil || (!c.checkedAt.IsZero() && now.Sub(c.checkedAt) < clusterReadRecheck) {
		return c.cache, nil
	}
	for _, k := range c.kinds {
		for _, verb := range []string{"list", "watch"} {
			ok, err := c.allowed(ctx, k.group, k.resource, verb)
			if err != nil {
				return nil, fmt.Errorf("asking whether the operator may %s %s: %w", verb, k.resource, err)
			}
			if !ok {
				c.checkedAt = now
				log.FromContext(ctx).Info("Not granted the read of "+c.what+" cluster-wide: deciding without them",
					"resource", k.resource, "verb", verb)
				return nil, nil
			}
		}
	}
	c.checkedAt = now
	cc, stop, err := c.start(ctx)
	if err != nil {
		log.FromContext(ctx).Error(err, "Could not read "+c.what+": deciding without them; asking again later")
		return nil, nil
	}
	c.cache, c.stop = cc, stop
	log.FromContext(ctx).Info("Reading " + c.what)
	return cc, nil
}

// start runs the cache within the manager's context, waits (within clusterReadSyncTimeout) for
// its first lists, and adds its watches to the controller.
func (c *clusterReads) start(ctx context.Context) (cache.Cache, context.CancelFunc, error) {
	cc, err := c.newCache()
	if err != nil {
		return nil, nil, err
	}
	for _, k := range c.kinds {
		if _, err := cc.GetInformer(ctx, k.obj, cache.BlockUntilSynced(false)); err != nil {
			return nil, nil, err
		}
	}
	cctx, stop := context.WithCancel(c.base)
	go func() {
		if err := cc.Start(cctx); err != nil {
			log.FromContext(cctx).Error(err, "The cache of "+c.what+" stopped")
		}
	}()
	wait, cancel := context.WithTimeout(ctx, clusterReadSyncTimeout)
	defer cancel()
	if !cc.WaitForCacheSync(wait) {
		stop()
		return nil, nil, fmt.Errorf("%s did not list within %s", c.what, clusterReadSyncTimeout)
	}
	if err := c.watch(cc); err != nil {
		stop()
		return nil, nil, err
	}
	return cc, stop, nil
}

// controllerOf says whose entries of a route's parent status speak for the Gateway: the
// controller its GatewayClass names. Unknown (every entry counts) when the operator may not
// read Gateways and GatewayClasses; known and empty (no entry counts) when the Gateway or its
// class does not exist.
func (g *gatewayAPI) controllerOf(ctx context.Context, gw examplev1.GatewayReference, now time.Time) (status.ParentController, error) {
	reader, err := g.gateways.reader(ctx, now)
	if err != nil || reader == nil {
		return status.ParentController{}, err
	}
	gateway := &gatewayv1.Gateway{}
	switch err := reader.Get(ctx, types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}, gateway); {
	case apierrors.IsNotFound(err):
		return status.ParentController{Known: true}, nil
	case err != nil:
		return status.ParentController{}, fmt.Errorf("reading Gateway %s/%s: %w", gw.Namespace, gw.Name, err)
	}
	class := &gatewayv1.GatewayClass{}
	switch err := reader.Get(ctx, types.NamespacedName{Name: string(gateway.Spec.GatewayClassName)}, class); {
	case apierrors.IsNotFound(err):
		return status.ParentController{Known: true}, nil
	case err != nil:
		return status.ParentController{}, fmt.Errorf("reading GatewayClass %s: %w", gateway.Spec.GatewayClassName, err)
	}
	return status.ParentController{Known: true, Name: string(class.Spec.ControllerName)}, nil
}

// ingressClassMissing tells whether the IngressClass the Ingress names is known not to exist;
// false for an Ingress without a class, or where the operator may not read IngressClasses.
func (g *gatewayAPI) ingressClassMissing(ctx context.Context, ing *networkingv1.Ingress, now time.Time) (bool, error) {
	if ing.Spec.IngressClassName == nil {
		return false, nil
	}
	reader, err := g.ingressClasses.reader(ctx, now)
	if err != nil || reader == nil {
		return false, err
	}
	switch err := reader.Get(ctx, types.NamespacedName{Name: *ing.Spec.IngressClassName}, &networkingv1.IngressClass{}); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading IngressClass %s: %w", *ing.Spec.IngressClassName, err)
	}
	return false, nil
}

// setupClusterReads makes the reads of IngressClasses, and of Gateways and GatewayClasses, and
// the watches that queue the MyApps they concern: those whose Ingress names a class created or
// deleted, and those whose route attaches to a Gateway created, deleted or changed (or of a
// class changed). The watches are what make a class or Gateway created after the MyApp noticed
// at once.
func (r *MyAppReconciler) setupClusterReads(mgr ctrl.Manager, c interface{ Watch(source.Source) error }) error {
	allowed := func(ctx context.Context, group, resource, verb string) (bool, error) {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Group: group, Resource: resource, Verb: verb},
		}}
		if err := r.Create(ctx, review); err != nil {
			return false, err
		}
		return review.Status.Allowed, nil
	}
	newCache := func() (cache.Cache, error) {
		return cache.New(mgr.GetConfig(), cache.Options{
			HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
			DefaultTransform: trimClusterRead,
			// No read may start an informer of another kind by mistake.
			ReaderFailOnMissingInformer: true,
		})
	}
	owner := func(obj client.Object) []reconcile.Request {
		if ref := metav1.GetControllerOf(obj); ref != nil && ref.Kind == "MyApp" && ref.APIVersion == examplev1.GroupVersion.String() {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}}
		}
		return nil
	}

	ingressClasses := newClusterReads("IngressClasses", []readKind{{&networkingv1.IngressClass{}, networkingv1.GroupName, "ingressclasses"}})
	ingressClasses.allowed, ingressClasses.newCache = allowed, newCache
	ingressClasses.watch = func(cc cache.Cache) error {
		return c.Watch(source.Kind[client.Object](cc, &networkingv1.IngressClass{},
			handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, class client.Object) []reconcile.Request {
				list := &networkingv1.IngressList{}
				if err := r.List(ctx, list); err != nil {
					return nil
				}
				var out []reconcile.Request
				for i := range list.Items {
					if n := list.Items[i].Spec.IngressClassName; n != nil && *n == class.GetName() {
						out = append(out, owner(&list.Items[i])...)
					}
				}
				return out
			})))
	}

	gateways := newClusterReads("Gateways and GatewayClasses", []readKind{
		{&gatewayv1.Gateway{}, gatewayv1.GroupName, "gateways"}, {&gatewayv1.GatewayClass{}, gatewayv1.GroupName, "gatewayclasses"}})
	gateways.allowed, gateways.newCache = allowed, newCache
	// routesOf queues the owners of the routes attached to the Gateways that match.
	routesOf := func(match func(obj client.Object, gw examplev1.GatewayReference) bool) handler.EventHandler {
		return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			list := &gatewayv1.HTTPRouteList{}
			if err := r.routes.List(ctx, list); err != nil {
				return nil
			}
			var out []reconcile.Request
			for i := range list.Items {
				if gw, ok := status.RouteParent(&list.Items[i]); ok && match(obj, gw) {
					out = append(out, owner(&list.Items[i])...)
				}
			}
			return out
		})
	}
	gateways.watch = func(cc cache.Cache) error {
		err := c.Watch(source.Kind[client.Object](cc, &gatewayv1.Gateway{},
			routesOf(func(gateway client.Object, gw examplev1.GatewayReference) bool {
				return gw.Namespace == gateway.GetNamespace() && gw.Name == gateway.GetName()
			}), predicate.GenerationChangedPredicate{}))
		if err != nil {
			return err
		}
		// A class changes rarely: every MyApp with a route looks again.
		return c.Watch(source.Kind[client.Object](cc, &gatewayv1.GatewayClass{},
			routesOf(func(client.Object, examplev1.GatewayReference) bool { return true }), predicate.GenerationChangedPredicate{}))
	}

	r.gateway.ingressClasses, r.gateway.gateways = ingressClasses, gateways
	if err := mgr.Add(ingressClasses); err != nil {
		return err
	}
	if err := mgr.Add(gateways); err != nil {
		return err
	}
	// The Owns watch of Ingresses passes no status change; the address an ingress controller
	// publishes is what a move to an Ingress and IngressNotAdmitted wait for.
	return c.Watch(source.Kind[client.Object](mgr.GetCache(), &networkingv1.Ingress{},
		handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &examplev1.MyApp{}, handler.OnlyControllerOwner()),
		ingressAddressChanged))
}

// ingressAddressChanged passes only a change of an Ingress's status.loadBalancer.
var ingressAddressChanged = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*networkingv1.Ingress)
		n, ok2 := e.ObjectNew.(*networkingv1.Ingress)
		return !ok1 || !ok2 || !equality.Semantic.DeepEqual(o.Status.LoadBalancer, n.Status.LoadBalancer)
	},
}

// trimClusterRead keeps of a cluster read what the decisions read: an IngressClass's name, a
// Gateway's class, a GatewayClass's controller, with the metadata a cache and a generation
// predicate need. It is idempotent, as a cache transform must be.
func trimClusterRead(in any) (any, error) {
	keep := func(m metav1.ObjectMeta) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
			Generation: m.Generation, DeletionTimestamp: m.DeletionTimestamp}
	}
	switch o := in.(type) {
	case *networkingv1.IngressClass:
		return &networkingv1.IngressClass{TypeMeta: o.TypeMeta, ObjectMeta: keep(o.ObjectMeta),
			Spec: networkingv1.IngressClassSpec{Controller: o.Spec.Controller}}, nil
	case *gatewayv1.Gateway:
		return &gatewayv1.Gateway{TypeMeta: o.TypeMeta, ObjectMeta: keep(o.ObjectMeta),
			Spec: gatewayv1.GatewaySpec{GatewayClassName: o.Spec.GatewayClassName}}, nil
	case *gatewayv1.GatewayClass:
		return &gatewayv1.GatewayClass{TypeMeta: o.TypeMeta, ObjectMeta: keep(o.ObjectMeta),
			Spec: gatewayv1.GatewayClassSpec{ControllerName: o.Spec.ControllerName}}, nil
	}
	return in, nil
}
