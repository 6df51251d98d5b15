package v1

// ObjectName is the name of an object in the MyApp's namespace (a ConfigMap, a Secret, a
// PersistentVolumeClaim): a DNS subdomain of at most 253 characters.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be a valid object name: lower case letters, digits, '-' and '.'"
type ObjectName string

// VolumePath is a file's path inside a volume: relative, without a '..' element, not starting
// with '..', each element at most 255 characters (the kubelet's limit on a file name).
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=1024
// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.startsWith('..') && !self.matches('(^|/)[.][.](/|$)')",message="must be a relative path without a '..' element, not starting with '..'"
// +kubebuilder:validation:XValidation:rule="!self.matches('[^/]{256}')",message="every element of the path must have at most 255 characters, the kubelet's limit on a file name"
type VolumePath string

// Volume is a volume the pods may mount (spec.volumeMounts): exactly one of a ConfigMap, a
// Secret, an emptyDir, a PersistentVolumeClaim, the downward API and a projection of several
// of these, each in the core shape.
// Nothing that reaches the node, such as hostPath, is offered.
// +kubebuilder:validation:XValidation:rule="(has(self.configMap) ? 1 : 0) + (has(self.secret) ? 1 : 0) + (has(self.emptyDir) ? 1 : 0) + (has(self.persistentVolumeClaim) ? 1 : 0) + (has(self.downwardAPI) ? 1 : 0) + (has(self.projected) ? 1 : 0) == 1",message="exactly one of configMap, secret, emptyDir, persistentVolumeClaim, downwardAPI and projected must be set"
type Volume struct {
	// Name names the volume for volumeMounts: a DNS label, at most 63 lower case letters,
	// digits and '-', not starting with kube-api-access- (Kubernetes' ServiceAccount admission
	// takes a volume of such a name for the API token), and not myapp-files (the volume of
	// spec.files).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="must be a DNS label: lower case letters, digits and '-', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('kube-api-access-')",message="must not start with kube-api-access-: Kubernetes' ServiceAccount admission takes such a volume for the API token"
	// +kubebuilder:validation:XValidation:rule="self != 'myapp-files'",message="must not be myapp-files: the operator mounts spec.files through a volume of that name"
	// +required
	Name string `json:"name"`

	// ConfigMap makes the keys of a ConfigMap in the MyApp's namespace files.
	// +optional
	ConfigMap *ConfigMapVolumeSource `json:"configMap,omitempty"`

	// Secret makes the keys of a Secret in the MyApp's namespace files.
	// +optional
	Secret *SecretVolumeSource `json:"secret,omitempty"`

	// EmptyDir is an empty directory that lives as long as the pod: the place to write
	// beside a read-only root filesystem (mounted at /tmp, for example).
	// +optional
	EmptyDir *EmptyDirVolumeSource `json:"emptyDir,omitempty"`

	// PersistentVolumeClaim mounts a claim of the MyApp's namespace. Every pod of the MyApp
	// mounts the same claim: it must allow that (ReadWriteMany or ReadOnlyMany), or the
	// MyApp run one pod.
	// +optional
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`

	// DownwardAPI makes fields of the pod (its name, namespace, uid, labels and annotations)
	// and limits or requests of the container files, which the kubelet keeps up to date.
	// +optional
	DownwardAPI *DownwardAPIVolumeSource `json:"downwardAPI,omitempty"`

	// Projected puts ConfigMaps, Secrets, the downward API and a service account token into
	// one directory. Two items of its sources may not share a path (the operator's admission
	// policy refuses them, as Kubernetes refuses the pod).
	// +optional
	Projected *ProjectedVolumeSource `json:"projected,omitempty"`
}

// ProjectedVolumeSource is several sources in one directory, in the core shape.
type ProjectedVolumeSource struct {
	// Sources are the sources, at most 4.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +listType=atomic
	// +required
	Sources []VolumeProjection `json:"sources"`

	// DefaultMode is the files' permission bits, 0 to 0777 (511 in decimal). Defaults to 0644.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=511
	// +optional
	DefaultMode *int32 `json:"defaultMode,omitempty"`
}

// VolumeProjection is one source of a projected volume: exactly one of a ConfigMap, a Secret,
// the downward API and a service account token.
// +kubebuilder:validation:XValidation:rule="(has(self.configMap) ? 1 : 0) + (has(self.secret) ? 1 : 0) + (has(self.downwardAPI) ? 1 : 0) + (has(self.serviceAccountToken) ? 1 : 0) == 1",message="exactly one of configMap, secret, downwardAPI and serviceAccountToken must be set"
type VolumeProjection struct {
	// ConfigMap makes keys of a ConfigMap in the MyApp's namespace files.
	// +optional
	ConfigMap *ConfigMapProjection `json:"configMap,omitempty"`

	// Secret makes keys of a Secret in the MyApp's namespace files.
	// +optional
	Secret *SecretProjection `json:"secret,omitempty"`

	// DownwardAPI makes fields of the pod and resources of the container files.
	// +optional
	DownwardAPI *DownwardAPIProjection `json:"downwardAPI,omitempty"`

	// ServiceAccountToken is a token of the pod's service account for an audience, which the
	// kubelet renews before it expires.
	// +optional
	ServiceAccountToken *ServiceAccountTokenProjection `json:"serviceAccountToken,omitempty"`
}

// ConfigMapProjection is a ConfigMap's keys as files of a projected volume, in the core shape.
type ConfigMapProjection struct {
	// Name is the ConfigMap's name.
	// +required
	Name ObjectName `json:"name"`

	// Items picks keys and the files they become; left out, every key is a file of its name.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	Items []KeyToPath `json:"items,omitempty"`

	// Optional lets the pods start while the ConfigMap (or a key of items) is missing.
	// +optional
	Optional *bool `json:"optional,omitempty"`
}

// SecretProjection is a Secret's keys as files of a projected volume, in the core shape.
type SecretProjection struct {
	// Name is the Secret's name.
	// +required
	Name ObjectName `json:"name"`

	// Items picks keys and the files they become; left out, every key is a file of its name.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	Items []KeyToPath `json:"items,omitempty"`

	// Optional lets the pods start while the Secret (or a key of items) is missing.
	// +optional
	Optional *bool `json:"optional,omitempty"`
}

// DownwardAPIProjection is the downward API as files of a projected volume, in the core shape.
type DownwardAPIProjection struct {
	// Items are the files, each of one field of the pod or one resource of the container; at
	// most 4 (the API server's cost budget for the CRD's rules bounds them).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +listType=atomic
	// +required
	Items []DownwardAPIVolumeFile `json:"items"`
}

// ServiceAccountTokenProjection is a token of the pod's service account, in the core shape.
type ServiceAccountTokenProjection struct {
	// Audience is who the token is for; left out, the API server's own audiences.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Audience string `json:"audience,omitempty"`

	// ExpirationSeconds is how long the token is valid, from 600 (10 minutes) to 2^32; the
	// kubelet renews it at 80 % of that. Defaults to 3600.
	// +kubebuilder:validation:Minimum=600
	// +kubebuilder:validation:Maximum=4294967296
	// +optional
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty"`

	// Path is the token's file in the volume: relative, without a '..' element, each element
	// at most 255 characters.
	// +required
	Path VolumePath `json:"path"`
}

