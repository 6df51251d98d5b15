package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServiceType is how the MyApp's Service is exposed.
// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
type ServiceType string

// The service types a MyApp may ask for.
const (
	ServiceTypeClusterIP    ServiceType = "ClusterIP"
	ServiceTypeNodePort     ServiceType = "NodePort"
	ServiceTypeLoadBalancer ServiceType = "LoadBalancer"
)

// MyAppSpec is the desired state of a stateless application: one container image run by a
// Deployment, exposed by a Service, and optionally scaled by a HorizontalPodAutoscaler.
type MyAppSpec struct {
	// Replicas is the number of pods to run while autoscaling is disabled. While autoscaling
	// is enabled the HorizontalPodAutoscaler decides the number of pods and this field is
	// ignored.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}
	Replicas *int32 `json:"replicas,omitempty"`

	// Image is the container image to run, as a registry reference such as "nginx:1.27" or
	// "registry.example.com:5000/team/app@sha256:<hex digest>".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?([.][a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*(:[0-9]+)?/)?[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*(:[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(@[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$')",message="must be a valid image reference such as nginx:1.27 or registry.example.com/team/app@sha256:<hex digest>"
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Image",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Image string `json:"image"`

	// Port is the TCP port the container listens on; the Service exposes the same port.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=8080
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Port",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	Port *int32 `json:"port,omitempty"`

	// Resources are the compute resources of the container. Requests must not exceed limits.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Resources",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:resourceRequirements"}
	Resources *ResourceRequirements `json:"resources,omitempty"`

	// Env are environment variables for the container, each with a literal value or a value
	// taken from a Secret or ConfigMap key. Names are unique.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Environment variables"
	Env []EnvVar `json:"env,omitempty"`

	// ServiceType is how the Service is exposed: ClusterIP, NodePort or LoadBalancer.
	// +kubebuilder:default=ClusterIP
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Service type",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:ClusterIP","urn:alm:descriptor:com.tectonic.ui:select:NodePort","urn:alm:descriptor:com.tectonic.ui:select:LoadBalancer"}
	ServiceType ServiceType `json:"serviceType,omitempty"`

	// AutoScaling lets a HorizontalPodAutoscaler scale the Deployment on CPU utilisation.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Autoscaling"
	AutoScaling *AutoScalingSpec `json:"autoScaling,omitempty"`
}

// ResourceRequirements are the compute resources of the application's container.
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || !has(self.requests.cpu) || !has(self.limits.cpu) || !isQuantity(self.requests.cpu) || !isQuantity(self.limits.cpu) || quantity(self.requests.cpu).compareTo(quantity(self.limits.cpu)) <= 0",message="must not exceed limits.cpu",fieldPath=".requests.cpu"
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || !has(self.requests.memory) || !has(self.limits.memory) || !isQuantity(self.requests.memory) || !isQuantity(self.limits.memory) || quantity(self.requests.memory).compareTo(quantity(self.limits.memory)) <= 0",message="must not exceed limits.memory",fieldPath=".requests.memory"
type ResourceRequirements struct {
	// Limits are the most the container may use.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Limits"
	Limits *ResourceList `json:"limits,omitempty"`

	// Requests are what the scheduler reserves for the container.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Requests"
	Requests *ResourceList `json:"requests,omitempty"`
}

// ResourceList is an amount of CPU and memory, each a Kubernetes quantity.
type ResourceList struct {
	// CPU is a quantity of CPU such as "500m" or "2".
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isQuantity(self) && quantity(self).compareTo(quantity('0')) >= 0",message="must be a non-negative Kubernetes quantity such as 500m or 2"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="CPU"
	CPU string `json:"cpu,omitempty"`

	// Memory is a quantity of memory such as "256Mi" or "1Gi".
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isQuantity(self) && quantity(self).compareTo(quantity('0')) >= 0",message="must be a non-negative Kubernetes quantity such as 256Mi or 1Gi"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Memory"
	Memory string `json:"memory,omitempty"`
}

// EnvVar is one environment variable of the container. Exactly one of value and valueFrom
// may be set; with neither, the variable is set to the empty string.
// +kubebuilder:validation:XValidation:rule="!(has(self.value) && has(self.valueFrom))",message="value and valueFrom are mutually exclusive"
type EnvVar struct {
	// Name is the variable's name: letters, digits, '_', '-' and '.', not starting with a digit.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-._a-zA-Z][-._a-zA-Z0-9]*$')",message="must be a valid environment variable name: letters, digits, '_', '-' and '.', not starting with a digit"
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Name",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Name string `json:"name"`

	// Value is the variable's literal value.
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Value",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Value *string `json:"value,omitempty"`

	// ValueFrom takes the variable's value from a key of a Secret or a ConfigMap.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Value from"
	ValueFrom *EnvVarSource `json:"valueFrom,omitempty"`
}

