package desired

import (
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// PodDisruptionBudget is the budget the MyApp asks for, or nil when it asks for none (the
// operator then deletes the one it owns). It covers the MyApp's pods.
func PodDisruptionBudget(app *examplev1.MyApp) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	want := app.Spec.PodDisruptionBudget
	if want == nil || (want.MinAvailable == nil && want.MaxUnavailable == nil) {
		return nil
	}
	spec := policyv1ac.PodDisruptionBudgetSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(app)))
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
