package desired

import (
	"fmt"
	"math"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/analysis"
	"github.com/example/myapp-operator/internal/rollout"
)

// The children of a canary release (docs/design/canary.md): a Deployment of the new template
// beside the stable one, and, through a Gateway, a Service for each of the two, between which
// the HTTPRoute splits the requests.
const (
	// LabelTrack marks the canary's pods (TrackCanary): the canary Deployment selects them by
	// it, and so does the canary's Service. The stable pods do not carry it: adding a label to
	// their template would restart them. The two Services the route splits between carry it
	// too (TrackCanary, TrackStable), and so, copied by the EndpointSlice controller, do their
	// EndpointSlices: the operator watches those slices alone.
	LabelTrack = "myapp.example.com/track"
	// TrackCanary is LabelTrack's value on the canary's pods and Service.
	TrackCanary = "canary"
	// TrackStable is LabelTrack's value on the stable pods' Service.
	TrackStable = "stable"

	// Defaults of a metric check.
	DefaultCanaryInterval = 30 * time.Second
)

// CanaryName is the name of the canary Deployment and of the canary's Service.
func CanaryName(app *examplev1.MyApp) string { return app.Name + "-canary" }

// StableName is the name of the stable pods' Service, the one the HTTPRoute sends the stable
// share of the requests to.
func StableName(app *examplev1.MyApp) string { return app.Name + "-stable" }

// CanaryPlan is spec.canary as the step machine and the analysis read it, defaulted.
type CanaryPlan struct {
	Steps  []rollout.CanaryStep
	Checks []analysis.Check
	// AvailableWithin is the canary Deployment's progress deadline in seconds, 0 for the
	// MyApp's own.
	AvailableWithin int32
}

// CanaryPlanOf reads spec.canary; nil when the MyApp asks for no canary. Admission refuses
// what it cannot read; a MyApp stored before a rule gets an InvalidSpecError naming the field.
func CanaryPlanOf(app *examplev1.MyApp) (*CanaryPlan, error) {
	c := app.Spec.Canary
	if c == nil {
		return nil, nil
	}
	plan := &CanaryPlan{}
	if len(c.Steps) == 0 {
		return nil, &InvalidSpecError{Field: "spec.canary.steps", Message: "must list at least one step"}
	}
	for i, s := range c.Steps {
		field := fmt.Sprintf("spec.canary.steps[%d]", i)
		switch {
		case s.SetWeight != nil && s.Pause == nil:
			if *s.SetWeight < 1 || *s.SetWeight > 100 {
				return nil, &InvalidSpecError{Field: field + ".setWeight", Message: "must be between 1 and 100"}
			}
			plan.Steps = append(plan.Steps, rollout.CanaryStep{Weight: *s.SetWeight})
		case s.Pause != nil && s.SetWeight == nil:
			var d time.Duration
			if s.Pause.Duration != nil {
				var err error
				if d, err = canaryDuration(field+".pause.duration", *s.Pause.Duration, time.Second, 24*time.Hour); err != nil {
					return nil, err
				}
			}
			plan.Steps = append(plan.Steps, rollout.CanaryStep{Pause: d})
		default:
			return nil, &InvalidSpecError{Field: field, Message: "a step is exactly one of setWeight and pause"}
		}
	}
	a := c.Analysis
	if a == nil {
		return plan, nil
	}
	if a.AvailableWithin != nil {
		d, err := canaryDuration("spec.canary.analysis.availableWithin", *a.AvailableWithin, time.Second, time.Hour)
		if err != nil {
			return nil, err
		}
		plan.AvailableWithin = int32(math.Ceil(d.Seconds()))
		if minReady := valueOr(app.Spec.MinReadySeconds, DefaultMinReadySeconds); plan.AvailableWithin <= minReady {
			return nil, &InvalidSpecError{Field: "spec.canary.analysis.availableWithin",
				Message: fmt.Sprintf("must exceed minReadySeconds (%d): it is the canary Deployment's progress deadline", minReady)}
		}
	}
	seen := map[string]bool{}
	for i, m := range a.Metrics {
		field := fmt.Sprintf("spec.canary.analysis.metrics[%d]", i)
		if m.Name == "" || seen[m.Name] {
			return nil, &InvalidSpecError{Field: field + ".name", Message: "must be set and unique"}
		}
		seen[m.Name] = true
		check := analysis.Check{Name: m.Name, Query: analysis.Expand(m.Query, app.Namespace, app.Name),
			Operator: m.Condition.Operator, Interval: DefaultCanaryInterval,
			AbortOnError: m.OnError == examplev1.CanaryOnErrorAbort}
		switch m.Condition.Operator {
		case "<", "<=", ">", ">=":
		default:
			return nil, &InvalidSpecError{Field: field + ".condition.operator", Message: "must be <, <=, > or >="}
		}
		v, err := strconv.ParseFloat(m.Condition.Value, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, &InvalidSpecError{Field: field + ".condition.value", Message: "must be a decimal number"}
		}
		check.Threshold = v
		if m.Interval != nil {
			if check.Interval, err = canaryDuration(field+".interval", *m.Interval, 5*time.Second, time.Hour); err != nil {
				return nil, err
			}
		}
		if m.FailureLimit != nil {
			if *m.FailureLimit < 0 || *m.FailureLimit > 100 {
				return nil, &InvalidSpecError{Field: field + ".failureLimit", Message: "must be between 0 and 100"}
			}
			check.FailureLimit = *m.FailureLimit
		}
		plan.Checks = append(plan.Checks, check)
	}
	return plan, nil
}