// DownwardAPIVolumeSource is the downward API as files, in the core shape.
type DownwardAPIVolumeSource struct {
	// Items are the files, each of one field of the pod or one resource of the container; at
	// most 16 (the API server's cost budget for the CRD's rules bounds them).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +required
	Items []DownwardAPIVolumeFile `json:"items"`

	// DefaultMode is the files' permission bits, 0 to 0777 (511 in decimal). Defaults to 0644.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=511
	// +optional
	DefaultMode *int32 `json:"defaultMode,omitempty"`
}

// DownwardAPIVolumeFile is one file of the downward API: a field of the pod or a resource of
// the application's container, in the core shape (without containerName: it is always the
// application's container).
// +kubebuilder:validation:XValidation:rule="has(self.fieldRef) != has(self.resourceFieldRef)",message="exactly one of fieldRef and resourceFieldRef must be set"
type DownwardAPIVolumeFile struct {
	// Path is the file's path in the volume: relative, without a '..' element, each element
	// at most 255 characters (the kubelet's limit on a file name).
	// +required
	Path VolumePath `json:"path"`

	// FieldRef selects a field of the pod.
	// +optional
	FieldRef *VolumeFieldSelector `json:"fieldRef,omitempty"`

	// ResourceFieldRef selects a limit or request of the container.
	// +optional
	ResourceFieldRef *ResourceFieldSelector `json:"resourceFieldRef,omitempty"`

	// Mode is the file's permission bits, 0 to 0777 (511 in decimal); defaults to the
	// volume's defaultMode.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=511
	// +optional
	Mode *int32 `json:"mode,omitempty"`
}

