package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1ac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/ssa"
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
// where the app is reached (status.url) and whether it is served there: whether the Gateway's
// controller accepted the route (status.RouteProblem), and whether the Ingress's class exists
// and an ingress controller published its address (status.IngressProblem). An HTTPRoute is
// made only while the Gateway API is served; a MyApp that asks for one before is Stalled
// (GatewayAPINotInstalled) and looks again within optionalAPILookInterval.
//
// A move from one to the other is made before it breaks, in both directions, with one grace
// (status.MoveGrace): the Ingress of a MyApp that moves to a Gateway stays until the
// Gateway's controller accepted the route, and the route of a MyApp that moves to an Ingress
// until an ingress controller published the Ingress's address (status.IngressTakesOverAt),
// each the grace more. Every time is read from a stored object, so a restart changes nothing.
func (r *MyAppReconciler) reconcileExposure(ctx context.Context, app *examplev1.MyApp, obs *status.Observed, out *outcome) {
	// Only the hosts the MyApp holds are exposed (hostclaims.go).
	exposed, err := r.judgeClaims(ctx, app, obs)
	if err != nil {
		out.add(r, app, obs, err)
		return
	}
	app = exposed
	want := desired.ExposureOf(app, r.ExposeDefaults)
	certificatePending := r.reconcileCertificate(ctx, app, want, obs, out)
	served := r.gateway.isServed()
	if want.Route && !served {
		var err error
		if served, err = r.gateway.look(ctx, r.now()); err != nil {
			out.add(r, app, obs, err)
			return
		}
	}
	now := r.now()

	// The Ingress of a MyApp that moved to a Gateway serves until status.MoveGrace after the
	// Gateway's controller accepted the route.
	var keepIngressUntil time.Time
	routed := false
	switch {
	case want.Route && !served:
		out.add(r, app, obs, &gatewayAPIMissingError{gateway: want.Gateway})
	case want.Route:
		routed, keepIngressUntil = r.reconcileRoute(ctx, app, want.Gateway, obs, out, now)
	}

	var ingress *networkingv1.Ingress
	classMissing := false
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
			// The route, if any, serves until the Ingress carries the spec.
			return
		}
		ingress = ing.obj
		obs.URL = desired.URL(app)
		classMissing, err = r.gateway.ingressClassMissing(ctx, ingress, now)
		if err != nil {
			log.FromContext(ctx).Error(err, "Could not tell whether the Ingress's class exists; taking it to exist")
			out.retryWithin(clusterReadRetry)
		}
		f, recheck := status.IngressProblem(ingress, classMissing, now)
		out.retryWithin(recheck)
		if f != nil {
			obs.Failures = append(obs.Failures, *f)
		}
	case now.Before(keepIngressUntil):
		out.retryWithin(keepIngressUntil.Sub(now))
	case !want.Route || routed:
		out.add(r, app, obs, r.deleteChild(ctx, app, &out.changes, &networkingv1.Ingress{}, app.Name))
	}
	if !want.Route || !served {
		r.deleteCanaryServices(ctx, app, obs, out)
	}
	if !want.Route && served && !classMissing && !certificatePending {
		// An Ingress of a class that does not exist serves nothing, and one whose certificate
		// cert-manager has not issued yet serves the ingress controller's default one: the
		// route, if any, stays.
		out.add(r, app, obs, r.retireRoute(ctx, app, out, ingress, now))
	}
}

// reconcileRoute applies the MyApp's HTTPRoute to the Gateway gw (weighted to the canary's
// Service while a canary splits traffic) and judges it: routed when the Gateway's controller
// accepted it, and then the time until which an Ingress the MyApp moved from still serves
// (status.MoveGrace after the acceptance).
func (r *MyAppReconciler) reconcileRoute(ctx context.Context, app *examplev1.MyApp, gw examplev1.GatewayReference, obs *status.Observed, out *outcome, now time.Time) (routed bool, keepIngressUntil time.Time) {
	wantRoute := desired.HTTPRoute(app, gw)
	if rec, split := r.reconcileCanaryServices(ctx, app, obs, out); split {
		wantRoute = canaryRoute(app, gw, rec)
	}
	applied, err := applyChild(ctx, r, app, &out.changes, routeKind, wantRoute, nil)
	if mayBeUnserved(err) && !r.gateway.stillServed(ctx) {
		err = &gatewayAPIMissingError{gateway: gw}
	}
	out.add(r, app, obs, err)
	if err != nil || !applied.current {
		return false, time.Time{}
	}
	route := applied.obj
	obs.URL = desired.URL(app)
	by, err := r.gateway.controllerOf(ctx, gw, now)
	if err != nil {
		// An optional read: decide without it, as where it is not granted, and look again.
		log.FromContext(ctx).Error(err, "Could not tell which controller speaks for the Gateway; counting every controller's entry")
		out.retryWithin(clusterReadRetry)
	}
	f, recheck := status.RouteProblem(route, gw, by, appliedAt(route), now)
	out.retryWithin(recheck)
	switch {
	case f == nil:
		return true, status.RouteAcceptedAt(route, gw, by).Add(status.MoveGrace)
	case f.Terminal:
		obs.Failures = append(obs.Failures, *f)
	default:
		obs.Unreachable = f
	}
	return false, time.Time{}
}

