package v1

import "strconv"

// InitContainer is a container of the MyApp's pods beside the application's: an init
// container that runs to completion before the application starts, or, with restartPolicy
// Always, a sidecar, as Kubernetes runs them natively: started in order before the
// application's container, kept running beside it, and stopped after it. It runs with the
// same restricted security defaults as the application's container (no privilege
// escalation, all capabilities dropped) under the pod's security context.
// +kubebuilder:validation:XValidation:rule="has(self.restartPolicy) || !(has(self.readinessProbe) || has(self.livenessProbe) || has(self.startupProbe))",message="probes are for sidecars only (restartPolicy: Always): Kubernetes refuses them on an init container that runs to completion"
type InitContainer struct {
	// Name is the container's name in the pods: a DNS label, unique among the init
	// containers, and not app (the application's container).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="must be a DNS label: lower case letters, digits and '-'"
	// +kubebuilder:validation:XValidation:rule="self != 'app'",message="must not be app, the name of the application's container"
	// +required
	Name string `json:"name"`

	// Image is the container image to run, as spec.image.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?([.][a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*(:[0-9]+)?/)?[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*(:[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(@(sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128}))?$')",message="must be a valid image reference such as nginx:1.27 or registry.example.com/team/app@sha256:<64 lower-case hex digits>"
	// +required
	Image string `json:"image"`

	// RestartPolicy Always makes the container a sidecar: it starts before the application's
	// container (once its startup probe, if any, passes) and runs beside it for the pod's
	// life; the kubelet restarts it when it exits. Left out, the container runs once to
	// completion, and the next container starts only when it has exited with 0.
	// +kubebuilder:validation:Enum=Always
	// +optional
	RestartPolicy *string `json:"restartPolicy,omitempty"`

	// Command replaces the image's entrypoint. Not run in a shell.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	Command []string `json:"command,omitempty"`

	// Args replaces the image's command arguments.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	Args []string `json:"args,omitempty"`

	// Env are environment variables for the container, as spec.env (at most 32); a
	// resourceFieldRef selects a resource of this container.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Env []EnvVar `json:"env,omitempty"`

	// EnvFrom makes every key of a ConfigMap or Secret an environment variable of the
	// container, as spec.envFrom (at most 16).
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	EnvFrom []EnvFromSource `json:"envFrom,omitempty"`

	// Resources are the compute resources of the container. Requests must not exceed limits.
	// +optional
	Resources *ResourceRequirements `json:"resources,omitempty"`

	// VolumeMounts mount volumes of spec.volumes into the container, as spec.volumeMounts (at most
	// 16).
	// +listType=map
	// +listMapKey=mountPath
	// +kubebuilder:validation:MaxItems=16
	// +optional
	VolumeMounts []VolumeMount `json:"volumeMounts,omitempty"`

	// ReadinessProbe, for a sidecar only, counts in the pod's readiness.
	// +optional
	ReadinessProbe *SidecarProbe `json:"readinessProbe,omitempty"`

	// LivenessProbe, for a sidecar only, restarts it when it fails.
	// +kubebuilder:validation:XValidation:rule="!has(self.successThreshold) || self.successThreshold == 1",message="successThreshold must be 1 for a liveness probe",fieldPath=".successThreshold"
	// +optional
	LivenessProbe *SidecarProbe `json:"livenessProbe,omitempty"`

	// StartupProbe, for a sidecar only, holds the containers after it back until it passes.
	// +kubebuilder:validation:XValidation:rule="!has(self.successThreshold) || self.successThreshold == 1",message="successThreshold must be 1 for a startup probe",fieldPath=".successThreshold"
	// +optional
	StartupProbe *SidecarProbe `json:"startupProbe,omitempty"`
}

// IsSidecar tells whether the init container runs beside the application (restartPolicy
// Always) rather than to completion before it.
func (c *InitContainer) IsSidecar() bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == ContainerRestartPolicyAlways
}

// InitContainerField is the field path of the i-th init container, as errors and the status
// name it.
func InitContainerField(i int) string {
	return "spec.initContainers[" + strconv.Itoa(i) + "]"
}

// ContainerRestartPolicyAlways is the restart policy that makes an init container a sidecar.
const ContainerRestartPolicyAlways = "Always"

// SidecarProbe checks a sidecar as Probe checks the application's container, with exactly one
// handler, except that a port is a number and required: a sidecar has no port of the MyApp's
// to default to or to name. (A port number needs no rule, where a name would need one that
// costs a share of the CRD's CEL budget for each probe of each sidecar.)
// +kubebuilder:validation:XValidation:rule="[has(self.httpGet), has(self.tcpSocket), has(self.grpc), has(self.exec)].filter(x, x).size() == 1",message="exactly one of httpGet, tcpSocket, grpc and exec must be set"
type SidecarProbe struct {
	// HTTPGet passes when an HTTP GET of the path answers with a status from 200 to 399.
	// +optional
	HTTPGet *SidecarHTTPGet `json:"httpGet,omitempty"`

	// TCPSocket passes when the port accepts a TCP connection.
	// +optional
	TCPSocket *SidecarPort `json:"tcpSocket,omitempty"`

	// GRPC passes when the gRPC health checking protocol reports SERVING.
	// +optional
	GRPC *SidecarGRPC `json:"grpc,omitempty"`

	// Exec passes when the command, run in the container, exits with 0.
	// +optional
	Exec *ExecProbe `json:"exec,omitempty"`

	// InitialDelaySeconds, PeriodSeconds, TimeoutSeconds, SuccessThreshold and
	// FailureThreshold are as in Probe.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	InitialDelaySeconds *int32 `json:"initialDelaySeconds,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	PeriodSeconds *int32 `json:"periodSeconds,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	SuccessThreshold *int32 `json:"successThreshold,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	FailureThreshold *int32 `json:"failureThreshold,omitempty"`
}

// SidecarPort is the port of a sidecar's TCP probe.
type SidecarPort struct {
	// Port is the port number.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +required
	Port int32 `json:"port"`
}

// SidecarHTTPGet is an HTTP GET against a sidecar: HTTPGetProbe with a port number.
type SidecarHTTPGet struct {
	SidecarPort `json:",inline"`

	// Path, Scheme and HTTPHeaders are as in HTTPGetProbe.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="must start with '/'"
	// +optional
	Path string `json:"path,omitempty"`
	// +kubebuilder:validation:Enum=HTTP;HTTPS
	// +optional
	Scheme string `json:"scheme,omitempty"`
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	HTTPHeaders []HTTPHeader `json:"httpHeaders,omitempty"`
}

// SidecarGRPC is a gRPC health check of a sidecar: GRPCProbe with a port number.
type SidecarGRPC struct {
	SidecarPort `json:",inline"`

	// Service is as in GRPCProbe.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Service *string `json:"service,omitempty"`
}
