package controller

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1ac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/status"
)

// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes,verbs=get;list;watch;create;patch;delete

const (
	kindIngress = "Ingress"
	kindRoute   = "HTTPRoute"
)

var (
	ingressKind = childKind[*networkingv1.Ingress, *networkingv1ac.IngressApplyConfiguration]{name: kindIngress,
		newObj: func() *networkingv1.Ingress { return &networkingv1.Ingress{} }, extract: networkingv1ac.ExtractIngress}
	routeKind = childKind[*gatewayv1.HTTPRoute, *gatewayv1ac.HTTPRouteApplyConfiguration]{name: kindRoute,
		newObj: func() *gatewayv1.HTTPRoute { return &gatewayv1.HTTPRoute{} }, extract: gatewayv1ac.ExtractHTTPRoute,
		cache: func(r *MyAppReconciler) client.Reader { return r.routes }}
)

// reconcileExposure brings the MyApp's Ingress or HTTPRoute to spec.expose, and observes
// where the app is reached (status.url) and whether the Gateway accepted the route. An
// HTTPRoute is made only while the Gateway API is served; a MyApp that asks for one before is
// Stalled (GatewayAPINotInstalled) and looks again within gatewayAPILookInterval.
//
// A move from one to the other is made before it breaks: the Ingress of a MyApp that moves to
// a Gateway stays until the Gateway accepted the route, and the route of a MyApp that moves to
// an Ingress goes once the Ingress carries the spec.
func (r *MyAppReconciler) reconcileExposure(ctx context.Context, app *examplev1.MyApp, obs *status.Observed, out *outcome) {
	want := desired.ExposureOf(app, r.ExposeDefaults)
	served := r.gateway.isServed()
	if want.Route && !served {
		var err error
		if served, err = r.gateway.look(ctx, r.now()); err != nil {
			out.add(r, app, obs, err)
			return
		}
	}

	routed := false
	var route *gatewayv1.HTTPRoute
	switch {
	case want.Route && !served:
		out.add(r, app, obs, &gatewayAPIMissingError{gateway: want.Gateway})
	case want.Route:
		applied, err := applyChild(ctx, r, app, &out.changes, routeKind, desired.HTTPRoute(app, want.Gateway), nil)
		if mayBeUnserved(err) && !r.gateway.stillServed(ctx) {
			err = &gatewayAPIMissingError{gateway: want.Gateway}
		}
		out.add(r, app, obs, err)
		if err != nil || !applied.current {
			break
		}
		route = applied.obj
		obs.URL = desired.URL(app)
		switch f := status.RouteProblem(route, want.Gateway); {
		case f == nil:
			routed = true
		case f.Terminal:
			obs.Failures = append(obs.Failures, *f)
		default:
			obs.Unreachable = f
		}
	}

	// The Ingress of a MyApp that moved to a Gateway serves until ingressGrace after the
	// Gateway accepted the route.
	var keepIngressUntil time.Time
	if routed {
		keepIngressUntil = status.RouteAcceptedAt(route, want.Gateway).Add(ingressGrace)
	}
	switch {
	case want.Ingress:
		class, err := r.ingressClass(ctx, app, want.IngressClassName)
		if err != nil {
			out.add(r, app, obs, err)
			return
		}
		ing, err := applyChild(ctx, r, app, &out.changes, ingressKind, desired.Ingress(app, class), nil)
		out.add(r, app, obs, err)
		if err != nil || !ing.current {
			return
		}
		obs.URL = desired.URL(app)
	case r.now().Before(keepIngressUntil):
		out.retryWithin(keepIngressUntil.Sub(r.now()))
	case !want.Route || routed:
		out.add(r, app, obs, r.deleteChild(ctx, app, &out.changes, &networkingv1.Ingress{}, app.Name))
	}
	if !want.Route && served {
		out.add(r, app, obs, r.deleteChildIn(ctx, r.routes, app, &out.changes, &gatewayv1.HTTPRoute{}, app.Name))
	}
}

// ingressClass is the class the MyApp's Ingress is applied with: the one chosen, else the
// one it has. An Ingress made without a class gets the cluster's default from the API server
// (the DefaultIngressClass admission plugin), at its creation only: applying it later
// without the class would take that class away, and most ingress controllers ignore an
// Ingress without one.
func (r *MyAppReconciler) ingressClass(ctx context.Context, app *examplev1.MyApp, chosen *string) (*string, error) {
	if chosen != nil {
		return chosen, nil
	}
	ing := &networkingv1.Ingress{}
	if found, err := r.cachedChild(ctx, app, app.Name, ing); err != nil || !found {
		return nil, err
	}
	return ing.Spec.IngressClassName, nil
}

