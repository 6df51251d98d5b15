package v1

import (
	corev1 "k8s.io/api/core/v1"
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
// +kubebuilder:validation:XValidation:rule="!has(self.lifecycle) || !has(self.lifecycle.preStop) || !has(self.lifecycle.preStop.sleep) || self.lifecycle.preStop.sleep.seconds <= (has(self.terminationGracePeriodSeconds) ? self.terminationGracePeriodSeconds : 30)",message="the preStop sleep must not exceed terminationGracePeriodSeconds (30 when left out)",fieldPath=".lifecycle.preStop.sleep.seconds"
// +kubebuilder:validation:XValidation:rule="!has(self.volumeMounts) || self.volumeMounts.all(m, has(self.volumes) && self.volumes.exists(v, v.name == m.name))",message="every mount must name a volume of spec.volumes",fieldPath=".volumeMounts"
// +kubebuilder:validation:XValidation:rule="!has(self.initContainers) || self.initContainers.all(c, !has(c.volumeMounts) || c.volumeMounts.all(m, has(self.volumes) && self.volumes.exists(v, v.name == m.name)))",message="every mount of an init container must name a volume of spec.volumes",fieldPath=".initContainers"
// +kubebuilder:validation:XValidation:rule="!has(self.files) || !has(self.volumeMounts) || self.files.all(f, self.volumeMounts.all(m, f.path != m.mountPath && !f.path.startsWith(m.mountPath + '/') && !m.mountPath.startsWith(f.path + '/')))",message="a file must not be at or inside the path of a volume mount, nor be a directory of one",fieldPath=".files"
// +kubebuilder:validation:XValidation:rule="!has(self.progressDeadlineSeconds) || self.progressDeadlineSeconds > (has(self.minReadySeconds) ? self.minReadySeconds : 0)",message="must exceed minReadySeconds",fieldPath=".progressDeadlineSeconds"
// +kubebuilder:validation:XValidation:rule="!has(self.canary) || !has(self.canary.analysis) || !has(self.canary.analysis.availableWithin) || duration(self.canary.analysis.availableWithin).getSeconds() > (has(self.minReadySeconds) ? self.minReadySeconds : 0)",message="must exceed minReadySeconds: it is the canary Deployment's progress deadline",fieldPath=".canary.analysis.availableWithin"
// +kubebuilder:validation:XValidation:rule="!has(self.minReadySeconds) || has(self.progressDeadlineSeconds) || self.minReadySeconds < 600",message="must be less than progressDeadlineSeconds (600 when left out)",fieldPath=".minReadySeconds"
// +kubebuilder:validation:XValidation:rule="!has(self.readinessProbe) || !has(self.readinessProbe.httpGet) || !has(self.readinessProbe.httpGet.port) || type(self.readinessProbe.httpGet.port) == int || self.readinessProbe.httpGet.port == 'http' || (has(self.ports) && self.ports.exists(p, p.name == self.readinessProbe.httpGet.port && (!has(p.protocol) || p.protocol == 'TCP')))",message="must name a TCP port of the container: http (the MyApp's port) or a TCP port in spec.ports; the kubelet probes over TCP",fieldPath=".readinessProbe.httpGet.port"
// +kubebuilder:validation:XValidation:rule="!has(self.readinessProbe) || !has(self.readinessProbe.tcpSocket) || !has(self.readinessProbe.tcpSocket.port) || type(self.readinessProbe.tcpSocket.port) == int || self.readinessProbe.tcpSocket.port == 'http' || (has(self.ports) && self.ports.exists(p, p.name == self.readinessProbe.tcpSocket.port && (!has(p.protocol) || p.protocol == 'TCP')))",message="must name a TCP port of the container: http (the MyApp's port) or a TCP port in spec.ports; the kubelet probes over TCP",fieldPath=".readinessProbe.tcpSocket.port"
// +kubebuilder:validation:XValidation:rule="!has(self.livenessProbe) || !has(self.livenessProbe.httpGet) || !has(self.livenessProbe.httpGet.port) || type(self.livenessProbe.httpGet.port) == int || self.livenessProbe.httpGet.port == 'http' || (has(self.ports) && self.ports.exists(p, p.name == self.livenessProbe.httpGet.port && (!has(p.protocol) || p.protocol == 'TCP')))",message="must name a TCP port of the container: http (the MyApp's port) or a TCP port in spec.ports; the kubelet probes over TCP",fieldPath=".livenessProbe.httpGet.port"
// +kubebuilder:validation:XValidation:rule="!has(self.livenessProbe) || !has(self.livenessProbe.tcpSocket) || !has(self.livenessProbe.tcpSocket.port) || type(self.livenessProbe.tcpSocket.port) == int || self.livenessProbe.tcpSocket.port == 'http' || (has(self.ports) && self.ports.exists(p, p.name == self.livenessProbe.tcpSocket.port && (!has(p.protocol) || p.protocol == 'TCP')))",message="must name a TCP port of the container: http (the MyApp's port) or a TCP port in spec.ports; the kubelet probes over TCP",fieldPath=".livenessProbe.tcpSocket.port"
// +kubebuilder:validation:XValidation:rule="!has(self.startupProbe) || !has(self.startupProbe.httpGet) || !has(self.startupProbe.httpGet.port) || type(self.startupProbe.httpGet.port) == int || self.startupProbe.httpGet.port == 'http' || (has(self.ports) && self.ports.exists(p, p.name == self.startupProbe.httpGet.port && (!has(p.protocol) || p.protocol == 'TCP')))",message="must name a TCP port of the container: http (the MyApp's port) or a TCP port in spec.ports; the kubelet probes over TCP",fieldPath=".startupProbe.httpGet.port"
// +kubebuilder:validation:XValidation:rule="!has(self.startupProbe) || !has(self.startupProbe.tcpSocket) || !has(self.startupProbe.tcpSocket.port) || type(self.startupProbe.tcpSocket.port) == int || self.startupProbe.tcpSocket.port == 'http' || (has(self.ports) && self.ports.exists(p, p.name == self.startupProbe.tcpSocket.port && (!has(p.protocol) || p.protocol == 'TCP')))",message="must name a TCP port of the container: http (the MyApp's port) or a TCP port in spec.ports; the kubelet probes over TCP",fieldPath=".startupProbe.tcpSocket.port"
// +kubebuilder:validation:XValidation:rule="!has(self.lifecycle) || !has(self.lifecycle.preStop) || !has(self.lifecycle.preStop.httpGet) || !has(self.lifecycle.preStop.httpGet.port) || type(self.lifecycle.preStop.httpGet.port) == int || self.lifecycle.preStop.httpGet.port == 'http' || (has(self.ports) && self.ports.exists(p, p.name == self.lifecycle.preStop.httpGet.port && (!has(p.protocol) || p.protocol == 'TCP')))",message="must name a TCP port of the container: http (the MyApp's port) or a TCP port in spec.ports; the kubelet probes over TCP",fieldPath=".lifecycle.preStop.httpGet.port"
// +kubebuilder:validation:XValidation:rule="!has(self.ports) || self.ports.all(p, p.port != (has(self.port) ? self.port : 8080) || (has(p.protocol) && p.protocol != 'TCP'))",message="a TCP port must not be spec.port, which is the container's port http already",fieldPath=".ports"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || !has(self.metrics.portName) || self.metrics.portName == 'http' || (has(self.ports) && self.ports.exists(p, p.name == self.metrics.portName && (!has(p.protocol) || p.protocol == 'TCP')))",message="must be http (the MyApp's port) or the name of a TCP port in spec.ports",fieldPath=".metrics.portName"
// +kubebuilder:validation:XValidation:rule="!has(self.expose) || !has(self.expose.portName) || self.expose.portName == 'http' || (has(self.ports) && self.ports.exists(p, p.name == self.expose.portName && (!has(p.protocol) || p.protocol == 'TCP')))",message="must be http (the MyApp's port) or the name of a TCP port in spec.ports",fieldPath=".expose.portName"
type MyAppSpec struct {
	// Replicas is the number of pods to run while autoscaling is disabled; 0 scales the
	// application to zero (the MyApp is then Ready with 0 of 0 pods). While autoscaling is
	// enabled the HorizontalPodAutoscaler decides the number of pods and this field is
	// ignored; when autoscaling is turned off with replicas at 1, the Deployment keeps the
	// autoscaler's count (and a hand scale is put back to it) until replicas changes.
	// Defaults to 1.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +kubebuilder:default=1
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}
	Replicas *int32 `json:"replicas,omitempty"`

	// Image is the container image to run, as a registry reference such as
	// "nginxinc/nginx-unprivileged:1.27" or
	// "registry.example.com:5000/team/app@sha256:<64 lower-case hex digits>". A digest must be
	// one the container runtime can verify: sha256 (64 hex digits), sha384 (96) or sha512
	// (128), in lower case.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?([.][a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*(:[0-9]+)?/)?[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*(:[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(@(sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128}))?$')",message="must be a valid image reference such as nginx:1.27 or registry.example.com/team/app@sha256:<64 lower-case hex digits>"
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Image",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Image string `json:"image"`

	// Port is the TCP port the container listens on; the Service exposes the same port, and
	// the default readiness probe checks that it accepts connections. Defaults to 8080.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=8080
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Port",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	Port *int32 `json:"port,omitempty"`

	// Ports are the container's ports beside port (which is named http), at most 16, each
	// also on the Service under the same name and number. A probe may name one, and
	// expose.portName may send the route or Ingress to a TCP one.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(p, self.exists_one(q, q.port == p.port && (has(q.protocol) ? q.protocol : 'TCP') == (has(p.protocol) ? p.protocol : 'TCP')))",message="each port number must appear once per protocol: the Service takes each once"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Ports"
	Ports []ContainerPort `json:"ports,omitempty"`

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

	// EnvFrom makes every key of a ConfigMap or Secret in the MyApp's namespace an
	// environment variable of the container, each source's names optionally behind a prefix.
	// A variable of env wins over one of the same name from here; of two sources, the later
	// one wins. The kubelet skips a key that is not a valid variable name, with an event.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Environment from ConfigMaps and Secrets"
	EnvFrom []EnvFromSource `json:"envFrom,omitempty"`

	// Volumes are volumes the pods may mount: a ConfigMap, a Secret, an emptyDir or a
	// PersistentVolumeClaim of the MyApp's namespace, each in the core shape. Names are unique
	// DNS labels; at most 32.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Volumes"
	Volumes []Volume `json:"volumes,omitempty"`

	// Files are text files for the container, each mounted read-only at its path. The
	// operator writes them into an immutable ConfigMap it owns, named by a hash of their
	// contents: a change of a file rolls the pods out like a change of image, and the
	// ReplicaSets of earlier templates keep the ConfigMaps they mount, so that a rollback of
	// the Deployment brings its files back. A files ConfigMap is deleted once no ReplicaSet
	// of the MyApp mounts it. At most 32 files, of at most 1000 KiB together.
	// +listType=map
	// +listMapKey=path
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.map(f, size(bytes(f.content))).sum() <= 1024000",message="the contents of all files together must not exceed 1000 KiB in UTF-8, which leaves room for their names in a ConfigMap's 1 MiB"
	// +kubebuilder:validation:XValidation:rule="self.all(f, self.all(g, !g.path.startsWith(f.path + '/')))",message="a file's path must not be a directory of another file's path"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Files"
	Files []File `json:"files,omitempty"`

	// VolumeMounts mount volumes of spec.volumes into the container, each at an absolute
	// path of its own; at most 32.
	// +listType=map
	// +listMapKey=mountPath
	// +kubebuilder:validation:MaxItems=32
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Volume mounts"
	VolumeMounts []VolumeMount `json:"volumeMounts,omitempty"`

	// InitContainers run in the pods beside the application's container, in order: each
	// either to completion before the application starts, or, with restartPolicy Always, as
	// a sidecar started before it and running beside it. The status and the auto-pilot read
	// them as they read the application's container: one that cannot pull its image, cannot
	// be created or crash-loops blocks a rollout, named in the message, and a rollout it
	// fails is rolled back. At most 8, names unique.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Init containers and sidecars"
	InitContainers []InitContainer `json:"initContainers,omitempty"`

	// ServiceType is how the Service is exposed: ClusterIP, NodePort or LoadBalancer.
	// Defaults to ClusterIP.
	// +kubebuilder:default=ClusterIP
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Service type",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:ClusterIP","urn:alm:descriptor:com.tectonic.ui:select:NodePort","urn:alm:descriptor:com.tectonic.ui:select:LoadBalancer"}
	ServiceType ServiceType `json:"serviceType,omitempty"`

	// AutoScaling lets a HorizontalPodAutoscaler scale the Deployment on CPU utilisation,
	// memory utilisation or both, at the pace its behavior allows.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Autoscaling"
	AutoScaling *AutoScalingSpec `json:"autoScaling,omitempty"`

	// Command replaces the image's entrypoint. Not run in a shell.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Command"
	Command []string `json:"command,omitempty"`

	// Args replaces the image's command arguments.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Arguments"
	Args []string `json:"args,omitempty"`

	// ReadinessProbe decides when a pod receives traffic and counts as ready. Defaults to a
	// TCP check of the MyApp's port, so that Ready means "accepting connections".
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Readiness probe"
	ReadinessProbe *Probe `json:"readinessProbe,omitempty"`

	// LivenessProbe restarts the container when it fails. Defaults to none.
	// +kubebuilder:validation:XValidation:rule="!has(self.successThreshold) || self.successThreshold == 1",message="successThreshold must be 1 for a liveness probe",fieldPath=".successThreshold"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Liveness probe"
	LivenessProbe *Probe `json:"livenessProbe,omitempty"`

	// StartupProbe holds the other probes back until it passes once, for slow starters.
	// Defaults to none.
	// +kubebuilder:validation:XValidation:rule="!has(self.successThreshold) || self.successThreshold == 1",message="successThreshold must be 1 for a startup probe",fieldPath=".successThreshold"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Startup probe"
	StartupProbe *Probe `json:"startupProbe,omitempty"`

	// SecurityContext is the container's security context. Fields left out take the
	// defaults of the "restricted" Pod Security Standard: allowPrivilegeEscalation false
	// and capabilities {drop: [ALL]} (a capabilities field given here replaces that default
	// whole). Set a field to override its default. A privileged container, or one that adds
	// CAP_SYS_ADMIN, gets no allowPrivilegeEscalation default: Kubernetes refuses
	// allowPrivilegeEscalation false beside either.
	// +kubebuilder:validation:XValidation:rule="!has(self.allowPrivilegeEscalation) || self.allowPrivilegeEscalation || !((has(self.privileged) && self.privileged) || (has(self.capabilities) && has(self.capabilities.add) && self.capabilities.add.exists(c, c == 'CAP_SYS_ADMIN')))",message="allowPrivilegeEscalation must not be false for a privileged container or one that adds CAP_SYS_ADMIN: Kubernetes refuses such a pod"
	// +kubebuilder:validation:XValidation:rule="!has(self.runAsUser) || (self.runAsUser >= 0 && self.runAsUser <= 2147483647)",message="must be from 0 to 2147483647",fieldPath=".runAsUser"
	// +kubebuilder:validation:XValidation:rule="!has(self.runAsGroup) || (self.runAsGroup >= 0 && self.runAsGroup <= 2147483647)",message="must be from 0 to 2147483647",fieldPath=".runAsGroup"
	// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || self.seccompProfile.type in ['RuntimeDefault', 'Unconfined', 'Localhost']",message="type must be RuntimeDefault, Unconfined or Localhost",fieldPath=".seccompProfile.type"
	// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || (self.seccompProfile.type == 'Localhost') == has(self.seccompProfile.localhostProfile)",message="localhostProfile must be set when, and only when, type is Localhost",fieldPath=".seccompProfile"
	// +kubebuilder:validation:XValidation:rule="!has(self.appArmorProfile) || self.appArmorProfile.type in ['RuntimeDefault', 'Unconfined', 'Localhost']",message="type must be RuntimeDefault, Unconfined or Localhost",fieldPath=".appArmorProfile.type"
	// +kubebuilder:validation:XValidation:rule="!has(self.appArmorProfile) || (self.appArmorProfile.type == 'Localhost') == has(self.appArmorProfile.localhostProfile)",message="localhostProfile must be set when, and only when, type is Localhost",fieldPath=".appArmorProfile"
	// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || !has(self.seccompProfile.localhostProfile) || (self.seccompProfile.localhostProfile != '' && !self.seccompProfile.localhostProfile.startsWith('/') && !self.seccompProfile.localhostProfile.matches('(^|/)[.][.](/|$)'))",message="localhostProfile must be a relative path without '..'",fieldPath=".seccompProfile.localhostProfile"
	// +kubebuilder:validation:XValidation:rule="!has(self.procMount) || self.procMount == 'Default'",message="must be Default: Unmasked needs hostUsers false, which a MyApp does not set",fieldPath=".procMount"
	// +kubebuilder:validation:XValidation:rule="!has(self.windowsOptions) || !has(self.windowsOptions.hostProcess) || !self.windowsOptions.hostProcess",message="hostProcess must not be true: a Windows host process pod needs hostNetwork, which a MyApp does not set",fieldPath=".windowsOptions.hostProcess"
	// +kubebuilder:validation:XValidation:rule="!has(self.windowsOptions) || !has(self.windowsOptions.gmsaCredentialSpecName) || (size(self.windowsOptions.gmsaCredentialSpecName) <= 253 && self.windowsOptions.gmsaCredentialSpecName.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'))",message="must be a valid object name: lower case letters, digits, '-' and '.'",fieldPath=".windowsOptions.gmsaCredentialSpecName"
	// +kubebuilder:validation:XValidation:rule="!has(self.windowsOptions) || !has(self.windowsOptions.gmsaCredentialSpec) || (size(bytes(self.windowsOptions.gmsaCredentialSpec)) >= 1 && size(bytes(self.windowsOptions.gmsaCredentialSpec)) <= 65536)",message="must not be empty and must be at most 64 KiB",fieldPath=".windowsOptions.gmsaCredentialSpec"
	// +kubebuilder:validation:XValidation:rule=`!has(self.windowsOptions) || !has(self.windowsOptions.runAsUserName) || (size(self.windowsOptions.runAsUserName) >= 1 && !self.windowsOptions.runAsUserName.matches('[[:cntrl:]]') && self.windowsOptions.runAsUserName.indexOf('\\') == self.windowsOptions.runAsUserName.lastIndexOf('\\') && self.windowsOptions.runAsUserName.indexOf('\\') < 256)`,message="must not be empty, hold control characters or more than one backslash, and a domain before the backslash has at most 255 characters",fieldPath=".windowsOptions.runAsUserName"
	// +kubebuilder:validation:XValidation:rule=`!has(self.windowsOptions) || !has(self.windowsOptions.runAsUserName) || self.windowsOptions.runAsUserName.indexOf('\\') < 0 || (self.windowsOptions.runAsUserName.lowerAscii().matches(r'^([^/:*?"<>|\\.][^/:*?"<>|\\]{0,14}|([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?[.])*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)\\'))`,message="the domain before the backslash must be a NetBIOS or a DNS name",fieldPath=".windowsOptions.runAsUserName"
	// +kubebuilder:validation:XValidation:rule=`!has(self.windowsOptions) || !has(self.windowsOptions.runAsUserName) || (size(bytes(self.windowsOptions.runAsUserName.substring(self.windowsOptions.runAsUserName.lastIndexOf('\\') + 1))) >= 1 && size(bytes(self.windowsOptions.runAsUserName.substring(self.windowsOptions.runAsUserName.lastIndexOf('\\') + 1))) <= 104 && !self.windowsOptions.runAsUserName.substring(self.windowsOptions.runAsUserName.lastIndexOf('\\') + 1).matches('^[. ]+$') && !self.windowsOptions.runAsUserName.substring(self.windowsOptions.runAsUserName.lastIndexOf('\\') + 1).matches(r'["/\x5c:;|=,+*?<>@\x5b\x5d]'))`,message="the user name must have 1 to 104 bytes, not only periods or spaces, and none of \"/\\:;|=,+*?<>@[]",fieldPath=".windowsOptions.runAsUserName"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Container security context"
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// PodSecurityContext is the pod's security context. Fields left out take the defaults of
	// the "restricted" Pod Security Standard: runAsNonRoot true and seccompProfile
	// {type: RuntimeDefault}. Set runAsNonRoot false for an image that must run as root.
	// +kubebuilder:validation:XValidation:rule="!has(self.runAsUser) || (self.runAsUser >= 0 && self.runAsUser <= 2147483647)",message="must be from 0 to 2147483647",fieldPath=".runAsUser"
	// +kubebuilder:validation:XValidation:rule="!has(self.runAsGroup) || (self.runAsGroup >= 0 && self.runAsGroup <= 2147483647)",message="must be from 0 to 2147483647",fieldPath=".runAsGroup"
	// +kubebuilder:validation:XValidation:rule="!has(self.fsGroup) || (self.fsGroup >= 0 && self.fsGroup <= 2147483647)",message="must be from 0 to 2147483647",fieldPath=".fsGroup"
	// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || self.seccompProfile.type in ['RuntimeDefault', 'Unconfined', 'Localhost']",message="type must be RuntimeDefault, Unconfined or Localhost",fieldPath=".seccompProfile.type"
	// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || (self.seccompProfile.type == 'Localhost') == has(self.seccompProfile.localhostProfile)",message="localhostProfile must be set when, and only when, type is Localhost",fieldPath=".seccompProfile"
	// +kubebuilder:validation:XValidation:rule="!has(self.appArmorProfile) || self.appArmorProfile.type in ['RuntimeDefault', 'Unconfined', 'Localhost']",message="type must be RuntimeDefault, Unconfined or Localhost",fieldPath=".appArmorProfile.type"
	// +kubebuilder:validation:XValidation:rule="!has(self.appArmorProfile) || (self.appArmorProfile.type == 'Localhost') == has(self.appArmorProfile.localhostProfile)",message="localhostProfile must be set when, and only when, type is Localhost",fieldPath=".appArmorProfile"
	// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || !has(self.seccompProfile.localhostProfile) || (self.seccompProfile.localhostProfile != '' && !self.seccompProfile.localhostProfile.startsWith('/') && !self.seccompProfile.localhostProfile.matches('(^|/)[.][.](/|$)'))",message="localhostProfile must be a relative path without '..'",fieldPath=".seccompProfile.localhostProfile"
	// +kubebuilder:validation:XValidation:rule="!has(self.supplementalGroups) || size(self.supplementalGroups) == 0 || (self.supplementalGroups.min() >= 0 && self.supplementalGroups.max() <= 2147483647)",message="every group must be from 0 to 2147483647",fieldPath=".supplementalGroups"
	// +kubebuilder:validation:XValidation:rule="!has(self.fsGroupChangePolicy) || self.fsGroupChangePolicy in ['OnRootMismatch', 'Always']",message="must be OnRootMismatch or Always",fieldPath=".fsGroupChangePolicy"
	// +kubebuilder:validation:XValidation:rule="!has(self.seLinuxChangePolicy) || self.seLinuxChangePolicy == 'Recursive'",message="must be Recursive: MountOption needs the SELinuxMount feature gate, which Kubernetes 1.36 turns off by default",fieldPath=".seLinuxChangePolicy"
	// +kubebuilder:validation:XValidation:rule="!has(self.supplementalGroupsPolicy) || self.supplementalGroupsPolicy in ['Merge', 'Strict']",message="must be Merge or Strict",fieldPath=".supplementalGroupsPolicy"
	// +kubebuilder:validation:XValidation:rule="!has(self.windowsOptions) || !has(self.windowsOptions.hostProcess) || !self.windowsOptions.hostProcess",message="hostProcess must not be true: a Windows host process pod needs hostNetwork, which a MyApp does not set",fieldPath=".windowsOptions.hostProcess"
	// +kubebuilder:validation:XValidation:rule="!has(self.windowsOptions) || !has(self.windowsOptions.gmsaCredentialSpecName) || (size(self.windowsOptions.gmsaCredentialSpecName) <= 253 && self.windowsOptions.gmsaCredentialSpecName.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'))",message="must be a valid object name: lower case letters, digits, '-' and '.'",fieldPath=".windowsOptions.gmsaCredentialSpecName"
	// +kubebuilder:validation:XValidation:rule="!has(self.windowsOptions) || !has(self.windowsOptions.gmsaCredentialSpec) || (size(bytes(self.windowsOptions.gmsaCredentialSpec)) >= 1 && size(bytes(self.windowsOptions.gmsaCredentialSpec)) <= 65536)",message="must not be empty and must be at most 64 KiB",fieldPath=".windowsOptions.gmsaCredentialSpec"
	// +kubebuilder:validation:XValidation:rule=`!has(self.windowsOptions) || !has(self.windowsOptions.runAsUserName) || (size(self.windowsOptions.runAsUserName) >= 1 && !self.windowsOptions.runAsUserName.matches('[[:cntrl:]]') && self.windowsOptions.runAsUserName.indexOf('\\') == self.windowsOptions.runAsUserName.lastIndexOf('\\') && self.windowsOptions.runAsUserName.indexOf('\\') < 256)`,message="must not be empty, hold control characters or more than one backslash, and a domain before the backslash has at most 255 characters",fieldPath=".windowsOptions.runAsUserName"
	// +kubebuilder:validation:XValidation:rule=`!has(self.windowsOptions) || !has(self.windowsOptions.runAsUserName) || self.windowsOptions.runAsUserName.indexOf('\\') < 0 || (self.windowsOptions.runAsUserName.lowerAscii().matches(r'^([^/:*?"<>|\\.][^/:*?"<>|\\]{0,14}|([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?[.])*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)\\'))`,message="the domain before the backslash must be a NetBIOS or a DNS name",fieldPath=".windowsOptions.runAsUserName"
	// +kubebuilder:validation:XValidation:rule=`!has(self.windowsOptions) || !has(self.windowsOptions.runAsUserName) || (size(bytes(self.windowsOptions.runAsUserName.substring(self.windowsOptions.runAsUserName.lastIndexOf('\\') + 1))) >= 1 && size(bytes(self.windowsOptions.runAsUserName.substring(self.windowsOptions.runAsUserName.lastIndexOf('\\') + 1))) <= 104 && !self.windowsOptions.runAsUserName.substring(self.windowsOptions.runAsUserName.lastIndexOf('\\') + 1).matches('^[. ]+$') && !self.windowsOptions.runAsUserName.substring(self.windowsOptions.runAsUserName.lastIndexOf('\\') + 1).matches(r'["/\x5c:;|=,+*?<>@\x5b\x5d]'))`,message="the user name must have 1 to 104 bytes, not only periods or spaces, and none of \"/\\:;|=,+*?<>@[]",fieldPath=".windowsOptions.runAsUserName"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pod security context"
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`

	// ServiceAccountName is the ServiceAccount the pods run as. Defaults to the namespace's
	// "default" account.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be a valid ServiceAccount name: lower case letters, digits, '-' and '.'"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Service account",xDescriptors={"urn:alm:descriptor:io.kubernetes:ServiceAccount"}
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// ImagePullSecrets name Secrets in the MyApp's namespace holding registry credentials.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Image pull secrets"
	ImagePullSecrets []LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// AutomountServiceAccountToken, when false, keeps the ServiceAccount's API token out of
	// the pods, for an app that never calls the Kubernetes API; true mounts it. Left out, the
	// pod template does not say and the ServiceAccount decides (Kubernetes mounts the token
	// unless the ServiceAccount says otherwise).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Mount the service account token",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch"}
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`

	// TerminationGracePeriodSeconds is how long a pod has to stop, from the start of its
	// preStop hook to SIGKILL. Left out, the Deployment's own value stands (Kubernetes
	// defaults it to 30); the operator sets 30 when a preStop hook is set without it, so that
	// the hook's sleep is checked against a known period.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Termination grace period (seconds)",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// AutoRollback, true or left out, lets the operator return the Deployment to the last pod
	// template whose rollout completed when the rollout of a new template fails: its pods
	// cannot pull or run their image, cannot be created from their configuration, or
	// crash-loop (for longer than the manager's --rollout-failure-grace, 30 s by default), or
	// the Deployment passes its progress deadline. The MyApp is then Stalled with the reason
	// RolledBack while the spec asks for the failed template. False only reports the failure.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Roll back a failed rollout",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch"}
	AutoRollback *bool `json:"autoRollback,omitempty"`

	// RolloutOnConfigChange, true, rolls the pods out when a ConfigMap the MyApp references
	// changes, as a change of the spec would: the operator reads the referenced ConfigMaps and
	// puts a digest of their data into the pod template (annotation
	// myapp.example.com/config-hash). The references tracked are
	// env[].valueFrom.configMapKeyRef, envFrom[].configMapRef, volumes[].configMap and the
	// configMap sources of volumes[].projected. An optional ConfigMap that is missing counts as
	// a value of its own, so its creation rolls the pods too; while a ConfigMap the pods need
	// is missing, the template keeps its hash. A rollout to a configuration that fails is
	// rolled back like any other (autoRollback). The Secrets referenced the same ways are
	// tracked only in a namespace an administrator opted in (docs/operations/secrets.md; the
	// operator is granted nothing on Secrets otherwise): there the template carries a digest of
	// their versions (annotation myapp.example.com/secret-hash), from their metadata only, so
	// that any new version of such a Secret rolls the pods, one that changes nothing but how it
	// is stored included (a re-encryption at rest, a storage migration). Left out or false, a
	// change reaches the pods only when they restart, as in Kubernetes.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Roll out on ConfigMap changes",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch"}
	RolloutOnConfigChange *bool `json:"rolloutOnConfigChange,omitempty"`

	// Lifecycle holds the container's preStop hook, which runs before the container gets
	// SIGTERM: a sleep of a few seconds lets the Service's endpoints drop the pod before the
	// app stops taking requests. The sleep must fit in terminationGracePeriodSeconds (30
	// when left out); the operator's admission policy refuses one that does not.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Lifecycle hooks"
	Lifecycle *Lifecycle `json:"lifecycle,omitempty"`

	// PodLabels are extra labels on the pods. The operator's own pod labels
	// (app.kubernetes.io/name, app.kubernetes.io/managed-by and keys under
	// myapp.example.com/) cannot be set here.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$') && size(k) <= 317 && k.indexOf('/') <= 253 && size(k.substring(k.lastIndexOf('/') + 1)) <= 63)",message="label keys must be qualified names such as app or example.com/team: an optional DNS subdomain prefix of at most 253 characters and '/', then at most 63 letters, digits, '-', '_' and '.'"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('myapp.example.com/') && k != 'app.kubernetes.io/name' && k != 'app.kubernetes.io/managed-by')",message="must not set app.kubernetes.io/name, app.kubernetes.io/managed-by or keys under myapp.example.com/: the operator sets them"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pod labels"
	PodLabels map[string]LabelValue `json:"podLabels,omitempty"`

	// PodAnnotations are extra annotations on the pods.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.lowerAscii().matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$') && size(k) <= 317 && k.indexOf('/') <= 253 && size(k.substring(k.lastIndexOf('/') + 1)) <= 63)",message="annotation keys must be qualified names such as example.com/team: an optional DNS subdomain prefix of at most 253 characters and '/', then at most 63 letters, digits, '-', '_' and '.'"
	// +kubebuilder:validation:XValidation:rule="self.map(k, size(k) + size(bytes(self[k]))).sum() <= 262144",message="keys and values together must not exceed 256 KiB in UTF-8, the Kubernetes limit on an object's annotations"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pod annotations"
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// ServiceAnnotations are extra annotations on the Service, e.g. for a cloud load
	// balancer. Keys under myapp.example.com/ are the operator's. Keys and values together hold
	// at most 256 KiB less 64 bytes in UTF-8: the operator keeps the rest for its own annotation.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('myapp.example.com/'))",message="must not set keys under myapp.example.com/: the operator sets them"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.lowerAscii().matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$') && size(k) <= 317 && k.indexOf('/') <= 253 && size(k.substring(k.lastIndexOf('/') + 1)) <= 63)",message="annotation keys must be qualified names such as example.com/team: an optional DNS subdomain prefix of at most 253 characters and '/', then at most 63 letters, digits, '-', '_' and '.'"
	// +kubebuilder:validation:XValidation:rule="self.map(k, size(k) + size(bytes(self[k]))).sum() <= 262080",message="keys and values together must not exceed 256 KiB less 64 bytes in UTF-8, which the operator keeps for its own annotation on the Service (the Kubernetes limit on an object's annotations is 256 KiB)"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Service annotations"
	ServiceAnnotations map[string]string `json:"serviceAnnotations,omitempty"`

	// NodeSelector limits the pods to nodes carrying all these labels.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$') && size(k) <= 317 && k.indexOf('/') <= 253 && size(k.substring(k.lastIndexOf('/') + 1)) <= 63)",message="label keys must be qualified names such as disktype or example.com/zone: an optional DNS subdomain prefix of at most 253 characters and '/', then at most 63 letters, digits, '-', '_' and '.'"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Node selector"
	NodeSelector map[string]LabelValue `json:"nodeSelector,omitempty"`

	// Tolerations let the pods run on nodes with matching taints.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator in ['', 'Equal', 'Exists'])",message="operator must be Equal or Exists: Lt and Gt need an alpha feature gate that Kubernetes turns off by default"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.effect) || t.effect in ['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="effect must be NoSchedule, PreferNoSchedule or NoExecute"
	// +kubebuilder:validation:XValidation:rule="self.all(t, (has(t.key) && t.key != '') || (has(t.operator) && t.operator == 'Exists'))",message="operator must be Exists when key is empty"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !(has(t.operator) && t.operator == 'Exists') || !has(t.value) || t.value == '')",message="value must be empty when operator is Exists"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.tolerationSeconds) || (has(t.effect) && t.effect == 'NoExecute'))",message="effect must be NoExecute when tolerationSeconds is set"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.key) || t.key == '' || (t.key.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$') && t.key.indexOf('/') <= 253 && size(t.key.substring(t.key.lastIndexOf('/') + 1)) <= 63))",message="key must be a qualified name such as dedicated or example.com/gpu: an optional DNS subdomain prefix of at most 253 characters and '/', then at most 63 letters, digits, '-', '_' and '.'"
	// +kubebuilder:validation:XValidation:rule="self.all(t, (has(t.operator) && t.operator == 'Exists') || !has(t.value) || t.value.matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'))",message="value must be a label value with operator Equal: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	// +listType=atomic
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Tolerations"
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity holds the pods' node affinity and pod (anti-)affinity rules.
	// +kubebuilder:validation:XValidation:rule="!has(self.nodeAffinity) || !has(self.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution) || self.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.all(t, t.weight >= 1 && t.weight <= 100)",message="nodeAffinity: the weight of a preferred term must be from 1 to 100"
	// +kubebuilder:validation:XValidation:rule="!has(self.podAffinity) || !has(self.podAffinity.preferredDuringSchedulingIgnoredDuringExecution) || self.podAffinity.preferredDuringSchedulingIgnoredDuringExecution.all(t, t.weight >= 1 && t.weight <= 100)",message="podAffinity: the weight of a preferred term must be from 1 to 100"
	// +kubebuilder:validation:XValidation:rule="!has(self.podAntiAffinity) || !has(self.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution) || self.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.all(t, t.weight >= 1 && t.weight <= 100)",message="podAntiAffinity: the weight of a preferred term must be from 1 to 100"
	// +kubebuilder:validation:XValidation:rule="!has(self.podAffinity) || ((!has(self.podAffinity.requiredDuringSchedulingIgnoredDuringExecution) || self.podAffinity.requiredDuringSchedulingIgnoredDuringExecution.all(t, t.topologyKey != '')) && (!has(self.podAffinity.preferredDuringSchedulingIgnoredDuringExecution) || self.podAffinity.preferredDuringSchedulingIgnoredDuringExecution.all(t, t.podAffinityTerm.topologyKey != '')))",message="podAffinity: every term must have a topologyKey"
	// +kubebuilder:validation:XValidation:rule="!has(self.podAntiAffinity) || ((!has(self.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution) || self.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.all(t, t.topologyKey != '')) && (!has(self.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution) || self.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.all(t, t.podAffinityTerm.topologyKey != '')))",message="podAntiAffinity: every term must have a topologyKey"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Affinity"
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// TopologySpreadConstraints spread the pods across zones or nodes. A constraint without
	// a labelSelector selects the MyApp's own pods.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(c, c.maxSkew >= 1 && c.maxSkew <= 2147483647)",message="maxSkew must be from 1 to 2147483647"
	// +kubebuilder:validation:XValidation:rule="self.all(c, c.topologyKey != '')",message="topologyKey must not be empty"
	// +kubebuilder:validation:XValidation:rule="self.all(c, c.whenUnsatisfiable in ['DoNotSchedule', 'ScheduleAnyway'])",message="whenUnsatisfiable must be DoNotSchedule or ScheduleAnyway"
	// +kubebuilder:validation:XValidation:rule="self.all(c, !has(c.minDomains) || (c.minDomains >= 1 && c.minDomains <= 2147483647 && c.whenUnsatisfiable == 'DoNotSchedule'))",message="minDomains must be from 1 to 2147483647, and only with whenUnsatisfiable DoNotSchedule"
	// +kubebuilder:validation:XValidation:rule="self.all(c, (!has(c.nodeAffinityPolicy) || c.nodeAffinityPolicy in ['Honor', 'Ignore']) && (!has(c.nodeTaintsPolicy) || c.nodeTaintsPolicy in ['Honor', 'Ignore']))",message="nodeAffinityPolicy and nodeTaintsPolicy must be Honor or Ignore"
	// +listType=map
	// +listMapKey=topologyKey
	// +listMapKey=whenUnsatisfiable
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Topology spread constraints"
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// RollingUpdate tunes how a new pod template replaces the old pods. Defaults to the
	// Deployment's 25% surge and 25% unavailable.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Rolling update"
	RollingUpdate *RollingUpdate `json:"rollingUpdate,omitempty"`

	// MinReadySeconds is how long a new pod must be ready, without a container crashing,
	// before it counts as available. Left out, the Deployment's own value stands (Kubernetes
	// defaults it to 0).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Min ready seconds",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`

	// ProgressDeadlineSeconds is how long a rollout may go without progress before the
	// Deployment reports it failed (ProgressDeadlineExceeded), which makes the MyApp Stalled.
	// It must exceed minReadySeconds. Left out, the Deployment's own value stands
	// (Kubernetes defaults it to 600); the operator sets 600 when minReadySeconds is set
	// without it, so that the pair is checked together.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Progress deadline seconds",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`

	// PodDisruptionBudget, when set, makes the operator keep a PodDisruptionBudget for the
	// pods, named after the MyApp. Removing the field removes the budget.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pod disruption budget"
	PodDisruptionBudget *PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`

	// AccessPolicy, when set, restricts who may connect to the app's pods and what they may
	// connect to, with a NetworkPolicy named after the MyApp. Removing the field removes it.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Access policy"
	AccessPolicy *AccessPolicy `json:"accessPolicy,omitempty"`

	// Metrics, when set, has the app's own metrics scraped through a PodMonitor named after
	// the MyApp, where the cluster serves the Prometheus Operator's PodMonitors (the MyApp is
	// Degraded where it does not). Removing the field removes it.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Metrics"
	Metrics *AppMetrics `json:"metrics,omitempty"`

	// Expose, when set, makes the app reachable from outside the cluster at its hosts and
	// path, through an HTTPRoute or an Ingress named after the MyApp that routes to its Service
	// (see Expose for which). Removing the field removes it; status.url says where the app is
	// reached.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Expose"
	Expose *Expose `json:"expose,omitempty"`

	// Canary, when set, releases each new pod template to a share of the requests first, in
	// steps judged by the operator and by metric checks, and promotes or aborts it (see
	// Canary). Left out, a new template rolls out as the Deployment's rolling update does.
	// Setting it restarts no pod.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Canary releases"
	Canary *Canary `json:"canary,omitempty"`
}

// ResourceRequirements are the compute resources of the application's container: any
// resource name (cpu, memory, ephemeral-storage, hugepages-2Mi, or an extended resource such
// as nvidia.com/gpu) mapped to a quantity, as an integer (cpu: 1, memory: 1073741824) or a
// string ("500m", "0.5", "256Mi"); a fraction must be a string. For each resource, the request must not
// exceed the limit.
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || !('cpu' in self.requests) || !('cpu' in self.limits) || !isQuantity(string(self.requests['cpu'])) || !isQuantity(string(self.limits['cpu'])) || quantity(string(self.requests['cpu'])).compareTo(quantity(string(self.limits['cpu']))) <= 0",message="cpu must not exceed limits.cpu",fieldPath=".requests"
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || !('memory' in self.requests) || !('memory' in self.limits) || !isQuantity(string(self.requests['memory'])) || !isQuantity(string(self.limits['memory'])) || quantity(string(self.requests['memory'])).compareTo(quantity(string(self.limits['memory']))) <= 0",message="memory must not exceed limits.memory",fieldPath=".requests"
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || !('ephemeral-storage' in self.requests) || !('ephemeral-storage' in self.limits) || !isQuantity(string(self.requests['ephemeral-storage'])) || !isQuantity(string(self.limits['ephemeral-storage'])) || quantity(string(self.requests['ephemeral-storage'])).compareTo(quantity(string(self.limits['ephemeral-storage']))) <= 0",message="ephemeral-storage must not exceed limits.ephemeral-storage",fieldPath=".requests"
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || self.requests.all(k, k in ['cpu', 'memory', 'ephemeral-storage'] || !(k in self.limits) || !isQuantity(string(self.requests[k])) || !isQuantity(string(self.limits[k])) || quantity(string(self.requests[k])).compareTo(quantity(string(self.limits[k]))) <= 0)",message="each request must not exceed the limit of the same resource",fieldPath=".requests"
// +kubebuilder:validation:XValidation:rule="!has(self.requests) || self.requests.all(k, !((k.contains('/') && !k.contains('kubernetes.io/')) || k.startsWith('hugepages-')) || (has(self.limits) && k in self.limits && (!isQuantity(string(self.requests[k])) || !isQuantity(string(self.limits[k])) || quantity(string(self.requests[k])).compareTo(quantity(string(self.limits[k]))) == 0)))",message="a request of an extended resource (such as nvidia.com/gpu) or of hugepages must have a limit, equal to the request: Kubernetes does not overcommit them",fieldPath=".requests"
// +kubebuilder:validation:XValidation:rule="!((has(self.requests) && self.requests.exists(k, k.startsWith('hugepages-'))) || (has(self.limits) && self.limits.exists(k, k.startsWith('hugepages-')))) || (has(self.requests) && ('cpu' in self.requests || 'memory' in self.requests)) || (has(self.limits) && ('cpu' in self.limits || 'memory' in self.limits))",message="hugepages require a cpu or memory request or limit"
type ResourceRequirements struct {
	// Limits are the most the container may use, by resource name.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['cpu', 'memory', 'ephemeral-storage'] || k.startsWith('hugepages-') || k.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)+/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$'))",message="resource names must be cpu, memory, ephemeral-storage, hugepages-<size> or a domain-qualified extended resource such as nvidia.com/gpu"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !(k.contains('/') && !k.contains('kubernetes.io/')) || !isQuantity(string(self[k])) || quantity(string(self[k])).isInteger() || (quantity(string(self[k])).isLessThan(quantity('9007199254740992')) && quantity(string(self[k])).asApproximateFloat() == double(int(quantity(string(self[k])).asApproximateFloat()))))",message="an extended resource (such as nvidia.com/gpu) must be a whole number"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('hugepages-') || (isQuantity(k.substring(10)) && quantity(k.substring(10)).isInteger() && quantity(k.substring(10)).isGreaterThan(quantity('0')) && isQuantity(string(self[k])) && (quantity(string(self[k])).isInteger() ? quantity(string(self[k])).asInteger() : int(quantity(string(self[k])).asApproximateFloat()) + 1) % quantity(k.substring(10)).asInteger() == 0))",message="a hugepages amount, rounded up to a whole number of bytes, must be a whole multiple of its page size, and the page size (hugepages-<size>) a positive whole quantity such as 2Mi"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Limits"
	Limits map[corev1.ResourceName]Quantity `json:"limits,omitempty"`

	// Requests are what the scheduler reserves for the container, by resource name.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['cpu', 'memory', 'ephemeral-storage'] || k.startsWith('hugepages-') || k.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)+/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$'))",message="resource names must be cpu, memory, ephemeral-storage, hugepages-<size> or a domain-qualified extended resource such as nvidia.com/gpu"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !(k.contains('/') && !k.contains('kubernetes.io/')) || !isQuantity(string(self[k])) || quantity(string(self[k])).isInteger() || (quantity(string(self[k])).isLessThan(quantity('9007199254740992')) && quantity(string(self[k])).asApproximateFloat() == double(int(quantity(string(self[k])).asApproximateFloat()))))",message="an extended resource (such as nvidia.com/gpu) must be a whole number"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('hugepages-') || (isQuantity(k.substring(10)) && quantity(k.substring(10)).isInteger() && quantity(k.substring(10)).isGreaterThan(quantity('0')) && isQuantity(string(self[k])) && (quantity(string(self[k])).isInteger() ? quantity(string(self[k])).asInteger() : int(quantity(string(self[k])).asApproximateFloat()) + 1) % quantity(k.substring(10)).asInteger() == 0))",message="a hugepages amount, rounded up to a whole number of bytes, must be a whole multiple of its page size, and the page size (hugepages-<size>) a positive whole quantity such as 2Mi"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Requests"
	Requests map[corev1.ResourceName]Quantity `json:"requests,omitempty"`
}

// EnvVar is one environment variable of the container. Exactly one of value and valueFrom
// may be set; with neither, the variable is set to the empty string.
// +kubebuilder:validation:XValidation:rule="!(has(self.value) && has(self.valueFrom))",message="value and valueFrom are mutually exclusive"
type EnvVar struct {
	// Name is the variable's name: printable ASCII characters other than '=', as Kubernetes
	// accepts since 1.34 (the bundle's minKubeVersion).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^[ -<>-~]+$')",message="must be a valid environment variable name: printable ASCII characters other than '='"
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

// EnvVarSource is where a variable's value comes from: a key of a Secret or a ConfigMap in
// the MyApp's namespace, a field of the pod, or a resource of the container (the downward
// API). Exactly one is set.
// +kubebuilder:validation:XValidation:rule="(has(self.secretKeyRef) ? 1 : 0) + (has(self.configMapKeyRef) ? 1 : 0) + (has(self.fieldRef) ? 1 : 0) + (has(self.resourceFieldRef) ? 1 : 0) == 1",message="exactly one of secretKeyRef, configMapKeyRef, fieldRef and resourceFieldRef must be set"
type EnvVarSource struct {
	// SecretKeyRef selects a key of a Secret.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Secret key"
	SecretKeyRef *KeySelector `json:"secretKeyRef,omitempty"`

	// ConfigMapKeyRef selects a key of a ConfigMap.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="ConfigMap key"
	ConfigMapKeyRef *KeySelector `json:"configMapKeyRef,omitempty"`

	// FieldRef selects a field of the pod: metadata.name, metadata.namespace, metadata.uid,
	// metadata.labels['<key>'], metadata.annotations['<key>'], spec.nodeName,
	// spec.serviceAccountName, status.hostIP, status.hostIPs, status.podIP or status.podIPs.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pod field"
	FieldRef *ObjectFieldSelector `json:"fieldRef,omitempty"`

	// ResourceFieldRef selects a limit or request of the container: limits.cpu,
	// limits.memory, limits.ephemeral-storage, requests.cpu, requests.memory,
	// requests.ephemeral-storage, or limits.hugepages-<size> and requests.hugepages-<size>.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Container resource"
	ResourceFieldRef *ResourceFieldSelector `json:"resourceFieldRef,omitempty"`
}

// ObjectFieldSelector selects a field of the pod, in the core shape.
type ObjectFieldSelector struct {
	// APIVersion is the version of the schema the path is written in: v1, the default.
	// +kubebuilder:validation:Enum=v1
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// FieldPath is the path of the field.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=350
	// +kubebuilder:validation:XValidation:rule=`self in ['metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.serviceAccountName', 'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs'] || self.matches("^metadata[.]labels[[]'([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?'[]]$") || self.matches("^metadata[.]annotations[[]'([a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?([.][a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?'[]]$")`,message="must be metadata.name, metadata.namespace, metadata.uid, metadata.labels['<key>'], metadata.annotations['<key>'], spec.nodeName, spec.serviceAccountName, status.hostIP, status.hostIPs, status.podIP or status.podIPs, with a key that is a qualified name"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('metadata.') || !self.contains('/') || self.indexOf('/') <= self.indexOf('[') + 255",message="the key's prefix must have at most 253 characters"
	// +required
	FieldPath string `json:"fieldPath"`
}

// ResourceFieldSelector selects a limit or request of the application's container, in the
// core shape without containerName (it is always the application's container).
// +kubebuilder:validation:XValidation:rule="!has(self.divisor) || !isQuantity(string(self.divisor)) || quantity(string(self.divisor)) in (self.resource in ['limits.cpu', 'requests.cpu'] ? [quantity('0'), quantity('1'), quantity('1m')] : [quantity('0'), quantity('1'), quantity('1k'), quantity('1M'), quantity('1G'), quantity('1T'), quantity('1P'), quantity('1E'), quantity('1Ki'), quantity('1Mi'), quantity('1Gi'), quantity('1Ti'), quantity('1Pi'), quantity('1Ei')])",message="must be 1 or 1m for cpu, and 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi or 1Ei for the others, in any spelling of the same value (1000m is 1)",fieldPath=".divisor"
type ResourceFieldSelector struct {
	// Resource is limits.<name> or requests.<name>, for cpu, memory, ephemeral-storage or
	// hugepages-<size>.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self in ['limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage'] || self.startsWith('limits.hugepages-') || self.startsWith('requests.hugepages-')",message="must be limits.cpu, limits.memory, limits.ephemeral-storage, requests.cpu, requests.memory, requests.ephemeral-storage, or limits. or requests. followed by hugepages-<size>"
	// +required
	Resource string `json:"resource"`

	// Divisor is the unit the value is given in: 1 or 1m for cpu; 1, 1k, 1M, 1G, 1T, 1P, 1E,
	// 1Ki, 1Mi, 1Gi, 1Ti, 1Pi or 1Ei for the others. It is compared by value, so any spelling
	// of one of those works (1000m is 1, 1048576 and 1024Ki are 1Mi), and the pod template
	// carries it in the spelling Kubernetes accepts. Defaults to 1; 0 means the same.
	// +optional
	Divisor *Quantity `json:"divisor,omitempty"`
}

// EnvFromSource is a ConfigMap or a Secret whose every key becomes an environment variable;
// exactly one of configMapRef and secretRef is set.
// +kubebuilder:validation:XValidation:rule="has(self.configMapRef) != has(self.secretRef)",message="exactly one of configMapRef and secretRef must be set"
type EnvFromSource struct {
	// Prefix is put before the name of each variable of the source.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^[ -<>-~]*$')",message="must be printable ASCII characters other than '=', as an environment variable name"
	// +optional
	Prefix string `json:"prefix,omitempty"`

	// ConfigMapRef names the ConfigMap.
	// +optional
	ConfigMapRef *EnvFromReference `json:"configMapRef,omitempty"`

	// SecretRef names the Secret.
	// +optional
	SecretRef *EnvFromReference `json:"secretRef,omitempty"`
}

// EnvFromReference names a ConfigMap or a Secret in the MyApp's namespace.
type EnvFromReference struct {
	// Name is the object's name.
	// +required
	Name ObjectName `json:"name"`

	// Optional lets the pods start while the object is missing; otherwise a pod waits for it
	// (CreateContainerConfigError).
	// +optional
	Optional *bool `json:"optional,omitempty"`
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
	// +kubebuilder:validation:XValidation:rule="self != '.' && !self.startsWith('..')",message="must not be '.' nor start with '..': Kubernetes refuses such keys"
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Key",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Key string `json:"key"`
}

// PortProtocol is the protocol of a port.
// +kubebuilder:validation:Enum=TCP;UDP;SCTP
type PortProtocol string

// The protocols a port may have.
const (
	ProtocolTCP  PortProtocol = "TCP"
	ProtocolUDP  PortProtocol = "UDP"
	ProtocolSCTP PortProtocol = "SCTP"
)

// ContainerPort is a port of the container beside the MyApp's port, also on its Service.
type ContainerPort struct {
	// Name names the port in the container and on the Service, as probes and
	// expose.portName refer to it: at most 15 lower-case letters, digits and '-', with at
	// least one letter, not starting or ending with '-', without '--', and not http.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && self.matches('[a-z]') && !self.contains('--')",message="must be a port name: at most 15 lower-case letters, digits and '-', with at least one letter, not starting or ending with '-' and without '--'"
	// +kubebuilder:validation:XValidation:rule="self != 'http'",message="must not be http, the name of the MyApp's port (spec.port)"
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Name",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Name string `json:"name"`

	// Port is the number the container listens on, and the Service's port of the same name.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Port",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	Port int32 `json:"port"`

	// Protocol is TCP, UDP or SCTP; TCP when left out.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Protocol",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:TCP","urn:alm:descriptor:com.tectonic.ui:select:UDP","urn:alm:descriptor:com.tectonic.ui:select:SCTP"}
	Protocol *PortProtocol `json:"protocol,omitempty"`

	// AppProtocol is the application protocol of the Service's port, for the Gateway or
	// proxies that read it: an IANA service name such as http, https or h2c, or a
	// domain-prefixed name such as kubernetes.io/h2c: a name of at most 63 characters after
	// an optional DNS-subdomain prefix of at most 253 and '/'.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$')",message="must be a name such as http, h2c or kubernetes.io/h2c: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit, optionally after a DNS-subdomain prefix and '/'"
	// +kubebuilder:validation:XValidation:rule="self.indexOf('/') <= 253",message="the prefix before '/' must be at most 253 characters"
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Application protocol",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	AppProtocol *string `json:"appProtocol,omitempty"`
}

// AutoScalingSpec configures a HorizontalPodAutoscaler for the application.
// +kubebuilder:validation:XValidation:rule="!self.enabled || has(self.maxReplicas)",message="is required when autoscaling is enabled",fieldPath=".maxReplicas"
// +kubebuilder:validation:XValidation:rule="!has(self.targetCPUUtilizationPercentage) || self.targetCPUUtilizationPercentage > 0 || has(self.targetMemoryUtilizationPercentage)",message="may be 0 (not scaled on CPU) only when targetMemoryUtilizationPercentage is set: the autoscaler needs a metric to scale on",fieldPath=".targetCPUUtilizationPercentage"
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
	// +kubebuilder:validation:Maximum=2147483647
	// +kubebuilder:default=1
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Minimum replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the most pods the autoscaler may run; required when enabled.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Maximum replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`

	// TargetCPUUtilizationPercentage is the average CPU utilisation, as a percentage of the
	// CPU request, that the autoscaler aims for; 0 scales on memory alone, and needs
	// targetMemoryUtilizationPercentage.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=80
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Target CPU utilisation (%)",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`

	// TargetMemoryUtilizationPercentage is the average memory use, as a percentage of the
	// memory request, that the autoscaler aims for, beside the CPU target (the autoscaler
	// follows the one that asks for more pods); above 100 where the memory limit is above the
	// request. Unset: not scaled on memory. The pods need spec.resources.requests.memory (or
	// a LimitRange's default) for the autoscaler to measure it.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Target memory utilisation (%)",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	TargetMemoryUtilizationPercentage *int32 `json:"targetMemoryUtilizationPercentage,omitempty"`

	// Behavior sets how fast the autoscaler scales up and down. Unset, or for a direction it
	// leaves out, Kubernetes' defaults apply: scale up at once (by up to 4 pods or 100 % per
	// 15 s), scale down after a 300 s stabilisation window (by up to 100 % per 15 s).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Scaling behaviour"
	Behavior *AutoScalingBehavior `json:"behavior,omitempty"`
}

