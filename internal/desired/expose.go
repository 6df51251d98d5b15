package desired

import (
	"cmp"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1ac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// DefaultExposePath is the path prefix of spec.expose when it names none.
const DefaultExposePath = "/"

// ExposeDefaults are the manager-wide choices for a spec.expose that names neither a Gateway
// nor an ingress class, set once by the platform team through the manager's flags.
type ExposeDefaults struct {
	// Gateway, when set, is the Gateway such MyApps attach an HTTPRoute to. Its namespace is
	// always set.
	Gateway *examplev1.GatewayReference
	// IngressClassName is the class of such MyApps' Ingress when no Gateway is the default
	// ("" leaves it to the cluster's default IngressClass).
	IngressClassName string
}

// Exposure is how a MyApp is reached from outside the cluster: by at most one of an
// HTTPRoute to Gateway, or an Ingress of IngressClassName.
type Exposure struct {
	// Route is true when the MyApp is exposed through an HTTPRoute attached to Gateway.
	Route bool
	// Gateway is the Gateway of the route, its namespace filled in.
	Gateway examplev1.GatewayReference
	// Ingress is true when the MyApp is exposed through an Ingress.
	Ingress bool
	// IngressClassName is the Ingress's class, or nil for the cluster's default.
	IngressClassName *string
}

// ExposureOf says how the MyApp is exposed: what the MyApp names, else the defaults. A MyApp
// that names a TLS Secret and neither a Gateway nor a class gets an Ingress even where the
// default is a Gateway, so that its certificate is served.
func ExposureOf(app *examplev1.MyApp, defaults ExposeDefaults) Exposure {
	e := app.Spec.Expose
	switch {
	case e == nil:
		return Exposure{}
	case e.Gateway != nil:
		gw := *e.Gateway
		if gw.Namespace == "" {
			gw.Namespace = app.Namespace
		}
		return Exposure{Route: true, Gateway: gw}
	case e.IngressClassName != nil:
		return Exposure{Ingress: true, IngressClassName: e.IngressClassName}
	case defaults.Gateway != nil && (e.TLS == nil || e.TLS.SecretName == ""):
		// A certificate of the MyApp's own is for an Ingress: a route cannot carry one.
		return Exposure{Route: true, Gateway: *defaults.Gateway}
	case defaults.IngressClassName != "":
		class := defaults.IngressClassName
		return Exposure{Ingress: true, IngressClassName: &class}
	default:
		return Exposure{Ingress: true}
	}
}

// ExposedPath is the path prefix the MyApp is reached under.
func ExposedPath(e *examplev1.Expose) string { return cmp.Or(e.Path, DefaultExposePath) }

// URL is where the app exposed by spec.expose is reached: the scheme, the first host that is
// not a wildcard and the path; "" when the MyApp is not exposed or names only wildcards.
func URL(app *examplev1.MyApp) string {
	e := app.Spec.Expose
	if e == nil {
		return ""
	}
	scheme := "http://"
	if e.TLS != nil {
		scheme = "https://"
	}
	for _, h := range e.Hosts {
		if !strings.HasPrefix(string(h), "*") {
			return scheme + string(h) + ExposedPath(e)
		}
	}
	return ""
}

// Ingress is the Ingress that exposes the MyApp: one rule per host, each routing the path
// prefix to the MyApp's Service port, and with tls a TLS entry for all hosts.
func Ingress(app *examplev1.MyApp, class *string) *networkingv1ac.IngressApplyConfiguration {
	e := app.Spec.Expose
	backend := networkingv1ac.IngressBackend().WithService(networkingv1ac.IngressServiceBackend().
		WithName(app.Name).
		WithPort(networkingv1ac.ServiceBackendPort().WithNumber(exposedPort(app))))
	spec := networkingv1ac.IngressSpec()
	if class != nil {
		spec.WithIngressClassName(*class)
	}
	hosts := make([]string, 0, len(e.Hosts))
	for _, h := range e.Hosts {
		hosts = append(hosts, string(h))
		spec.WithRules(networkingv1ac.IngressRule().
			WithHost(string(h)).
			WithHTTP(networkingv1ac.HTTPIngressRuleValue().WithPaths(networkingv1ac.HTTPIngressPath().
				WithPath(ExposedPath(e)).
				WithPathType(networkingv1.PathTypePrefix).
				WithBackend(backend))))
	}
	if e.TLS != nil {
		tls := networkingv1ac.IngressTLS().WithHosts(hosts...)
		if e.TLS.SecretName != "" {
			tls.WithSecretName(e.TLS.SecretName)
		}
		spec.WithTLS(tls)
	}
	return networkingv1ac.Ingress(app.Name, app.Namespace).
		WithLabels(Labels(app)).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(spec)
}

// HTTPRoute is the HTTPRoute that exposes the MyApp through the Gateway: its hosts, and one
// rule sending the path prefix to the MyApp's Service port. The fields the API server would
// default (the parent's group and kind, the backend's kind and weight) are sent as they
// default, so that what the route holds reads back the same as what was sent.
func HTTPRoute(app *examplev1.MyApp, gw examplev1.GatewayReference) *gatewayv1ac.HTTPRouteApplyConfiguration {
	return httpRoute(app, gw, backendRef(app.Name, exposedPort(app), 1))
}

// CanaryHTTPRoute is HTTPRoute for a MyApp with spec.canary: the rule splits the requests
// between the stable pods' Service, with 100 − canaryWeight, and the canary's, with
// canaryWeight (docs/design/canary.md). Without a canary under way the canary's weight is 0,
// so the route keeps its shape across canaries.
func CanaryHTTPRoute(app *examplev1.MyApp, gw examplev1.GatewayReference, canaryWeight int32) *gatewayv1ac.HTTPRouteApplyConfiguration {
	canaryWeight = min(max(canaryWeight, 0), 100)
	return httpRoute(app, gw, backendRef(StableName(app), exposedPort(app), 100-canaryWeight),
		backendRef(CanaryName(app), exposedPort(app), canaryWeight))
}

// backendRef is a backend of the route's rule: a Service's port, with a weight.
func backendRef(service string, port, weight int32) *gatewayv1ac.HTTPBackendRefApplyConfiguration {
	return gatewayv1ac.HTTPBackendRef().
		WithGroup("").
		WithKind("Service").
		WithName(gatewayv1.ObjectName(service)).
		WithPort(port).
		WithWeight(weight)
}

func httpRoute(app *examplev1.MyApp, gw examplev1.GatewayReference, backends ...*gatewayv1ac.HTTPBackendRefApplyConfiguration) *gatewayv1ac.HTTPRouteApplyConfiguration {
	e := app.Spec.Expose
	parent := gatewayv1ac.ParentReference().
		WithGroup(gatewayv1.GroupName).
		WithKind("Gateway").
		WithNamespace(gatewayv1.Namespace(gw.Namespace)).
		WithName(gatewayv1.ObjectName(gw.Name))
	if gw.SectionName != "" {
		parent.WithSectionName(gatewayv1.SectionName(gw.SectionName))
	}
	hosts := make([]gatewayv1.Hostname, 0, len(e.Hosts))
	for _, h := range e.Hosts {
		hosts = append(hosts, gatewayv1.Hostname(h))
	}
	rule := gatewayv1ac.HTTPRouteRule().
		WithMatches(gatewayv1ac.HTTPRouteMatch().WithPath(gatewayv1ac.HTTPPathMatch().
			WithType(gatewayv1.PathMatchPathPrefix).
			WithValue(ExposedPath(e)))).
		WithBackendRefs(backends...)
	return gatewayv1ac.HTTPRoute(app.Name, app.Namespace).
		WithLabels(Labels(app)).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(gatewayv1ac.HTTPRouteSpec().
			WithParentRefs(parent).
			WithHostnames(hosts...).
			WithRules(rule))
}
