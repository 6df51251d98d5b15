package desired

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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
		if err := countOrPercent("spec.rollingUpdate.maxSurge", ru.MaxSurge, false); err != nil {
			return nil, err
		}
		if err := countOrPercent("spec.rollingUpdate.maxUnavailable", ru.MaxUnavailable, true); err != nil {
			return nil, err
		}
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

	if app.Spec.MinReadySeconds != nil || app.Spec.ProgressDeadlineSeconds != nil {
		minReady := valueOr(app.Spec.MinReadySeconds, DefaultMinReadySeconds)
		deadline := valueOr(app.Spec.ProgressDeadlineSeconds, DefaultProgressDeadlineSeconds)
		if deadline <= minReady {
			// Admission refuses this; an object stored before the rule says what to change.
			return nil, &InvalidSpecError{Field: "spec.progressDeadlineSeconds",
				Message: fmt.Sprintf("must exceed minReadySeconds (%d); it is %d", minReady, deadline)}
		}
		spec.WithMinReadySeconds(minReady).WithProgressDeadlineSeconds(deadline)
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

// percentPattern is a percentage as Kubernetes reads one: digits and '%'.
var percentPattern = regexp.MustCompile(`^[0-9]+%$`)

// countOrPercent checks an int-or-string as decoded, as admission does: a count of pods from
// 0 to MaxInt32, or a percentage (of at most 100% when upTo100 is set). An integer that
// does not fit in int32 decodes as its text in a string (api/v1/intorpercent.go) and is
// reported here, so that the object never reaches the API server as a child it refuses.
func countOrPercent(field string, v *intstr.IntOrString, upTo100 bool) error {
	if v == nil {
		return nil
	}
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return &InvalidSpecError{Field: field, Message: fmt.Sprintf("%d is negative: must be a number from 0 to %d or a percentage", v.IntVal, examplev1.MaxInt32)}
		}
		return nil
	}
	if !percentPattern.MatchString(v.StrVal) {
		return &InvalidSpecError{Field: field, Message: fmt.Sprintf("%q is not a number from 0 to %d or a percentage such as 25%%", v.StrVal, examplev1.MaxInt32)}
	}
	if n, err := strconv.ParseInt(strings.TrimSuffix(v.StrVal, "%"), 10, 32); err != nil || (upTo100 && n > 100) {
		limit := fmt.Sprintf("%d%%", examplev1.MaxInt32)
		if upTo100 {
			limit = "100%"
		}
		return &InvalidSpecError{Field: field, Message: fmt.Sprintf("%q is above %s", v.StrVal, limit)}
	}
	return nil
}