// AutoScalingBehavior is the pace of the autoscaler in each direction: the
// HorizontalPodAutoscaler's spec.behavior.
type AutoScalingBehavior struct {
	// ScaleUp is how fast the autoscaler adds pods.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Scale up"
	ScaleUp *ScalingRules `json:"scaleUp,omitempty"`

	// ScaleDown is how fast the autoscaler removes pods.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Scale down"
	ScaleDown *ScalingRules `json:"scaleDown,omitempty"`
}

// ScalingRules limit the autoscaler's changes in one direction.
type ScalingRules struct {
	// StabilizationWindowSeconds is how far back the autoscaler looks at its past
	// recommendations before it scales (it takes the highest when scaling down, the lowest
	// when scaling up), from 0 to 3600 seconds. Unset: 0 up, 300 down.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Stabilisation window (s)",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	StabilizationWindowSeconds *int32 `json:"stabilizationWindowSeconds,omitempty"`

	// SelectPolicy chooses among the policies: Max (the one allowing the largest change),
	// Min (the smallest) or Disabled (no scaling in this direction). Unset: Max.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Policy selection",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:Max","urn:alm:descriptor:com.tectonic.ui:select:Min","urn:alm:descriptor:com.tectonic.ui:select:Disabled"}
	SelectPolicy *ScalingPolicySelect `json:"selectPolicy,omitempty"`

	// Policies are the changes allowed per period, at least one and at most 10. Unset:
	// Kubernetes' defaults for the direction.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Policies"
	Policies []ScalingPolicy `json:"policies,omitempty"`
}

