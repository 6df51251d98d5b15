package desired

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// PodDisruptionBudget is the PodDisruptionBudget the MyApp asks for, or nil when it asks for
// none (the operator then deletes the one it owns). It covers the MyApp's pods; while
// migrating is true, those of the 0.2.0 Deployment being replaced too, as the Service does.
//
// Its unhealthyPodEvictionPolicy is AlwaysAllow: a pod that is not ready counts for nothing
// the budget protects, so evicting it never costs availability, and a node drain does not
// hang on an app whose pods are all unready (the budget's default, IfHealthyBudget, blocks
// such evictions whenever too few pods are healthy). A budget applied before 0.3.2 gains the
// field in place; the pods are not touched.
//
// A minAvailable or maxUnavailable that is neither a count from 0 to MaxInt32 nor a
// percentage up to 100% (the API server's rule for a budget) is reported as an
// InvalidSpecError naming the field, as Deployment reports the rolling update's: admission
// refuses such values, but one stored under an older CRD still decodes
// (api/v1/intorpercent.go) and must not be sent as a budget the API server refuses.
func PodDisruptionBudget(app *examplev1.MyApp, migrating bool) (*policyv1ac.PodDisruptionBudgetApplyConfiguration, error) {
	want := app.Spec.PodDisruptionBudget
	if want == nil || (want.MinAvailable == nil && want.MaxUnavailable == nil) {
		return nil, nil
	}
	spec := policyv1ac.PodDisruptionBudgetSpec().
		WithUnhealthyPodEvictionPolicy(policyv1.AlwaysAllow)
	// Admission allows exactly one; an object stored otherwise gets minAvailable. Only the
	// field the budget carries is checked.
	if want.MinAvailable != nil {
		if err := countOrPercent("spec.podDisruptionBudget.minAvailable", want.MinAvailable, true); err != nil {
			return nil, err
		}
		spec.WithMinAvailable(*want.MinAvailable)
	} else {
		if err := countOrPercent("spec.podDisruptionBudget.maxUnavailable", want.MaxUnavailable, true); err != nil {
			return nil, err
		}
		spec.WithMaxUnavailable(*want.MaxUnavailable)
	}
	selector := SelectorLabels(app)
	if migrating {
		selector = migrationSelectorLabels(app)
	}
	spec.WithSelector(metav1ac.LabelSelector().WithMatchLabels(selector))
	return policyv1ac.PodDisruptionBudget(app.Name, app.Namespace).
		WithLabels(Labels(app)).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(spec), nil
}
