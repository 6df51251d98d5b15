package desired

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// volume is one volume of the pod, in the core shape the MyApp wrote it in. Fields the MyApp
// leaves out stay out, for the API server to default.
func volume(v examplev1.Volume) (*corev1ac.VolumeApplyConfiguration, error) {
	out := corev1ac.Volume().WithName(v.Name)
	switch {
	case v.ConfigMap != nil:
		src := corev1ac.ConfigMapVolumeSource().WithName(string(v.ConfigMap.Name)).WithItems(keysToPaths(v.ConfigMap.Items)...)
		if v.ConfigMap.DefaultMode != nil {
			src.WithDefaultMode(*v.ConfigMap.DefaultMode)
		}
		if v.ConfigMap.Optional != nil {
			src.WithOptional(*v.ConfigMap.Optional)
		}
		out.WithConfigMap(src)
	case v.Secret != nil:
		src := corev1ac.SecretVolumeSource().WithSecretName(string(v.Secret.SecretName)).WithItems(keysToPaths(v.Secret.Items)...)
		if v.Secret.DefaultMode != nil {
			src.WithDefaultMode(*v.Secret.DefaultMode)
		}
		if v.Secret.Optional != nil {
			src.WithOptional(*v.Secret.Optional)
		}
		out.WithSecret(src)
	case v.EmptyDir != nil:
		src := corev1ac.EmptyDirVolumeSource()
		if v.EmptyDir.Medium != "" {
			src.WithMedium(corev1.StorageMedium(v.EmptyDir.Medium))
		}
		if v.EmptyDir.SizeLimit != nil {
			q, err := resource.ParseQuantity(string(*v.EmptyDir.SizeLimit))
			if err != nil || q.Sign() < 0 {
				return nil, &InvalidSpecError{Field: fmt.Sprintf("spec.volumes[%s].emptyDir.sizeLimit", v.Name),
					Message: fmt.Sprintf("%q is not a non-negative Kubernetes quantity", string(*v.EmptyDir.SizeLimit))}
			}
			src.WithSizeLimit(q)
		}
		out.WithEmptyDir(src)
	case v.PersistentVolumeClaim != nil:
		src := corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(string(v.PersistentVolumeClaim.ClaimName))
		if v.PersistentVolumeClaim.ReadOnly {
			src.WithReadOnly(true)
		}
		out.WithPersistentVolumeClaim(src)
	case v.DownwardAPI != nil:
		src := corev1ac.DownwardAPIVolumeSource()
		if v.DownwardAPI.DefaultMode != nil {
			src.WithDefaultMode(*v.DownwardAPI.DefaultMode)
		}
		files, err := downwardAPIFiles(fmt.Sprintf("spec.volumes[%s].downwardAPI", v.Name), v.DownwardAPI.Items)
		if err != nil {
			return nil, err
		}
		out.WithDownwardAPI(src.WithItems(files...))
	case v.Projected != nil:
		src, err := projected(fmt.Sprintf("spec.volumes[%s].projected", v.Name), v.Projected)
		if err != nil {
			return nil, err
		}
		out.WithProjected(src)
	default:
		return nil, &InvalidSpecError{Field: fmt.Sprintf("spec.volumes[%s]", v.Name),
			Message: "exactly one of configMap, secret, emptyDir, persistentVolumeClaim, downwardAPI and projected must be set"}
	}
	return out, nil
}

// downwardAPIFiles are the files of a downward API volume or projection (field is where they
// are in the spec).
func downwardAPIFiles(field string, items []examplev1.DownwardAPIVolumeFile) ([]*corev1ac.DownwardAPIVolumeFileApplyConfiguration, error) {
	out := make([]*corev1ac.DownwardAPIVolumeFileApplyConfiguration, 0, len(items))
	for i, item := range items {
		file := corev1ac.DownwardAPIVolumeFile().WithPath(string(item.Path))
		switch {
		case item.FieldRef != nil:
			file.WithFieldRef(corev1ac.ObjectFieldSelector().WithAPIVersion("v1").WithFieldPath(item.FieldRef.FieldPath))
		case item.ResourceFieldRef != nil:
			sel, err := resourceFieldSelector(fmt.Sprintf("%s.items[%d].resourceFieldRef", field, i), item.ResourceFieldRef)
			if err != nil {
				return nil, err
			}
			// A volume's selector names its container; a MyApp has one.
			file.WithResourceFieldRef(sel.WithContainerName(ContainerName))
		default:
			return nil, &InvalidSpecError{Field: fmt.Sprintf("%s.items[%d]", field, i),
				Message: "exactly one of fieldRef and resourceFieldRef must be set"}
		}
		if item.Mode != nil {
			file.WithMode(*item.Mode)
		}
		out = append(out, file)
	}
	return out, nil
}