// ScalingPolicySelect chooses among a direction's scaling policies.
// +kubebuilder:validation:Enum=Max;Min;Disabled
type ScalingPolicySelect string

const (
	// ScalingPolicySelectMax takes the policy that allows the largest change.
	ScalingPolicySelectMax ScalingPolicySelect = "Max"
	// ScalingPolicySelectMin takes the policy that allows the smallest change.
	ScalingPolicySelectMin ScalingPolicySelect = "Min"
	// ScalingPolicySelectDisabled turns scaling in the direction off.
	ScalingPolicySelectDisabled ScalingPolicySelect = "Disabled"
)

// ScalingPolicyType is the unit of a scaling policy's value.
// +kubebuilder:validation:Enum=Pods;Percent
type ScalingPolicyType string

const (
	// ScalingPolicyPods counts pods.
	ScalingPolicyPods ScalingPolicyType = "Pods"
	// ScalingPolicyPercent is a percentage of the current pods.
	ScalingPolicyPercent ScalingPolicyType = "Percent"
)

// ScalingPolicy is one change the autoscaler may make within a period.
type ScalingPolicy struct {
	// Type is the unit of value: Pods or Percent (of the current pods).
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Type",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:Pods","urn:alm:descriptor:com.tectonic.ui:select:Percent"}
	Type ScalingPolicyType `json:"type"`

	// Value is how many pods, or what percentage of them, may be added or removed within
	// periodSeconds; at least 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Value",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	Value int32 `json:"value"`

	// PeriodSeconds is the window the value applies to, from 1 to 1800 seconds.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1800
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Period (s)",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	PeriodSeconds int32 `json:"periodSeconds"`
}