// EnvVarSource names the key of a Secret or a ConfigMap in the MyApp's namespace; exactly
// one of the two is set.
// +kubebuilder:validation:XValidation:rule="has(self.secretKeyRef) != has(self.configMapKeyRef)",message="exactly one of secretKeyRef and configMapKeyRef must be set"
type EnvVarSource struct {
	// SecretKeyRef selects a key of a Secret.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Secret key"
	SecretKeyRef *KeySelector `json:"secretKeyRef,omitempty"`

	// ConfigMapKeyRef selects a key of a ConfigMap.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="ConfigMap key"
	ConfigMapKeyRef *KeySelector `json:"configMapKeyRef,omitempty"`
}

// KeySelector names one key of a Secret or ConfigMap.
type KeySelector struct {
	// Name is the name of the Secret or ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be a valid object name: lower case letters, digits, '-' and '.'"
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Name",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Name string `json:"name"`

	// Key is the key within the Secret or ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-._a-zA-Z0-9]+$')",message="must be a valid key: letters, digits, '-', '_' and '.'"
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Key",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Key string `json:"key"`
}

// AutoScalingSpec configures a HorizontalPodAutoscaler for the application.
// +kubebuilder:validation:XValidation:rule="!self.enabled || has(self.maxReplicas)",message="is required when autoscaling is enabled",fieldPath=".maxReplicas"
// +kubebuilder:validation:XValidation:rule="!has(self.maxReplicas) || !has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="must not exceed maxReplicas",fieldPath=".minReplicas"
type AutoScalingSpec struct {
	// Enabled turns autoscaling on. While on, the HorizontalPodAutoscaler owns the number
	// of replicas and spec.replicas is ignored.
	// +kubebuilder:default=false
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Enabled",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch"}
	Enabled bool `json:"enabled"`

	// MinReplicas is the fewest pods the autoscaler keeps.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Minimum replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the most pods the autoscaler may run; required when enabled.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Maximum replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`

	// TargetCPUUtilizationPercentage is the average CPU utilisation, as a percentage of the
	// CPU request, that the autoscaler aims for.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=80
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Target CPU utilisation (%)",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`
}

// Condition types a MyApp reports.
const (
	// ConditionReady is True when the Deployment for the MyApp's current generation is
	// fully rolled out and all its replicas are available.
	ConditionReady = "Ready"
	// ConditionProgressing is True while a rollout is under way.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when something the operator cannot fix by itself stands in
	// the way: the reason says what.
	ConditionDegraded = "Degraded"
)

// MyAppStatus is the observed state of a MyApp.
type MyAppStatus struct {
	// ObservedGeneration is the generation of the spec the status was computed for.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Observed generation"
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are Ready, Progressing and Degraded, each with a stable reason.
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors={"urn:alm:descriptor:io.kubernetes.conditions"}
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ReadyReplicas is the number of the Deployment's pods that are ready.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Ready replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// AvailableReplicas is the number of the Deployment's pods that are available.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Available replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// Selector is the label selector of the MyApp's pods, for the scale subresource.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Selector",xDescriptors={"urn:alm:descriptor:io.kubernetes.selector"}
	Selector string `json:"selector,omitempty"`

	// LastUpdateTime is when any other field of the status last changed.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last update time"
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
}

// MyApp runs a stateless application: a Deployment, a Service and, while autoscaling is
// enabled, a HorizontalPodAutoscaler, all named after the MyApp and owned by it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.readyReplicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=ma,categories=all
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 63",message="metadata.name must be at most 63 lower case letters, digits and '-', starting with a letter and ending with a letter or digit, because it also names the MyApp's Service"
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +operator-sdk:csv:customresourcedefinitions:displayName="MyApp",resources={{Deployment,v1},{Service,v1},{HorizontalPodAutoscaler,v2}}
type MyApp struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the application.
	// +required
	Spec MyAppSpec `json:"spec"`

	// status is the state the operator observed.
	// +optional
	Status MyAppStatus `json:"status,omitempty"`
}

// MyAppList is a list of MyApps.
// +kubebuilder:object:root=true
type MyAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MyApp `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MyApp{}, &MyAppList{})
}
