package controller

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
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

// reconcileExposure brings the MyApp's Ingress or HTTPRoute to spec.expose and removes the
// other, and observes where the app is reached (status.url) and whether the Gateway accepted
// the route. An HTTPRoute is made only while the Gateway API is served; a MyApp that asks for
// one before is Stalled (GatewayAPINotInstalled) and looks again within slowRetry.
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

	if want.Ingress {
		ing, err := applyChild(ctx, r, app, &out.changes, ingressKind, desired.Ingress(app, want.IngressClassName), nil)
		out.add(r, app, obs, err)
		if err == nil && ing.current {
			obs.URL = desired.URL(app)
		}
	} else {
		out.add(r, app, obs, r.deleteChild(ctx, app, &out.changes, &networkingv1.Ingress{}, app.Name))
	}

	switch {
	case want.Route && !served:
		out.add(r, app, obs, &gatewayAPIMissingError{gateway: want.Gateway})
	case want.Route:
		route, err := applyChild(ctx, r, app, &out.changes, routeKind, desired.HTTPRoute(app, want.Gateway), nil)
		out.add(r, app, obs, err)
		if err != nil || !route.current {
			return
		}
		obs.URL = desired.URL(app)
		switch f := status.RouteProblem(route.obj, want.Gateway); {
		case f == nil:
		case f.Terminal:
			obs.Failures = append(obs.Failures, *f)
		default:
			obs.Unreachable = f
		}
	case served:
		out.add(r, app, obs, r.deleteChildIn(ctx, r.routes, app, &out.changes, &gatewayv1.HTTPRoute{}, app.Name))
	}
}

// gatewayAPIMissingError: the MyApp asks for an HTTPRoute and the cluster does not serve them.
type gatewayAPIMissingError struct{ gateway examplev1.GatewayReference }

func (e *gatewayAPIMissingError) Error() string {
	return fmt.Sprintf("spec.expose attaches to Gateway %s/%s, and the cluster does not serve the Gateway API's HTTPRoute "+
		"(gateway.networking.k8s.io/v1): install the Gateway API's CRDs, or expose the app through an Ingress "+
		"(spec.expose.ingressClassName)", e.gateway.Namespace, e.gateway.Name)
}

// gatewayAPILookInterval is how often, at most, the operator asks the API server whether it
// now serves HTTPRoutes, while a MyApp needs one and it does not.
const gatewayAPILookInterval = 30 * time.Second

// gatewayAPI knows whether the cluster serves HTTPRoutes, and starts the watch of the MyApps'
// HTTPRoutes the first time it finds that it does. The Gateway API is optional: without its
// CRDs the operator starts, and a MyApp that needs it is Stalled until they are installed.
type gatewayAPI struct {
	mapper meta.RESTMapper
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
	if len(r.WatchNamespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range r.WatchNamespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	routes, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return err
	}
	if err := mgr.Add(leaderOnly{routes}); err != nil {
		return err
	}
	r.routes = routes
	r.gateway = &gatewayAPI{mapper: mgr.GetRESTMapper(), watch: func() error {
		return c.Watch(source.Kind[client.Object](routes, &gatewayv1.HTTPRoute{},
			handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &examplev1.MyApp{}, handler.OnlyControllerOwner()),
			childChanged(routeStatusChanged)))
	}}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if _, err := r.gateway.look(ctx, r.now()); err != nil {
			log.FromContext(ctx).Error(err, "Could not tell whether the Gateway API is served; looking again when a MyApp needs it")
		}
		return nil
	}))
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
