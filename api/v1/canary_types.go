package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Canary releases a new pod template to a share of the requests first, step by step, judges
// it at every step, and promotes it once every step passed, or aborts it at the first failed
// check (docs/spec/v1/myapps.md, "Canary releases").
//
// A canary starts when the spec asks for a pod template other than the one that serves
// (status.readyTemplate); the first release of a MyApp, with nothing serving yet, rolls out as
// without a canary. While it runs, the stable pods keep the serving template and are never
// restarted, and the new template runs in a Deployment of its own, <name>-canary. Through a
// Gateway (spec.expose.gateway), the HTTPRoute splits the requests exactly by the steps'
// weights between two Services, <name>-stable and <name>-canary; without one, the split is by
// pod counts: the canary gets about weight percent of the pods behind the MyApp's Service.
// Promotion moves every request to the canary's pods, rolls the stable Deployment to the new
// template, and moves the requests back once its pods are available. A new template pushed
// mid-canary starts the canary again at its first step.
//
// Manual controls are annotations: myapp.example.com/canary set to promote (skip the steps
// left), abort, pause or resume. A value acts once, when it changes: to give the same control
// again, add a suffix ("promote/2").
type Canary struct {
	// Steps are the canary's steps, in order, at most 20: each a weight (the percentage of
	// requests sent to the new template) or a pause. The weights must not decrease. After the
	// last step the canary is promoted.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.filter(s, has(s.setWeight)).map(s, s.setWeight).isSorted()",message="the weights of the steps must not decrease"
	// +listType=atomic
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Steps"
	Steps []CanaryStep `json:"steps"`

	// Analysis is how each step is judged, besides the operator's own judgement of the
	// canary's pods (they fail to pull, to start or keep crashing, as a rollout is rolled back
	// for): a deadline for the canary's pods to become available, and metric checks.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Analysis"
	Analysis *CanaryAnalysis `json:"analysis,omitempty"`
}

// CanaryStep is one step of a canary: a weight, or a pause.
// +kubebuilder:validation:XValidation:rule="has(self.setWeight) != has(self.pause)",message="a step is exactly one of setWeight and pause"
type CanaryStep struct {
	// SetWeight sends this percentage of the requests, 1 to 100, to the new template, once
	// its pods for that share are available. The step passes once the weight is in force.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Weight (%)",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	SetWeight *int32 `json:"setWeight,omitempty"`

	// Pause waits, keeping the weight and the analysis: for its duration, or, without one,
	// until the user resumes or promotes the canary.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pause"
	Pause *CanaryPause `json:"pause,omitempty"`
}

// CanaryPause is a pause step.
type CanaryPause struct {
	// Duration is how long the step waits, such as 30s, 5m or 1h30m, at most 24h. Left out,
	// the step waits until the user resumes or promotes the canary.
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(h|m|s))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('24h')",message="must be at most 24h"
	// +optional
	Duration *string `json:"duration,omitempty"`
}

// CanaryAnalysis is how the steps of a canary are judged.
type CanaryAnalysis struct {
	// AvailableWithin is how long the canary's pods have to become available, such as 5m, at
	// most 1h: the canary Deployment's progress deadline. A canary whose pods are not
	// available in time is aborted. Left out, the MyApp's progressDeadlineSeconds (600 s by
	// default).
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(h|m|s))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('1h')",message="must be between 1s and 1h"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Available within"
	AvailableWithin *string `json:"availableWithin,omitempty"`

	// Metrics are checks of the canary's metrics, at most 10, each a PromQL query evaluated
	// against the Prometheus the manager is told about (its --canary-prometheus-url flag) and
	// compared with a threshold. A MyApp with metric checks on a manager without a Prometheus
	// starts no canary and says so (CanaryAnalysisUnavailable).
	// +kubebuilder:validation:MaxItems=10
	// +listType=map
	// +listMapKey=name
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Metric checks"
	Metrics []CanaryMetric `json:"metrics,omitempty"`
}

// CanaryMetric is one metric check of a canary.
type CanaryMetric struct {
	// Name names the check in the status and in messages.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// Query is a PromQL instant query that returns one number: a scalar, or a vector of one
	// sample (aggregate with sum, for example). In it, the placeholders namespace and name,
	// each between double curly braces, stand for the MyApp's namespace and name, and canary
	// for the canary's Service, <name>-canary (docs/spec/v1/myapps.md). A query
	// that returns nothing, more than one sample, NaN or an infinity, or that Prometheus cannot
	// answer, cannot be evaluated (onError). The checks are measured only while the canary has a
	// weight: a canary nobody calls has nothing to measure.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +required
	Query string `json:"query"`

	// Condition is what a measurement must satisfy to pass.
	// +required
	Condition CanaryCondition `json:"condition"`

	// Interval is how often the check is measured, such as 30s (the default), between 5s and
	// 1h, from the start of each step.
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(h|m|s))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('5s') && duration(self) <= duration('1h')",message="must be between 5s and 1h"
	// +optional
	Interval *string `json:"interval,omitempty"`

	// FailureLimit is how many failed measurements the canary tolerates, 0 (the default) to
	// 100: one more aborts it.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	FailureLimit *int32 `json:"failureLimit,omitempty"`

	// OnError is what a measurement that cannot be taken does: Pause (the default) holds the
	// steps until one can be taken, and the MyApp is Degraded meanwhile; Abort counts it as a
	// failed measurement. It is never a pass.
	// +kubebuilder:validation:Enum=Pause;Abort
	// +optional
	OnError CanaryOnError `json:"onError,omitempty"`
}