// projected is a projected volume's source; two items of its sources on one path are an
// InvalidSpecError, as Kubernetes refuses them in the pod.
func projected(field string, p *examplev1.ProjectedVolumeSource) (*corev1ac.ProjectedVolumeSourceApplyConfiguration, error) {
	out := corev1ac.ProjectedVolumeSource()
	if p.DefaultMode != nil {
		out.WithDefaultMode(*p.DefaultMode)
	}
	paths := map[string]bool{}
	unique := func(path string) error {
		if paths[path] {
			return &InvalidSpecError{Field: field + ".sources", Message: fmt.Sprintf("two items on the path %q", path)}
		}
		paths[path] = true
		return nil
	}
	for i, src := range p.Sources {
		proj := corev1ac.VolumeProjection()
		switch {
		case src.ConfigMap != nil:
			cm := corev1ac.ConfigMapProjection().WithName(string(src.ConfigMap.Name)).WithItems(keysToPaths(src.ConfigMap.Items)...)
			if src.ConfigMap.Optional != nil {
				cm.WithOptional(*src.ConfigMap.Optional)
			}
			for _, it := range src.ConfigMap.Items {
				if err := unique(string(it.Path)); err != nil {
					return nil, err
				}
			}
			proj.WithConfigMap(cm)
		case src.Secret != nil:
			sec := corev1ac.SecretProjection().WithName(string(src.Secret.Name)).WithItems(keysToPaths(src.Secret.Items)...)
			if src.Secret.Optional != nil {
				sec.WithOptional(*src.Secret.Optional)
			}
			for _, it := range src.Secret.Items {
				if err := unique(string(it.Path)); err != nil {
					return nil, err
				}
			}
			proj.WithSecret(sec)
		case src.DownwardAPI != nil:
			files, err := downwardAPIFiles(fmt.Sprintf("%s.sources[%d].downwardAPI", field, i), src.DownwardAPI.Items)
			if err != nil {
				return nil, err
			}
			for _, it := range src.DownwardAPI.Items {
				if err := unique(string(it.Path)); err != nil {
					return nil, err
				}
			}
			proj.WithDownwardAPI(corev1ac.DownwardAPIProjection().WithItems(files...))
		case src.ServiceAccountToken != nil:
			tok := corev1ac.ServiceAccountTokenProjection().WithPath(string(src.ServiceAccountToken.Path))
			if src.ServiceAccountToken.Audience != "" {
				tok.WithAudience(src.ServiceAccountToken.Audience)
			}
			if src.ServiceAccountToken.ExpirationSeconds != nil {
				tok.WithExpirationSeconds(*src.ServiceAccountToken.ExpirationSeconds)
			}
			proj.WithServiceAccountToken(tok)
		default:
			return nil, &InvalidSpecError{Field: fmt.Sprintf("%s.sources[%d]", field, i),
				Message: "exactly one of configMap, secret, downwardAPI and serviceAccountToken must be set"}
		}
		out.WithSources(proj)
	}
	return out, nil
}

func keysToPaths(items []examplev1.KeyToPath) []*corev1ac.KeyToPathApplyConfiguration {
	out := make([]*corev1ac.KeyToPathApplyConfiguration, 0, len(items))
	for _, it := range items {
		kp := corev1ac.KeyToPath().WithKey(it.Key).WithPath(string(it.Path))
		if it.Mode != nil {
			kp.WithMode(*it.Mode)
		}
		out = append(out, kp)
	}
	return out
}

// DefaultServiceAccountName is the service account of a namespace that pods run as unless they
// name another.
const DefaultServiceAccountName = "default"

// serviceAccountName is the service account the pod template names: the spec's, or, for a
// projected service account token, the namespace's default (Kubernetes refuses a pod with a
// token projection and no service account name; ServiceAccount admission would name
// "default", the same account); "" leaves it to Kubernetes.
func serviceAccountName(app *examplev1.MyApp) string {
	switch {
	case app.Spec.ServiceAccountName != "":
		return app.Spec.ServiceAccountName
	case projectsToken(app):
		return DefaultServiceAccountName
	}
	return ""
}

// projectsToken tells whether a projected volume of the MyApp holds a service account token.
func projectsToken(app *examplev1.MyApp) bool {
	for _, v := range app.Spec.Volumes {
		for _, src := range projectedSources(v) {
			if src.ServiceAccountToken != nil {
				return true
			}
		}
	}
	return false
}

// VolumeSource is a ConfigMap, Secret or PersistentVolumeClaim a volume of the MyApp takes,
// which its pods cannot start without (not optional).
type VolumeSource struct {
	// Kind is ConfigMap, Secret or PersistentVolumeClaim.
	Kind string
	// Name is the object's name, in the MyApp's namespace.
	Name string
	// Field is the field of the spec that names it, as a message names it:
	// spec.volumes[2].projected.sources[0].configMap.name.
	Field string
}

// RequiredVolumeSources lists the objects the MyApp's volumes take and its pods cannot start
// without, in the spec's order: the kubelet waits to mount them (the pods stay in
// ContainerCreating), and reports no waiting reason for it.
func RequiredVolumeSources(app *examplev1.MyApp) []VolumeSource {
	required := func(optional *bool) bool { return optional == nil || !*optional }
	var out []VolumeSource
	for i, v := range app.Spec.Volumes {
		field := fmt.Sprintf("spec.volumes[%d]", i)
		switch {
		case v.ConfigMap != nil && required(v.ConfigMap.Optional):
			out = append(out, VolumeSource{Kind: "ConfigMap", Name: string(v.ConfigMap.Name), Field: field + ".configMap.name"})
		case v.Secret != nil && required(v.Secret.Optional):
			out = append(out, VolumeSource{Kind: "Secret", Name: string(v.Secret.SecretName), Field: field + ".secret.secretName"})
		case v.PersistentVolumeClaim != nil:
			out = append(out, VolumeSource{Kind: "PersistentVolumeClaim", Name: string(v.PersistentVolumeClaim.ClaimName),
				Field: field + ".persistentVolumeClaim.claimName"})
		}
		for j, src := range projectedSources(v) {
			sf := fmt.Sprintf("%s.projected.sources[%d]", field, j)
			switch {
			case src.ConfigMap != nil && required(src.ConfigMap.Optional):
				out = append(out, VolumeSource{Kind: "ConfigMap", Name: string(src.ConfigMap.Name), Field: sf + ".configMap.name"})
			case src.Secret != nil && required(src.Secret.Optional):
				out = append(out, VolumeSource{Kind: "Secret", Name: string(src.Secret.Name), Field: sf + ".secret.name"})
			}
		}
	}
	return out
}
