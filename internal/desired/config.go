package desired

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// AnnotationConfigHash names, on the pod template of a MyApp with spec.rolloutOnConfigChange,
// a digest of the data of the ConfigMaps it references: a change of their data is a change of
// the template, which the Deployment rolls out.
const AnnotationConfigHash = "myapp.example.com/config-hash"

// ConfigMapAbsent is the digest of a referenced ConfigMap that does not exist and that the
// pods may start without (RequiredConfigMaps).
const ConfigMapAbsent = "absent"

// RollsOnConfigChange tells whether the MyApp asks to roll its pods out on a change of the
// ConfigMaps it references.
func RollsOnConfigChange(app *examplev1.MyApp) bool {
	return app.Spec.RolloutOnConfigChange != nil && *app.Spec.RolloutOnConfigChange
}

// ReferencedConfigMaps are the names, sorted and each once, of the ConfigMaps the MyApp's pod
// template takes values or files from: env[].valueFrom.configMapKeyRef, envFrom[].configMapRef
// and volumes[].configMap, a projected volume's included. The files ConfigMap of spec.files is
// not among them: its name already changes with its content.
func ReferencedConfigMaps(app *examplev1.MyApp) []string {
	var names []string
	for _, e := range app.Spec.Env {
		if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
			names = append(names, e.ValueFrom.ConfigMapKeyRef.Name)
		}
	}
	for _, from := range app.Spec.EnvFrom {
		if from.ConfigMapRef != nil {
			names = append(names, string(from.ConfigMapRef.Name))
		}
	}
	for _, v := range app.Spec.Volumes {
		if v.ConfigMap != nil {
			names = append(names, string(v.ConfigMap.Name))
		}
		for _, src := range projectedSources(v) {
			if src.ConfigMap != nil {
				names = append(names, string(src.ConfigMap.Name))
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// RequiredConfigMaps are the names of the referenced ConfigMaps (ReferencedConfigMaps) that a
// pod cannot start without: those referenced at least once without optional: true (a key of
// env[].valueFrom always is).
func RequiredConfigMaps(app *examplev1.MyApp) map[string]bool {
	required := map[string]bool{}
	for _, e := range app.Spec.Env {
		if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
			required[e.ValueFrom.ConfigMapKeyRef.Name] = true
		}
	}
	for _, from := range app.Spec.EnvFrom {
		if ref := from.ConfigMapRef; ref != nil && (ref.Optional == nil || !*ref.Optional) {
			required[string(ref.Name)] = true
		}
	}
	for _, v := range app.Spec.Volumes {
		if cm := v.ConfigMap; cm != nil && (cm.Optional == nil || !*cm.Optional) {
			required[string(cm.Name)] = true
		}
		for _, src := range projectedSources(v) {
			if cm := src.ConfigMap; cm != nil && (cm.Optional == nil || !*cm.Optional) {
				required[string(cm.Name)] = true
			}
		}
	}
	return required
}

// projectedSources are the sources of a projected volume, or none.
func projectedSources(v examplev1.Volume) []examplev1.VolumeProjection {
	if v.Projected == nil {
		return nil
	}
	return v.Projected.Sources
}

// ConfigMapDigest is a digest of a ConfigMap's data and binaryData, whatever their order: two
// ConfigMaps that give pods the same values and files have the same digest.
func ConfigMapDigest(cm *corev1.ConfigMap) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
		writeSized(h, "data", k, cm.Data[k])
	}
	binary := make(map[string]string, len(cm.BinaryData))
	for k, v := range cm.BinaryData {
		binary[k] = base64.StdEncoding.EncodeToString(v)
	}
	for _, k := range slices.Sorted(maps.Keys(binary)) {
		writeSized(h, "binaryData", k, binary[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ConfigHash is the pod template's AnnotationConfigHash for the digests of the referenced
// ConfigMaps, by name (ConfigMapDigest, or ConfigMapAbsent): 16 hex digits of a SHA-256.
func ConfigHash(digests map[string]string) string {
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(digests)) {
		writeSized(h, "configMap", name, digests[name])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// ConfigHashes are the hashes of what the pods read besides the spec that the pod template
// carries, so that a change of it rolls out: "" for none.
type ConfigHashes struct {
	// ConfigMaps is AnnotationConfigHash.
	ConfigMaps string
	// Secrets is AnnotationSecretHash.
	Secrets string
}

// WithConfigHashes puts the hashes on the Deployment's pod template; "" puts nothing.
func WithConfigHashes(d *appsv1ac.DeploymentApplyConfiguration, h ConfigHashes) {
	if d == nil || d.Spec == nil || d.Spec.Template == nil {
		return
	}
	if h.ConfigMaps != "" {
		d.Spec.Template.WithAnnotations(map[string]string{AnnotationConfigHash: h.ConfigMaps})
	}
	if h.Secrets != "" {
		// On the Deployment too: where the Secrets cannot be watched, the template the spec
		// asks for keeps this one, which a rollback of the template does not replace.
		d.WithAnnotations(map[string]string{AnnotationSecretHash: h.Secrets})
		d.Spec.Template.WithAnnotations(map[string]string{AnnotationSecretHash: h.Secrets})
	}
}

// writeSized writes each part as its length in decimal, ':' and the part: two different lists
// of parts never write the same bytes.
func writeSized(w io.Writer, parts ...string) {
	for _, p := range parts {
		_, _ = fmt.Fprintf(w, "%d:%s", len(p), p)
	}
}