// VolumeFieldSelector selects a field of the pod for a downward API file, in the core shape:
// the fields a volume can show, which are fewer than a variable's.
type VolumeFieldSelector struct {
	// APIVersion is the version of the schema the path is written in: v1, the default.
	// +kubebuilder:validation:Enum=v1
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// FieldPath is the path of the field: metadata.name, metadata.namespace, metadata.uid,
	// metadata.labels, metadata.annotations, metadata.labels['<key>'] or
	// metadata.annotations['<key>'].
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=350
	// +kubebuilder:validation:XValidation:rule=`self in ['metadata.name', 'metadata.namespace', 'metadata.uid', 'metadata.labels', 'metadata.annotations'] || self.matches("^metadata[.]labels[[]'([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?'[]]$") || self.matches("^metadata[.]annotations[[]'([a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?([.][a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?'[]]$")`,message="must be metadata.name, metadata.namespace, metadata.uid, metadata.labels, metadata.annotations, metadata.labels['<key>'] or metadata.annotations['<key>'], with a key that is a qualified name"
	// +kubebuilder:validation:XValidation:rule="!self.contains('/') || self.indexOf('/') <= self.indexOf('[') + 255",message="the key's prefix must have at most 253 characters"
	// +required
	FieldPath string `json:"fieldPath"`
}

// ConfigMapVolumeSource is a ConfigMap as files, in the core shape.
type ConfigMapVolumeSource struct {
	// Name is the ConfigMap's name.
	// +required
	Name ObjectName `json:"name"`

	// Items picks keys and the files they become; left out, every key is a file of its name.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Items []KeyToPath `json:"items,omitempty"`

	// DefaultMode is the files' permission bits, 0 to 0777 (511 in decimal). Defaults to 0644.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=511
	// +optional
	DefaultMode *int32 `json:"defaultMode,omitempty"`

	// Optional lets the pods start while the ConfigMap (or a key of items) is missing.
	// +optional
	Optional *bool `json:"optional,omitempty"`
}

// SecretVolumeSource is a Secret as files, in the core shape.
type SecretVolumeSource struct {
	// SecretName is the Secret's name.
	// +required
	SecretName ObjectName `json:"secretName"`

	// Items picks keys and the files they become; left out, every key is a file of its name.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Items []KeyToPath `json:"items,omitempty"`

	// DefaultMode is the files' permission bits, 0 to 0777 (511 in decimal). Defaults to 0644.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=511
	// +optional
	DefaultMode *int32 `json:"defaultMode,omitempty"`

	// Optional lets the pods start while the Secret (or a key of items) is missing.
	// +optional
	Optional *bool `json:"optional,omitempty"`
}

// KeyToPath makes one key a file.
type KeyToPath struct {
	// Key is the key in the ConfigMap or Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-._a-zA-Z0-9]+$')",message="must be a valid key: letters, digits, '-', '_' and '.'"
	// +kubebuilder:validation:XValidation:rule="self != '.' && !self.startsWith('..')",message="must not be '.' nor start with '..': Kubernetes refuses such keys"
	// +required
	Key string `json:"key"`

	// Path is the file's path in the volume: relative, without a '..' element, each element
	// at most 255 characters (the kubelet's limit on a file name).
	// +required
	Path VolumePath `json:"path"`

	// Mode is the file's permission bits, 0 to 0777 (511 in decimal); defaults to the
	// volume's defaultMode.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=511
	// +optional
	Mode *int32 `json:"mode,omitempty"`
}

// EmptyDirVolumeSource is an empty directory, in the core shape.
type EmptyDirVolumeSource struct {
	// Medium is "" (the node's disk, the default) or Memory (a tmpfs, counted as the
	// container's memory).
	// +kubebuilder:validation:Enum="";Memory
	// +optional
	Medium string `json:"medium,omitempty"`

	// SizeLimit bounds what the directory may hold; a pod that writes more is evicted.
	// +optional
	SizeLimit *Quantity `json:"sizeLimit,omitempty"`
}

// PersistentVolumeClaimVolumeSource names a PersistentVolumeClaim, in the core shape.
type PersistentVolumeClaimVolumeSource struct {
	// ClaimName is the claim's name.
	// +required
	ClaimName ObjectName `json:"claimName"`

	// ReadOnly mounts the claim read-only in every mount.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`
}

// VolumeMount mounts a volume of spec.volumes into the container.
type VolumeMount struct {
	// Name is the volume's name in spec.volumes.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name"`

	// MountPath is where the volume appears: an absolute path other than /, without a
	// trailing '/' (so that two spellings of one path cannot both be mounted); one mount per
	// path.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="must be an absolute path"
	// +kubebuilder:validation:XValidation:rule="!self.endsWith('/')",message="must not be / nor end with '/'"
	// +required
	MountPath string `json:"mountPath"`

	// SubPath mounts one path inside the volume instead of its root: relative, without a '..'
	// element.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.matches('(^|/)[.][.](/|$)')",message="must be a relative path without a '..' element"
	// +optional
	SubPath string `json:"subPath,omitempty"`

	// ReadOnly mounts the volume read-only.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`
}