// RollbackStatus records a rollback the operator made.
type RollbackStatus struct {
	// Generation is the MyApp's generation whose pod template failed.
	// +required
	Generation int64 `json:"generation"`

	// FailedSpec is a digest (SHA-256, hex) of the pod template the spec asked for when it
	// failed. The rollback holds while the spec asks for that same template: a change of
	// anything else (replicas, the Service) does not try it again.
	// +kubebuilder:validation:MaxLength=64
	// +required
	FailedSpec string `json:"failedSpec"`

	// ReconcileRequest is a digest (SHA-256, hex) of the reconcile-request annotation's value
	// when the template failed, or empty when there was none; a new value asks the operator to
	// try the template again.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ReconcileRequest string `json:"reconcileRequest,omitempty"`

	// FailedTemplate is the pod-template-hash of the template that failed.
	// +kubebuilder:validation:MaxLength=63
	// +required
	FailedTemplate string `json:"failedTemplate"`

	// Template is the pod-template-hash of the template the Deployment was returned to.
	// +kubebuilder:validation:MaxLength=63
	// +required
	Template string `json:"template"`

	// Reason is why the template failed: ImagePullBackOff, InvalidImageName,
	// CreateContainerConfigError, VolumeSourceMissing, CrashLoopBackOff or
	// ProgressDeadlineExceeded.
	// +kubebuilder:validation:MaxLength=64
	// +required
	Reason string `json:"reason"`

	// Message says, in the operator's words, what failed.
	// +kubebuilder:validation:MaxLength=32768
	// +required
	Message string `json:"message"`

	// Time is when the operator rolled back.
	// +required
	Time metav1.Time `json:"time"`
}

