package v1

// FilesVolumeName is the name of the volume through which the operator mounts spec.files; no
// volume of spec.volumes may take it.
const FilesVolumeName = "myapp-files"

// MaxFilesContentBytes bounds the contents of spec.files together, in UTF-8: 1000 KiB leaves
// room for the files' keys (at most 32 of at most 243 bytes) within a ConfigMap's 1 MiB.
const MaxFilesContentBytes = 1024000

// File is a text file the operator writes into the MyApp's files ConfigMap and mounts into
// the container at its path.
type File struct {
	// Path is where the file appears in the container: an absolute path other than /, without
	// a trailing '/', an empty element, or a '.' or '..' element; each element at most 255
	// characters (the kubelet's limit on a file name). A file may not hold another (/etc/app
	// and /etc/app/config.yaml), nor be at or inside the mount path of spec.volumeMounts.
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=240
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="must be an absolute path"
	// +kubebuilder:validation:XValidation:rule="!self.endsWith('/') && !self.contains('//') && !self.matches('/[.][.]?(/|$)')",message="must not end with '/', nor hold an empty, '.' or '..' element"
	// +kubebuilder:validation:XValidation:rule="!self.matches('[^/]{256}')",message="every element of the path must have at most 255 characters, the kubelet's limit on a file name"
	// +required
	Path string `json:"path"`

	// Content is the file's text, as is: at most 512000 characters, and all files' contents
	// together at most 1000 KiB in UTF-8.
	// +kubebuilder:validation:MaxLength=512000
	// +required
	Content string `json:"content"`

	// Mode is the file's permission bits, 0 to 0777 (511 in decimal). Left out, Kubernetes
	// gives 0644.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=511
	// +optional
	Mode *int32 `json:"mode,omitempty"`
}
