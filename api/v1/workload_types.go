package v1

import (
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Probe checks the application's container, as a Pod's probe does, with exactly one handler:
// httpGet, tcpSocket, grpc or exec. Fields left out take the Kubernetes defaults (period 10 s,
// timeout 1 s, success threshold 1, failure threshold 3), and a port left out is the MyApp's
// port.
// +kubebuilder:validation:XValidation:rule="[has(self.httpGet), has(self.tcpSocket), has(self.grpc), has(self.exec)].filter(x, x).size() == 1",message="exactly one of httpGet, tcpSocket, grpc and exec must be set"
type Probe struct {
	// HTTPGet passes when an HTTP GET of the path answers with a status from 200 to 399.
	// +optional
	HTTPGet *HTTPGetProbe `json:"httpGet,omitempty"`

	// TCPSocket passes when the port accepts a TCP connection.
	// +optional
	TCPSocket *TCPSocketProbe `json:"tcpSocket,omitempty"`

	// GRPC passes when the gRPC health checking protocol reports SERVING.
	// +optional
	GRPC *GRPCProbe `json:"grpc,omitempty"`

	// Exec passes when the command, run in the container, exits with 0.
	// +optional
	Exec *ExecProbe `json:"exec,omitempty"`

	// InitialDelaySeconds is how long after the container starts the first probe runs.
	// Defaults to 0.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	InitialDelaySeconds *int32 `json:"initialDelaySeconds,omitempty"`

	// PeriodSeconds is how often the probe runs. Defaults to 10.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	PeriodSeconds *int32 `json:"periodSeconds,omitempty"`

	// TimeoutSeconds is how long one probe may take. Defaults to 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// SuccessThreshold is how many successes in a row count as passing after a failure.
	// Defaults to 1; liveness and startup probes accept only 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	SuccessThreshold *int32 `json:"successThreshold,omitempty"`

	// FailureThreshold is how many failures in a row count as failing. Defaults to 3.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	FailureThreshold *int32 `json:"failureThreshold,omitempty"`
}

// HTTPGetProbe is an HTTP GET against the container.
type HTTPGetProbe struct {
	// Path is the HTTP path to request, starting with '/'. Defaults to "/".
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="must start with '/'"
	// +optional
	Path string `json:"path,omitempty"`

	// Port is the port to request: a number, or the name of a port of the container, http
	// (the MyApp's port) or a name in spec.ports. Defaults to the MyApp's port.
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? (self >= 1 && self <= 65535) : size(self) <= 15",message="must be a port number from 1 to 65535 or the name of a port of the container: http (the MyApp's port) or a name in spec.ports"
	// +optional
	Port *intstr.IntOrString `json:"port,omitempty"`

	// Scheme is HTTP or HTTPS (the certificate is not verified). Defaults to HTTP.
	// +kubebuilder:validation:Enum=HTTP;HTTPS
	// +optional
	Scheme string `json:"scheme,omitempty"`

	// HTTPHeaders are extra headers to send.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	HTTPHeaders []HTTPHeader `json:"httpHeaders,omitempty"`
}

// HTTPHeader is one header of an HTTP probe.
type HTTPHeader struct {
	// Name is the header's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-A-Za-z0-9]+$')",message="must be a valid HTTP header name: letters, digits and '-', as Kubernetes accepts"
	// +required
	Name string `json:"name"`

	// Value is the header's value.
	// +kubebuilder:validation:MaxLength=4096
	// +required
	Value string `json:"value"`
}

// TCPSocketProbe is a TCP connection to the container.
type TCPSocketProbe struct {
	// Port is the port to connect to: a number, or the name of a port of the container, http
	// (the MyApp's port) or a name in spec.ports. Defaults to the MyApp's port.
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? (self >= 1 && self <= 65535) : size(self) <= 15",message="must be a port number from 1 to 65535 or the name of a port of the container: http (the MyApp's port) or a name in spec.ports"
	// +optional
	Port *intstr.IntOrString `json:"port,omitempty"`
}

// GRPCProbe is a call of the gRPC health checking protocol.
type GRPCProbe struct {
	// Port is the container port of the gRPC server. Defaults to the MyApp's port.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port *int32 `json:"port,omitempty"`

	// Service is the service name sent in the health check request. Defaults to "" (the
	// server's overall health).
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Service *string `json:"service,omitempty"`
}

// ExecProbe runs a command in the container.
type ExecProbe struct {
	// Command is the command line, not run in a shell: the first item is the executable.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +required
	Command []string `json:"command"`
}

// Lifecycle holds the hooks of the application's container.
type Lifecycle struct {
	// PreStop runs when a pod is to stop, before its container gets SIGTERM.
	// +optional
	PreStop *LifecycleHandler `json:"preStop,omitempty"`
}

// LifecycleHandler is what a hook does: exactly one of exec, httpGet and sleep.
// +kubebuilder:validation:XValidation:rule="(has(self.exec) ? 1 : 0) + (has(self.httpGet) ? 1 : 0) + (has(self.sleep) ? 1 : 0) == 1",message="exactly one of exec, httpGet and sleep must be set"
type LifecycleHandler struct {
	// Exec runs a command in the container.
	// +optional
	Exec *ExecProbe `json:"exec,omitempty"`

	// HTTPGet sends an HTTP GET to the container (path "/" and the MyApp's port by default).
	// +optional
	HTTPGet *HTTPGetProbe `json:"httpGet,omitempty"`

	// Sleep waits, without needing a shell or a sleep binary in the image.
	// +optional
	Sleep *SleepAction `json:"sleep,omitempty"`
}

// SleepAction waits for a number of seconds.
type SleepAction struct {
	// Seconds is how long to wait: from 0 to terminationGracePeriodSeconds.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +required
	Seconds int64 `json:"seconds"`
}

// RollingUpdate controls how a new pod template replaces the old pods. Each value is a number
// of pods or a percentage of the replicas ("25%"); they must not both be 0, however written
// (0, "0%", "00%"). Left out, each takes the Deployment default of 25%.
// +kubebuilder:validation:XValidation:rule="!has(self.maxSurge) || !has(self.maxUnavailable) || !((type(self.maxSurge) == int ? self.maxSurge == 0 : self.maxSurge.matches('^0+%$')) && (type(self.maxUnavailable) == int ? self.maxUnavailable == 0 : self.maxUnavailable.matches('^0+%$')))",message="maxSurge and maxUnavailable must not both be 0",fieldPath=".maxUnavailable"
type RollingUpdate struct {
	// MaxSurge is how many pods may run above the desired count during a rollout.
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 && self <= 2147483647 : self.matches('^0*[0-9]{1,10}%$') && int(self.replace('%', '')) <= 2147483647",message="must be a number from 0 to 2147483647 or a percentage such as 25%"
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// MaxUnavailable is how many of the desired pods may be unavailable during a rollout.
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 && self <= 2147483647 : self.matches('^0*[0-9]{1,3}%$') && int(self.replace('%', '')) <= 100",message="must be a number from 0 to 2147483647 or a percentage from 0% to 100%"
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// PodDisruptionBudgetSpec asks for a PodDisruptionBudget that limits voluntary disruptions
// (node drains, evictions) of the application's pods. Exactly one of minAvailable and
// maxUnavailable is set, as a number of pods or a percentage.
// +kubebuilder:validation:XValidation:rule="has(self.minAvailable) != has(self.maxUnavailable)",message="exactly one of minAvailable and maxUnavailable must be set"
type PodDisruptionBudgetSpec struct {
	// MinAvailable is how many pods must stay available during a disruption.
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 && self <= 2147483647 : self.matches('^0*[0-9]{1,3}%$') && int(self.replace('%', '')) <= 100",message="must be a number from 0 to 2147483647 or a percentage from 0% to 100%"
	// +optional
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`

	// MaxUnavailable is how many pods may be unavailable during a disruption.
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 && self <= 2147483647 : self.matches('^0*[0-9]{1,3}%$') && int(self.replace('%', '')) <= 100",message="must be a number from 0 to 2147483647 or a percentage from 0% to 100%"
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// LocalObjectReference names an object in the MyApp's namespace.
type LocalObjectReference struct {
	// Name is the object's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be a valid object name: lower case letters, digits, '-' and '.'"
	// +required
	Name string `json:"name"`
}