// CanaryOnError is what a metric check does with a measurement that cannot be taken.
type CanaryOnError string

const (
	// CanaryOnErrorPause holds the steps until a measurement can be taken.
	CanaryOnErrorPause CanaryOnError = "Pause"
	// CanaryOnErrorAbort counts a measurement that cannot be taken as a failed one.
	CanaryOnErrorAbort CanaryOnError = "Abort"
)

// CanaryCondition compares a measurement with a threshold.
type CanaryCondition struct {
	// Operator compares the measurement (left) with the value (right): <, <=, > or >=.
	// +kubebuilder:validation:Enum="<";"<=";">";">="
	// +required
	Operator string `json:"operator"`

	// Value is the threshold, a decimal number such as "0.99", "500" or "1e-3" (an exponent of
	// at most two digits).
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^-?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]{1,2})?$`
	// +required
	Value string `json:"value"`
}

// CanaryControlAnnotation is the annotation of a MyApp's manual canary controls: promote,
// abort, pause or resume, optionally with a suffix after a slash. A value acts once, when it
// changes.
const CanaryControlAnnotation = "myapp.example.com/canary"

// CanaryStatus is where a canary release is, recorded before the operator acts on it.
type CanaryStatus struct {
	// Template is a digest (SHA-256, hex) of the pod template under test.
	// +kubebuilder:validation:MaxLength=64
	// +required
	Template string `json:"template"`

	// Stable is a digest of the pod template the stable pods keep until promotion.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Stable string `json:"stable,omitempty"`

	// ReconcileRequest is a digest of the reconcile-request annotation's value the canary runs
	// under; a new value starts an aborted canary again.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ReconcileRequest string `json:"reconcileRequest,omitempty"`

	// Phase is Progressing, Paused (waiting for the user), Promoting, Finishing (the stable
	// pods run the new template and take the requests back) or Aborted.
	// +kubebuilder:validation:Enum=Progressing;Paused;Promoting;Finishing;Aborted
	// +required
	Phase string `json:"phase"`

	// Step is the index of the current step, from 0; the number of steps once every step
	// passed.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=20
	// +required
	Step int32 `json:"step"`

	// Weight is the percentage of requests sent to the canary.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +required
	Weight int32 `json:"weight"`

	// Size is the share, in percent, the canary's pods are sized for: it rises before the
	// weight and falls only once a weight of 0 is in force.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +required
	Size int32 `json:"size"`

	// StableMoved says that the promotion gave the stable Deployment the new template, once
	// every request went to the canary's pods.
	// +optional
	StableMoved bool `json:"stableMoved,omitempty"`

	// StepStarted is when the current step (or phase) began.
	// +required
	StepStarted metav1.Time `json:"stepStarted"`

	// Control is a digest of the last manual control acted on.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Control string `json:"control,omitempty"`

	// Reason and Message say why an aborted canary was aborted, naming the step and the check.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Reason string `json:"reason,omitempty"`
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	Message string `json:"message,omitempty"`

	// Analysis holds what each metric check measured of the template under test.
	// +kubebuilder:validation:MaxItems=10
	// +listType=map
	// +listMapKey=name
	// +optional
	Analysis []CanaryCheckStatus `json:"analysis,omitempty"`
}

// CanaryCheckStatus is what one metric check measured of the template under test.
type CanaryCheckStatus struct {
	// Name is the check's.
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name"`

	// Measured, Failed and Errors count the measurements taken, those that failed the
	// condition, and those that could not be taken.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Measured int32 `json:"measured,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	Errors int32 `json:"errors,omitempty"`

	// LastTime is when the last measurement was taken or tried.
	// +optional
	LastTime *metav1.Time `json:"lastTime,omitempty"`

	// LastValue is the last value measured; LastError why the last measurement could not be
	// taken, empty when it was.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	LastValue string `json:"lastValue,omitempty"`
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	LastError string `json:"lastError,omitempty"`

	// FailedValue is the value of the last measurement that failed the condition, and Error
	// why the last measurement that could not be taken could not.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	FailedValue string `json:"failedValue,omitempty"`
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Error string `json:"error,omitempty"`
}