// canaryDuration parses a duration of spec.canary within [least, most].
func canaryDuration(field, s string, least, most time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < least || d > most {
		return 0, &InvalidSpecError{Field: field, Message: fmt.Sprintf("must be a duration between %s and %s, such as 30s or 5m", least, most)}
	}
	return d, nil
}

// CanaryReplicas is how many pods the canary runs beside stable pods of the stable Deployment
// for a share of size percent: as many as the stable Deployment at 100 (a promotion), none at
// 0 or with no stable pod, and otherwise stable × size / (100 − size), at least one, so that
// about size percent of the pods behind the MyApp's Service are the canary's and, with exact
// weights, each pod of either takes about the same share of the requests.
func CanaryReplicas(stable, size int32) int32 {
	switch {
	case size <= 0 || stable <= 0:
		return 0
	case size >= 100:
		return stable
	}
	n := math.Round(float64(stable) * float64(size) / float64(100-size))
	return int32(max(1, min(n, float64(math.MaxInt32))))
}

// CanaryDeployment is the canary Deployment: the spec's Deployment (stable, as built, with its
// config hashes) under the canary's name, its pods labelled TrackCanary and selected by that
// label, with replicas pods and, when spec.canary.analysis.availableWithin is set, that as its
// progress deadline. It keeps no replica hand-over: the operator sets its count at every look.
func CanaryDeployment(app *examplev1.MyApp, stable *appsv1ac.DeploymentApplyConfiguration, plan *CanaryPlan, replicas int32) *appsv1ac.DeploymentApplyConfiguration {
	labels := Labels(app)
	labels[LabelTrack] = TrackCanary
	selector := SelectorLabels(app)
	selector[LabelTrack] = TrackCanary
	spec := *stable.Spec
	spec.Replicas = &replicas
	spec.Selector = metav1ac.LabelSelector().WithMatchLabels(selector)
	template := *spec.Template
	meta := *template.ObjectMetaApplyConfiguration
	meta.Labels = map[string]string{}
	for k, v := range template.Labels {
		meta.Labels[k] = v
	}
	meta.Labels[LabelTrack] = TrackCanary
	template.ObjectMetaApplyConfiguration = &meta
	spec.Template = &template
	if plan != nil && plan.AvailableWithin > 0 {
		minReady := valueOr(app.Spec.MinReadySeconds, DefaultMinReadySeconds)
		spec.WithMinReadySeconds(minReady).WithProgressDeadlineSeconds(plan.AvailableWithin)
	}
	return appsv1ac.Deployment(CanaryName(app), app.Namespace).
		WithLabels(labels).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(&spec)
}

// CanaryServices are the Services the HTTPRoute splits a canary's requests between: the stable
// pods' (the MyApp's selector and the pod-template-hash of the stable Deployment's current
// ReplicaSet, stableHash) and the canary's (the MyApp's selector and TrackCanary). They are the
// MyApp's Service otherwise, ports and all, as ClusterIP Services, labelled with their track.
func CanaryServices(app *examplev1.MyApp, stableHash string) (stableSvc, canarySvc *corev1ac.ServiceApplyConfiguration) {
	build := func(name, track string, extra map[string]string) *corev1ac.ServiceApplyConfiguration {
		base := Service(app, false)
		labels := Labels(app)
		labels[LabelTrack] = track
		selector := SelectorLabels(app)
		for k, v := range extra {
			selector[k] = v
		}
		spec := *base.Spec
		spec.WithType(corev1.ServiceTypeClusterIP)
		spec.Selector = selector
		return corev1ac.Service(name, app.Namespace).
			WithLabels(labels).
			WithOwnerReferences(ownerReference(app)).
			WithSpec(&spec)
	}
	return build(StableName(app), TrackStable, map[string]string{podTemplateHashLabel: stableHash}),
		build(CanaryName(app), TrackCanary, map[string]string{LabelTrack: TrackCanary})
}

// podTemplateHashLabel is the label the deployment controller gives the pods of each of its
// ReplicaSets (appsv1.DefaultDeploymentUniqueLabelKey).
const podTemplateHashLabel = "pod-template-hash"
