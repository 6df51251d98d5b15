package desired

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// SelectorMigrationFrom020 is the value of AnnotationSelectorMigration while the pods of a
// 0.2.0 Deployment are being replaced.
const SelectorMigrationFrom020 = "from-0.2.0"

// Service is the Service the MyApp wants: its port and spec.ports, each forwarded to the
// container's port of the same name,
// with the MyApp's service type and annotations. Fields the API server allocates (cluster
// IP, node ports) are left to it. While migrating is true (a 0.2.0 Deployment's pods are
// still serving) it selects the old pods and the new ones alike and carries the migration
// mark; see docs/design/migration.md.
func Service(app *examplev1.MyApp, migrating bool) *corev1ac.ServiceApplyConfiguration {
	serviceType := corev1.ServiceType(app.Spec.ServiceType)
	if serviceType == "" {
		serviceType = corev1.ServiceTypeClusterIP
	}
	selector := SelectorLabels(app)
	if migrating {
		selector = migrationSelectorLabels(app)
	}
	spec := corev1ac.ServiceSpec().
		WithType(serviceType).
		WithSelector(selector)
	for _, p := range appPorts(app) {
		sp := corev1ac.ServicePort().
			WithName(p.Name).
			WithProtocol(portProtocol(p)).
			WithPort(p.Port).
			WithTargetPort(intstr.FromString(p.Name))
		if p.AppProtocol != nil {
			sp.WithAppProtocol(*p.AppProtocol)
		}
		spec.WithPorts(sp)
	}
	svc := corev1ac.Service(app.Name, app.Namespace).
		WithLabels(Labels(app)).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(spec)
	if len(app.Spec.ServiceAnnotations) > 0 {
		svc.WithAnnotations(app.Spec.ServiceAnnotations)
	}
	if migrating {
		svc.WithAnnotations(map[string]string{AnnotationSelectorMigration: SelectorMigrationFrom020})
	}
	return svc
}
