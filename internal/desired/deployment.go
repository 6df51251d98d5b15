package desired

import (
	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// InvalidSpecError reports a MyApp field that the builders cannot turn into a child. The API
// server rejects such values at admission, so this is seen only for objects stored before
// the validation existed; the user must fix the MyApp.
type InvalidSpecError struct {
	Field   string
	Message string
}

func (e *InvalidSpecError) Error() string { return e.Field + ": " + e.Message }

// Deployment is the Deployment the MyApp wants, carrying only the fields the operator has an
// opinion on. While autoscaling is enabled it leaves replicas out, so that the
// HorizontalPodAutoscaler owns that field. While migrating is true (a 0.2.0 Deployment is
// being replaced) it carries the migration mark, which keeps the migration's phase even if
// the Service is deleted mid-way.
func Deployment(app *examplev1.MyApp, migrating bool) (*appsv1ac.DeploymentApplyConfiguration, error) {
	template, err := PodTemplate(app)
	if err != nil {
		return nil, err
	}
	spec := appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(app))).
		WithTemplate(template)
	if !AutoscalingEnabled(app) {
		spec.WithReplicas(replicas(app))
	}
	if ru := app.Spec.RollingUpdate; ru != nil && (ru.MaxSurge != nil || ru.MaxUnavailable != nil) {
		rolling := appsv1ac.RollingUpdateDeployment()
		if ru.MaxSurge != nil {
			rolling.WithMaxSurge(*ru.MaxSurge)
		}
		if ru.MaxUnavailable != nil {
			rolling.WithMaxUnavailable(*ru.MaxUnavailable)
		}
		spec.WithStrategy(appsv1ac.DeploymentStrategy().
			WithType(appsv1.RollingUpdateDeploymentStrategyType).
			WithRollingUpdate(rolling))
	}

	d := appsv1ac.Deployment(app.Name, app.Namespace).
		WithLabels(Labels(app)).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(spec)
	if migrating {
		d.WithAnnotations(map[string]string{AnnotationSelectorMigration: SelectorMigrationFrom020})
	}
	return d, nil
}
