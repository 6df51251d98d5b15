package testutil

import (
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

// Child is one object the operator applies for a MyApp: its apply configuration, and an
// empty object of its kind to read the API server's answer into.
type Child struct {
	Config runtime.ApplyConfiguration
	Object client.Object
}

// Children are the children the desired package builds for app: the Deployment, the
// Service, the files ConfigMap when the spec has files, its Ingress and HTTPRoute when it is exposed, the autoscaler when autoscaling is on, the disruption budget when the spec asks
// for one, the NetworkPolicy of its access policy, and with spec.canary the canary Deployment,
// its Services and the split route. An error is a builder's refusal of the spec (InvalidSpec).
func Children(app *examplev1.MyApp, migrating bool) ([]Child, error) {
	d, err := desired.Deployment(app, migrating)
	if err != nil {
		return nil, err
	}
	children := []Child{{d, &appsv1.Deployment{}}, {desired.Service(app, migrating), &corev1.Service{}}}
	files, err := desired.FilesOf(app)
	if err != nil {
		return nil, err
	}
	if files != nil {
		children = append(children, Child{files.ConfigMap, &corev1.ConfigMap{}})
	}
	if h := desired.HorizontalPodAutoscaler(app); h != nil {
		children = append(children, Child{h, &autoscalingv2.HorizontalPodAutoscaler{}})
	}
	p, err := desired.PodDisruptionBudget(app, migrating)
	if err != nil {
		return nil, err
	}
	if p != nil {
		children = append(children, Child{p, &policyv1.PodDisruptionBudget{}})
	}
	if np := desired.NetworkPolicy(app, migrating); np != nil {
		children = append(children, Child{np, &networkingv1.NetworkPolicy{}})
	}
	if app.Spec.Metrics != nil {
		children = append(children, Child{desired.PodMonitor(app), &monitoringv1.PodMonitor{}})
	}
	if app.Spec.Expose != nil {
		// Both ways of exposing: which one a MyApp gets depends on the manager's defaults.
		children = append(children, Child{desired.Ingress(app, app.Spec.Expose.IngressClassName), &networkingv1.Ingress{}})
		gw := examplev1.GatewayReference{Namespace: "infra", Name: "public"}
		if e := desired.ExposureOf(app, desired.ExposeDefaults{Gateway: &gw}); e.Route {
			gw = e.Gateway
		}
		children = append(children, Child{desired.HTTPRoute(app, gw), &gatewayv1.HTTPRoute{}})
		if c := desired.Certificate(app); c != nil {
			children = append(children, Child{c, &cmv1.Certificate{}})
		}
		if app.Spec.Canary != nil {
			children = append(children, Child{desired.CanaryHTTPRoute(app, gw, 5), &gatewayv1.HTTPRoute{}})
		}
	}
	plan, err := desired.CanaryPlanOf(app)
	if err != nil {
		return nil, err
	}
	if plan != nil {
		// A canary sized for its share beside the stable pods, and the Services of the route's
		// split (a pod-template-hash of the deployment controller's form for the stable pods').
		children = append(children, Child{desired.CanaryDeployment(app, d, plan, desired.CanaryReplicas(3, 25)), &appsv1.Deployment{}})
		stableSvc, canarySvc := desired.CanaryServices(app, "5d8f9c7b6")
		children = append(children, Child{stableSvc, &corev1.Service{}}, Child{canarySvc, &corev1.Service{}})
	}
	return children, nil
}