// ReconcileRequestAnnotation asks for a reconcile when its value changes, as Flux's
// reconcile.fluxcd.io/requestedAt does; status.lastHandledReconcileAt echoes the value.
// `kubectl annotate myapp/web myapp.example.com/reconcile-requested-at="$(date +%s)" --overwrite`
const ReconcileRequestAnnotation = "myapp.example.com/reconcile-requested-at"

// MyAppStatus is the observed state of a MyApp.
type MyAppStatus struct {
	// ObservedGeneration is the generation of the spec the status was computed for.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Observed generation"
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are Ready, Reconciling, Stalled, Progressing and Degraded, each with a
	// stable reason: Available, RollingOut, Scaling, RolloutComplete, AsExpected,
	// SelectorMigration, WaitingForPredecessor, ProgressDeadlineExceeded, ReplicaFailure,
	// ChildNotOwned, ChildRejected, InvalidSpec, ApplyFailed, AutoscalerUnableToScale,
	// RolledBack, GatewayAPINotInstalled, RouteNotAccepted, WaitingForGateway,
	// GatewayNotResponding, IngressClassNotFound, IngressNotAdmitted, CanaryProgressing,
	// CanaryPaused, CanaryPromoting, CanaryAborted, CanaryAnalysisUnavailable,
	// CanaryAnalysisInconclusive or a pod's ImagePullBackOff, InvalidImageName or
	// CreateContainerConfigError.
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors={"urn:alm:descriptor:io.kubernetes.conditions"}
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Replicas is the number of pods the Deployment runs, of any template; the scale
	// subresource reports it.
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}
	Replicas int32 `json:"replicas,omitempty"`

	// UpdatedReplicas is the number of pods that run the current pod template.
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Updated replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`

	// ReadyReplicas is the number of the Deployment's pods that are ready.
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Ready replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// AvailableReplicas is the number of the Deployment's pods that are available.
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Available replicas",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// Selector is the label selector of the MyApp's pods, for the scale subresource.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Selector",xDescriptors={"urn:alm:descriptor:io.kubernetes.selector"}
	Selector string `json:"selector,omitempty"`

	// LastHandledReconcileAt is the value of the myapp.example.com/reconcile-requested-at
	// annotation the operator last reconciled.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last handled reconcile request"
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`

	// ReadyTemplate is the pod-template-hash of the last pod template whose rollout the
	// Deployment completed, every pod on it and available: the template a failed rollout is
	// rolled back to.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last Ready pod template"
	ReadyTemplate string `json:"readyTemplate,omitempty"`

	// RolledBack, while set, says that the rollout of the pod template the spec asks for
	// failed and that the operator returned the Deployment to ReadyTemplate. The operator does
	// not try that template again until the spec asks for another one or a reconcile is
	// requested (myapp.example.com/reconcile-requested-at).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Rolled back"
	RolledBack *RollbackStatus `json:"rolledBack,omitempty"`

	// Canary, while a canary release runs or holds after an abort, says where it is: its
	// phase, step, weight and what its metric checks measured. It is recorded before the
	// operator acts on it, so a restarted operator resumes where it was.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Canary"
	Canary *CanaryStatus `json:"canary,omitempty"`

	// Exposure records the hosts and paths of spec.expose the MyApp holds, and since when:
	// a host belongs to the namespace of its oldest claim, and a claim is recorded here before
	// the HTTPRoute or Ingress that serves it is applied.
	// +optional
	Exposure *ExposureStatus `json:"exposure,omitempty"`

	// URL is where the app is reached from outside the cluster, from spec.expose: the scheme,
	// the first host that is not a wildcard and the path, once the HTTPRoute or Ingress
	// carries them. Whether a request gets there is Ready's to say: through a Gateway, Ready
	// waits until the Gateway accepted the route.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="URL",xDescriptors={"urn:alm:descriptor:org.w3:link"}
	URL string `json:"url,omitempty"`

	// LastUpdateTime is when any other field of the status last changed.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last update time"
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
}

// MyApp runs a stateless application: a Deployment, a Service, while autoscaling is enabled
// a HorizontalPodAutoscaler, and when asked for a PodDisruptionBudget, all named after the
// MyApp and owned by it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=ma,categories=all
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 63",message="metadata.name must be at most 63 lower case letters, digits and '-', starting with a letter and ending with a letter or digit, because it also names the MyApp's Service"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.canary) || size(self.metadata.name) <= 56",message="metadata.name must be at most 56 characters with spec.canary, which names the Services <name>-canary and <name>-stable"
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Canary",type=integer,JSONPath=`.status.canary.weight`,description="The percentage of requests a canary release sends to the new template"
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +operator-sdk:csv:customresourcedefinitions:displayName="MyApp",resources={{Deployment,v1},{Service,v1},{HorizontalPodAutoscaler,v2},{PodDisruptionBudget,v1}}
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
