package desired

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// LabelFiles names, on the pod template of a MyApp with spec.files and so on its ReplicaSets,
// the files ConfigMap the template mounts, by the hash in its name. The operator keeps a
// files ConfigMap while a ReplicaSet of the MyApp carries its hash.
const LabelFiles = "myapp.example.com/files"

// filesKeyLimit bounds a file's key in the ConfigMap below Kubernetes' 253, with room for the
// suffix that tells two files apart whose paths give the same key.
const filesKeyLimit = 240

// Files is what the MyApp's spec.files make: the immutable ConfigMap holding them, its hash
// (the name's suffix and the pod template's LabelFiles), and each file's key in it.
type Files struct {
	ConfigMap *corev1ac.ConfigMapApplyConfiguration
	Hash      string
	// files are the MyApp's files by path, and keys their keys: the order of spec.files
	// changes neither the ConfigMap nor the pod template.
	files []examplev1.File
	keys  []string
}

// maxConfigMapBytes is what Kubernetes lets a ConfigMap's keys and values take together.
const maxConfigMapBytes = 1 << 20

// FilesOf builds the files ConfigMap of a MyApp, or nil when it has no files. Its name is the
// MyApp's name, "-files-" and a hash of the data, so that new contents make a new ConfigMap
// and a new pod template, and the ConfigMap can be immutable.
func FilesOf(app *examplev1.MyApp) (*Files, error) {
	if len(app.Spec.Files) == 0 {
		return nil, nil
	}
	files := slices.SortedFunc(slices.Values(app.Spec.Files), func(a, b examplev1.File) int { return strings.Compare(a.Path, b.Path) })
	keys := fileKeys(files)
	data := make(map[string]string, len(keys))
	total := 0
	for i, f := range files {
		if _, dup := data[keys[i]]; dup {
			// fileKeys gives distinct keys; two files on one path are refused at admission.
			return nil, &InvalidSpecError{Field: "spec.files", Message: fmt.Sprintf("two files on the path %s", f.Path)}
		}
		data[keys[i]] = f.Content
		total += len(keys[i]) + len(f.Content)
	}
	if total > maxConfigMapBytes {
		// Admission bounds the contents so that this cannot happen; checked here too, so that
		// no input makes a ConfigMap the API server refuses.
		return nil, &InvalidSpecError{Field: "spec.files", Message: fmt.Sprintf("the files take %d bytes with their names, more than a ConfigMap's %d", total, maxConfigMapBytes)}
	}
	hash := filesHash(keys, data)
	cm := corev1ac.ConfigMap(FilesConfigMapName(app, hash), app.Namespace).
		WithLabels(Labels(app)).
		WithLabels(map[string]string{LabelFiles: hash}).
		WithOwnerReferences(ownerReference(app)).
		WithImmutable(true).
		WithData(data)
	return &Files{ConfigMap: cm, Hash: hash, files: files, keys: keys}, nil
}

// FilesConfigMapName is the name of the MyApp's files ConfigMap of that hash.
func FilesConfigMapName(app *examplev1.MyApp, hash string) string {
	return app.Name + "-files-" + hash
}

// filesHash is 16 hex digits of the SHA-256 of the data, keys in order: 64 bits, so that two
// contents of one MyApp never share a name.
func filesHash(keys []string, data map[string]string) string {
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	h := sha256.New()
	for _, k := range sorted {
		writeSized(h, k, data[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// fileKeys gives each file its key in the ConfigMap: its path without the leading '/', each
// character a key may not hold (a '/' among them) as '_', at most filesKeyLimit characters;
// a key another file took already gets a number as a suffix (from the file's index up). A key starting with ".."
// starts with "_." instead, since Kubernetes refuses such keys.
func fileKeys(files []examplev1.File) []string {
	keys := make([]string, len(files))
	taken := make(map[string]bool, len(files))
	for i, f := range files {
		k := strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
				return r
			}
			return '_'
		}, strings.TrimPrefix(f.Path, "/"))
		if len(k) > filesKeyLimit {
			k = k[:filesKeyLimit]
		}
		if k == "" || k == "." || strings.HasPrefix(k, "..") {
			k = "_" + strings.TrimPrefix(k, ".")
		}
		key := k
		for n := i; taken[key]; n++ {
			key = k + "-" + strconv.Itoa(n)
		}
		taken[key] = true
		keys[i] = key
	}
	return keys
}

// volume is the pod's volume of the files ConfigMap, each key at its own path.
func (f *Files) volume(app *examplev1.MyApp) *corev1ac.VolumeApplyConfiguration {
	src := corev1ac.ConfigMapVolumeSource().WithName(FilesConfigMapName(app, f.Hash))
	for i, file := range f.files {
		item := corev1ac.KeyToPath().WithKey(f.keys[i]).WithPath(f.keys[i])
		if file.Mode != nil {
			item.WithMode(*file.Mode)
		}
		src.WithItems(item)
	}
	return corev1ac.Volume().WithName(examplev1.FilesVolumeName).WithConfigMap(src)
}

// mounts mount each file at its path: one read-only mount of its key.
func (f *Files) mounts() []*corev1ac.VolumeMountApplyConfiguration {
	out := make([]*corev1ac.VolumeMountApplyConfiguration, 0, len(f.files))
	for i, file := range f.files {
		out = append(out, corev1ac.VolumeMount().WithName(examplev1.FilesVolumeName).
			WithMountPath(file.Path).WithSubPath(f.keys[i]).WithReadOnly(true))
	}
	return out
}
