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
		for i, item := range v.DownwardAPI.Items {
			file := corev1ac.DownwardAPIVolumeFile().WithPath(item.Path)
			switch {
			case item.FieldRef != nil:
				file.WithFieldRef(corev1ac.ObjectFieldSelector().WithAPIVersion("v1").WithFieldPath(item.FieldRef.FieldPath))
			case item.ResourceFieldRef != nil:
				sel, err := resourceFieldSelector(fmt.Sprintf("spec.volumes[%s].downwardAPI.items[%d].resourceFieldRef", v.Name, i), item.ResourceFieldRef)
				if err != nil {
					return nil, err
				}
				// A volume's selector names its container; a MyApp has one.
				file.WithResourceFieldRef(sel.WithContainerName(ContainerName))
			default:
				return nil, &InvalidSpecError{Field: fmt.Sprintf("spec.volumes[%s].downwardAPI.items[%d]", v.Name, i),
					Message: "exactly one of fieldRef and resourceFieldRef must be set"}
			}
			if item.Mode != nil {
				file.WithMode(*item.Mode)
			}
			src.WithItems(file)
		}
		out.WithDownwardAPI(src)
	default:
		return nil, &InvalidSpecError{Field: fmt.Sprintf("spec.volumes[%s]", v.Name),
			Message: "exactly one of configMap, secret, emptyDir, persistentVolumeClaim and downwardAPI must be set"}
	}
	return out, nil
}

func keysToPaths(items []examplev1.KeyToPath) []*corev1ac.KeyToPathApplyConfiguration {
	out := make([]*corev1ac.KeyToPathApplyConfiguration, 0, len(items))
	for _, it := range items {
		kp := corev1ac.KeyToPath().WithKey(it.Key).WithPath(it.Path)
		if it.Mode != nil {
			kp.WithMode(*it.Mode)
		}
		out = append(out, kp)
	}
	return out
}
