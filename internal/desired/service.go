package desired

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Service is the Service the MyApp wants: its port, forwarded to the container's named port,
// with the MyApp's service type. Fields the API server allocates (cluster IP, node ports)
// are left to it.
func Service(app *examplev1.MyApp) *corev1ac.ServiceApplyConfiguration {
	serviceType := corev1.ServiceType(app.Spec.ServiceType)
	if serviceType == "" {
		serviceType = corev1.ServiceTypeClusterIP
	}
	return corev1ac.Service(app.Name, app.Namespace).
		WithLabels(Labels(app)).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(corev1ac.ServiceSpec().
			WithType(serviceType).
			WithSelector(SelectorLabels(app)).
			WithPorts(corev1ac.ServicePort().
				WithName(PortName).
				WithProtocol(corev1.ProtocolTCP).
				WithPort(port(app)).
				WithTargetPort(intstr.FromString(PortName))))
}