// retireRoute deletes the HTTPRoute of a MyApp that no longer asks for one. A route that
// served (its Gateway's controller accepted a generation of it) while the MyApp moves to an
// Ingress stays until status.IngressTakesOverAt, and the reconcile runs again then; ingress
// is the Ingress carrying the spec, nil when the MyApp is no longer exposed.
func (r *MyAppReconciler) retireRoute(ctx context.Context, app *examplev1.MyApp, out *outcome, ingress *networkingv1.Ingress, now time.Time) error {
	route := &gatewayv1.HTTPRoute{}
	if ingress != nil {
		found, err := r.readChild(ctx, r.routes, app, app.Name, route)
		if err != nil || !found {
			// deleteChildIn says what a route that is not the MyApp's own calls for.
			return r.deleteChildIn(ctx, r.routes, app, &out.changes, &gatewayv1.HTTPRoute{}, app.Name)
		}
		if until, err := r.routeServesUntil(ctx, route, ingress, now); err != nil || now.Before(until) {
			out.retryWithin(until.Sub(now))
			return err
		}
	}
	return r.deleteChildIn(ctx, r.routes, app, &out.changes, &gatewayv1.HTTPRoute{}, app.Name)
}

// routeServesUntil is when the route of a MyApp that moved to ingress may go: at once if
// its Gateway's controller never accepted it (it routes nothing), else
// status.IngressTakesOverAt. The time the ingress controller published the Ingress's address
// is in the Ingress's managedFields, which the cache keeps only for the operator's own field
// manager: one uncached read of its metadata, while a move waits for it.
func (r *MyAppReconciler) routeServesUntil(ctx context.Context, route *gatewayv1.HTTPRoute, ingress *networkingv1.Ingress, now time.Time) (time.Time, error) {
	gw, ok := status.RouteParent(route)
	if !ok {
		return time.Time{}, nil
	}
	by, err := r.gateway.controllerOf(ctx, gw, now)
	if err != nil {
		// An optional read: every controller's entry counts without it.
		log.FromContext(ctx).Error(err, "Could not tell which controller speaks for the Gateway; counting every controller's entry")
	}
	if !status.RouteServed(route, gw, by) {
		return time.Time{}, nil
	}
	var addressAt time.Time
	if status.Admitted(ingress) {
		partial := &metav1.PartialObjectMetadata{}
		partial.SetGroupVersionKind(networkingv1.SchemeGroupVersion.WithKind(kindIngress))
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(ingress), partial); err != nil {
			return time.Time{}, fmt.Errorf("reading when Ingress %s got its address: %w", ingress.Name, err)
		}
		for _, mf := range ssa.EntriesOwning(partial, "f:status", "f:loadBalancer") {
			if mf.Time != nil && mf.Time.After(addressAt) {
				addressAt = mf.Time.Time
			}
		}
	}
	return status.IngressTakesOverAt(ingress, appliedAt(ingress), addressAt), nil
}

// appliedAt is when the operator last changed what it owns of a child: the time of its
// field manager's apply entry, which the API server moves whenever a field of that entry
// changes (the cache keeps the operator's own entries); the child's creation when it has none.
func appliedAt(obj client.Object) time.Time {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == FieldOwner && mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "" && mf.Time != nil {
			return mf.Time.Time
		}
	}
	return obj.GetCreationTimestamp().Time
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

// mayBeUnserved tells whether a request about an HTTPRoute failed in a way an API server
// that no longer serves HTTPRoutes answers (their CRD removed after the operator found
// them): NotFound, or no REST mapping. A NotFound has other causes (a route deleted between
// two requests), so stillServed asks discovery before the MyApp says so.
func mayBeUnserved(err error) bool {
	var notSynced *notSyncedError
	return err != nil && (apierrors.IsNotFound(err) || meta.IsNoMatchError(err) || errors.As(err, &notSynced))
}

// gatewayAPIRetry is how soon a MyApp that needs the Gateway API, while it is not served,
// is reconciled again.
const gatewayAPIRetry = 30 * time.Second

// gatewayAPI knows whether the cluster serves HTTPRoutes (optionalAPI), and reads the
// cluster-wide objects that say who serves a MyApp's exposure (expose_reads.go): Gateways
// with their GatewayClasses, and IngressClasses.
type gatewayAPI struct {
	*optionalAPI
	gateways, ingressClasses *clusterReads
}

// setupRoutes gives the reconciler a cache of its own for the optional kinds (HTTPRoutes,
// PodMonitors: podmonitors.go, and Certificates: certificates.go), holding only those labelled as ours, and the watch of
// HTTPRoutes that starts once the Gateway API is served. It has its own
// cache because the manager's cannot be configured for a kind the cluster may not serve. At
// start, while leading, it looks once whether the Gateway API is served, so that an HTTPRoute
// left by a MyApp that no longer asks for one is found and removed. It sets up the rest of
// what exposure reads too: the cluster reads and the watch of Ingresses' addresses
// (setupClusterReads).
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
	r.routes = boundedReader{Reader: routes, what: "HTTPRoutes", wait: cacheSyncWait}
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return err
	}
	everyMyApp := make(chan event.GenericEvent)
	if err := c.Watch(source.Channel(everyMyApp, &handler.EnqueueRequestForObject{})); err != nil {
		return err
	}
	optional := optionalKinds{mgr: mgr, controller: c, cache: routes, discovery: disco, everyMyApp: everyMyApp}
	api, err := optional.api(gatewayv1.SchemeGroupVersion.WithKind(kindRoute), "the Gateway API", &gatewayv1.HTTPRoute{}, routeStatusChanged)
	if err != nil {
		return err
	}
	r.gateway = &gatewayAPI{optionalAPI: api}
	if err := r.setupClusterReads(mgr, c); err != nil {
		return err
	}
	if err := r.setupPodMonitors(optional); err != nil {
		return err
	}
	return r.setupCertificates(optional)
}

// routeStatusChanged picks the route's parent statuses, where the Gateway says whether it
// accepts the route.
var routeStatusChanged = statusPartChanged(func(r *gatewayv1.HTTPRoute) []gatewayv1.RouteParentStatus {
	return r.Status.Parents
})

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