// gatewayAPIMissingError: the MyApp asks for an HTTPRoute and the cluster does not serve them.
type gatewayAPIMissingError struct{ gateway examplev1.GatewayReference }

func (e *gatewayAPIMissingError) Error() string {
	return fmt.Sprintf("spec.expose attaches to Gateway %s/%s, and the cluster does not serve the Gateway API's HTTPRoute "+
		"(gateway.networking.k8s.io/v1): install the Gateway API's CRDs, or expose the app through an Ingress "+
		"(spec.expose.ingressClassName)", e.gateway.Namespace, e.gateway.Name)
}

// ingressGrace is how long the Ingress of a MyApp that moves to a Gateway stays after the
// Gateway accepted the route: "accepted" is what the Gateway's controller reports, and its
// proxies may take a moment more to route (Traefik, by default, applies a provider's changes
// at most every 2 s). Deleting the Ingress at once could leave a moment in which neither
// routes the app.
const ingressGrace = 10 * time.Second

// mayBeUnserved tells whether a request about an HTTPRoute failed in a way an API server
// that no longer serves HTTPRoutes answers (their CRD removed after the operator found
// them): NotFound, or no REST mapping. A NotFound has other causes (a route deleted between
// two requests), so stillServed asks discovery before the MyApp says so.
func mayBeUnserved(err error) bool {
	return err != nil && (apierrors.IsNotFound(err) || meta.IsNoMatchError(err))
}

// gatewayAPILookInterval is how often, at most, the operator asks the API server whether it
// now serves HTTPRoutes, while a MyApp needs one and it does not.
const gatewayAPILookInterval = 30 * time.Second

// gatewayAPI knows whether the cluster serves HTTPRoutes, and starts the watch of the MyApps'
// HTTPRoutes the first time it finds that it does. The Gateway API is optional: without its
// CRDs the operator starts, and a MyApp that needs it is Stalled until they are installed.
type gatewayAPI struct {
	mapper meta.RESTMapper
	// discovery answers stillServed, past the mapper's memory.
	discovery discovery.DiscoveryInterface
	// watch starts the watch of HTTPRoutes; called once.
	watch func() error

	mu       sync.Mutex
	served   bool
	lookedAt time.Time
}

func (g *gatewayAPI) isServed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.served
}

// look asks the API server's discovery, at most once per gatewayAPILookInterval, whether it
// serves HTTPRoutes, and starts their watch once it does.
func (g *gatewayAPI) look(ctx context.Context, now time.Time) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.served || (!g.lookedAt.IsZero() && now.Sub(g.lookedAt) < gatewayAPILookInterval) {
		return g.served, nil
	}
	return g.lookLocked(ctx, now)
}

// stillServed asks the API server's discovery, uncached, whether it serves HTTPRoutes now,
// after a request about one met an answer that may mean it stopped. It gives up after
// discoveryTimeout, as the manager's HTTP client sets no timeout of its own.
func (g *gatewayAPI) stillServed(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	list := &metav1.APIResourceList{}
	err := g.discovery.RESTClient().Get().AbsPath("/apis", gatewayv1.GroupVersion.String()).Do(ctx).Into(list)
	served := routesListed(list, err)
	if err != nil && served {
		log.FromContext(ctx).Error(err, "Could not tell whether the Gateway API is still served")
	}
	return served
}

// discoveryTimeout bounds stillServed's one request.
const discoveryTimeout = 10 * time.Second

// routesListed reads discovery's answer for gateway.networking.k8s.io/v1: HTTPRoutes are
// served when the list holds them; a NotFound, or a list without them, says they are not.
// Any other failure counts as served, so that the MyApp reports the request's own error
// rather than a missing API it cannot tell.
func routesListed(list *metav1.APIResourceList, err error) bool {
	switch {
	case apierrors.IsNotFound(err):
		return false
	case err != nil:
		return true
	}
	for _, r := range list.APIResources {
		if r.Kind == kindRoute {
			return true
		}
	}
	return false
}

// lookNow is look without the interval.
func (g *gatewayAPI) lookNow(ctx context.Context, now time.Time) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.served {
		return true, nil
	}
	return g.lookLocked(ctx, now)
}

