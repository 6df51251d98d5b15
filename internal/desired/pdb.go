package desired

import (
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Budget is the PodDisruptionBudget the MyApp asks for, or nil when it asks for none (the
// operator then deletes the one it owns). It covers the MyApp's pods; while migrating is
// true, those of the 0.2.0 Deployment being replaced too, as the Service does.
//
// A minAvailable or maxUnavailable that is neither a count from 0 to MaxInt32 nor a
// percentage up to 100% (the API server's rule for a budget) is reported as an
// InvalidSpecError naming the field, as Deployment reports the rolling update's: admission
// refuses such values, but one stored under an older CRD still decodes
// (api/v1/intorpercent.go) and must not be sent as a budget the API server refuses.
func Budget(app *examplev1.MyApp, migrating bool) (*policyv1ac.PodDisruptionBudgetApplyConfiguration, error) {
	want := app.Spec.PodDisruptionBudget
	if want == nil {
		return nil, nil
	}
	// Only the field the budget carries is checked (see PodDisruptionBudget).
	var err error
	if want.MinAvailable != nil {
		err = countOrPercent("spec.podDisruptionBudget.minAvailable", want.MinAvailable, true)
	} else {
		err = countOrPercent("spec.podDisruptionBudget.maxUnavailable", want.MaxUnavailable, true)
	}
	if err != nil {
		return nil, err
	}
	return PodDisruptionBudget(app, migrating), nil
}

// PodDisruptionBudget builds the budget as Budget does, without checking its counts. The
// reconciler calls Budget; this stays for the makeability tests of package api/v1, which hold
// only MyApps admission accepted and leave it to the API server to judge the budget.
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
