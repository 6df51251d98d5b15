package desired

import (
	corev1 "k8s.io/api/core/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Every default the builders apply, in one place. The API server fills in the first four
// (they have CRD defaults since 0.1.0); they are repeated here so that the builders give the
// same result for an object read before defaulting. The others have no CRD default on
// purpose: OLM v1 refuses a CRD upgrade that adds one, so the builders apply them, and the
// field documentation (kubectl explain) states them.
const (
	DefaultReplicas                       int32 = 1
	DefaultPort                           int32 = 8080
	DefaultMinReplicas                    int32 = 1
	DefaultTargetCPUUtilizationPercentage int32 = 80
)

// The Kubernetes defaults of fields a MyApp leaves to the Deployment while it sets none of a
// pair: once it sets one, the builders apply both, so that the pair Kubernetes checks together
// (a preStop sleep within the grace period; a progress deadline above minReadySeconds) is the
// pair admission checked, whatever someone else wrote into the Deployment.
const (
	DefaultTerminationGracePeriodSeconds int64 = 30
	DefaultMinReadySeconds               int32 = 0
	DefaultProgressDeadlineSeconds       int32 = 600
)

// DefaultRunAsNonRoot, DefaultSeccompProfile, DefaultAllowPrivilegeEscalation and
// DefaultDropCapabilities are the security settings the "restricted" Pod Security Standard
// requires; a MyApp's securityContext and podSecurityContext override them field by field.
var (
	DefaultRunAsNonRoot             = true
	DefaultSeccompProfile           = corev1.SeccompProfileTypeRuntimeDefault
	DefaultAllowPrivilegeEscalation = false
	DefaultDropCapabilities         = []corev1.Capability{"ALL"}
)

// The default readiness probe is a TCP connection to the MyApp's port (by its name, PortName),
// with the Kubernetes probe timings: Ready then means "accepting connections".

// AutoscalingEnabled tells whether a HorizontalPodAutoscaler, not the MyApp, owns the number
// of replicas.
func AutoscalingEnabled(app *examplev1.MyApp) bool {
	return app.Spec.AutoScaling != nil && app.Spec.AutoScaling.Enabled
}

func replicas(app *examplev1.MyApp) int32 { return valueOr(app.Spec.Replicas, DefaultReplicas) }

func port(app *examplev1.MyApp) int32 { return valueOr(app.Spec.Port, DefaultPort) }

// portProtocol is a port's protocol, TCP when left out.
func portProtocol(p examplev1.ContainerPort) corev1.Protocol {
	return corev1.Protocol(valueOr(p.Protocol, examplev1.ProtocolTCP))
}

// appPorts are the container's ports, each also a Service port of the same name and number:
// the MyApp's port, named http (PortName), then spec.ports.
func appPorts(app *examplev1.MyApp) []examplev1.ContainerPort {
	return append([]examplev1.ContainerPort{{Name: PortName, Port: port(app)}}, app.Spec.Ports...)
}

// exposedPort is the number of the Service port the route or Ingress sends to: the TCP port
// expose.portName names, http when unset. A name admission would refuse (a port since
// removed, in an object stored without the rule) falls back to the MyApp's port rather than to
// a port the Service lacks.
func exposedPort(app *examplev1.MyApp) int32 {
	if e := app.Spec.Expose; e != nil && e.PortName != "" {
		for _, p := range appPorts(app) {
			if p.Name == e.PortName && portProtocol(p) == corev1.ProtocolTCP {
				return p.Port
			}
		}
	}
	return port(app)
}

func valueOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
