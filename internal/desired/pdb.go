package desired

import (
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// PodDisruptionBudget is the budget the MyApp asks for, or nil when it asks for none (the
// operator then deletes the one it owns). It covers the MyApp's pods; while migrating is
// true, those of the 0.2.0 Deployment being replaced too, as the Service does.
func PodDisruptionBudget(app *examplev1.MyApp, migrating bool) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	want := app.Spec.PodDisruptionBudget
	if want == nil || (want.MinAvailable == nil && want.MaxUnavailable == nil) {
		return nil
	}
	selector := SelectorLabels(app)
	if migrating {
		selector = migrationSelectorLabels(app)
	}
	spec := policyv1ac.PodDisruptionBudgetSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(selector))
	// Admission allows exactly one; an object stored otherwise gets minAvailable.
	if want.MinAvailable != nil {
		spec.WithMinAvailable(*want.MinAvailable)
	} else {
		spec.WithMaxUnavailable(*want.MaxUnavailable)
	}
	return policyv1ac.PodDisruptionBudget(app.Name, app.Namespace).
		WithLabels(Labels(app)).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(spec)
}