func (g *gatewayAPI) lookLocked(ctx context.Context, now time.Time) (bool, error) {
	g.lookedAt = now
	_, err := g.mapper.RESTMapping(schema.GroupKind{Group: gatewayv1.GroupName, Kind: kindRoute}, gatewayv1.GroupVersion.Version)
	switch {
	case meta.IsNoMatchError(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("asking the API server whether it serves HTTPRoutes: %w", err)
	}
	if err := g.watch(); err != nil {
		return false, fmt.Errorf("watching HTTPRoutes: %w", err)
	}
	g.served = true
	log.FromContext(ctx).Info("The cluster serves the Gateway API; watching the MyApps' HTTPRoutes")
	return true, nil
}

// setupRoutes gives the reconciler a cache of its own for HTTPRoutes, holding only those
// labelled as ours, and the watch that starts once the Gateway API is served. It has its own
// cache because the manager's cannot be configured for a kind the cluster may not serve. At
// start, while leading, it looks once whether the Gateway API is served, so that an HTTPRoute
// left by a MyApp that no longer asks for one is found and removed.
func (r *MyAppReconciler) setupRoutes(mgr ctrl.Manager, c interface{ Watch(source.Source) error }) error {
	opts := cache.Options{
		HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{desired.LabelManagedBy: desired.ManagedBy}),
		DefaultTransform:     keepOwnManagedFields,
	}
	opts.DefaultNamespaces = namespaceConfigs(r.WatchNamespaces)
	routes, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return err
	}
	if err := mgr.Add(leaderOnly{routes}); err != nil {
		return err
	}
	r.routes = routes
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return err
	}
	r.gateway = &gatewayAPI{mapper: mgr.GetRESTMapper(), discovery: disco, watch: func() error {
		return c.Watch(source.Kind[client.Object](routes, &gatewayv1.HTTPRoute{},
			handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &examplev1.MyApp{}, handler.OnlyControllerOwner()),
			childChanged(routeStatusChanged)))
	}}
	return mgr.Add(manager.RunnableFunc(r.gateway.probe))
}

// probe looks, once the manager leads, whether the Gateway API is served, and asks again
// with backoff until it has an answer: HTTPRoutes of MyApps that no longer ask for one are
// found only through the watch it starts.
func (g *gatewayAPI) probe(ctx context.Context) error {
	delay := time.Second
	for {
		_, err := g.lookNow(ctx, time.Now())
		if err == nil {
			return nil
		}
		log.FromContext(ctx).Error(err, "Could not tell whether the Gateway API is served; asking again", "after", delay)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, gatewayAPILookInterval)
	}
}

// routeStatusChanged picks the route's parent statuses, where the Gateway says whether it
// accepts the route.
func routeStatusChanged(old, new client.Object) bool {
	o, ok1 := old.(*gatewayv1.HTTPRoute)
	n, ok2 := new.(*gatewayv1.HTTPRoute)
	return !ok1 || !ok2 || !equality.Semantic.DeepEqual(o.Status.Parents, n.Status.Parents)
}

// ParseGateway reads the manager's --expose-gateway flag: namespace/name, or
// namespace/name/listener; "" is none.
func ParseGateway(value string) (*examplev1.GatewayReference, error) {
	if value == "" {
		return nil, nil
	}
	parts := strings.Split(value, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("%q is not namespace/name or namespace/name/listener", value)
	}
	gw := &examplev1.GatewayReference{Namespace: parts[0], Name: parts[1]}
	errs := map[string][]string{"namespace": validation.IsDNS1123Label(gw.Namespace), "name": validation.IsDNS1123Subdomain(gw.Name)}
	if len(parts) == 3 {
		gw.SectionName = parts[2]
		errs["listener"] = validation.IsDNS1123Subdomain(gw.SectionName)
	}
	for _, what := range []string{"namespace", "name", "listener"} {
		if len(errs[what]) > 0 {
			return nil, fmt.Errorf("%q: the Gateway's %s %s", value, what, strings.Join(errs[what], "; "))
		}
	}
	return gw, nil
}

// ParseIngressClass reads the manager's --expose-ingress-class flag ("" is none).
func ParseIngressClass(value string) (string, error) {
	if value == "" {
		return "", nil
	}
	if errs := validation.IsDNS1123Subdomain(value); len(errs) > 0 {
		return "", fmt.Errorf("%q: %s", value, strings.Join(errs, "; "))
	}
	return value, nil
}
