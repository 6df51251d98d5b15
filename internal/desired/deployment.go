package desired

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Defaults the API server fills in; repeated here so that the builders give the same result
// for an object read before defaulting (or created before a default existed).
const (
	DefaultReplicas                       int32 = 1
	DefaultPort                           int32 = 8080
	DefaultMinReplicas                    int32 = 1
	DefaultTargetCPUUtilizationPercentage int32 = 80
)

// InvalidSpecError reports a MyApp field that the builders cannot turn into a child. The API
// server rejects such values at admission, so this is seen only for objects stored before
// the validation existed; the user must fix the MyApp.
type InvalidSpecError struct {
	Field   string
	Message string
}

func (e *InvalidSpecError) Error() string { return e.Field + ": " + e.Message }

// AutoscalingEnabled tells whether a HorizontalPodAutoscaler, not the MyApp, owns the number
// of replicas.
func AutoscalingEnabled(app *examplev1.MyApp) bool {
	return app.Spec.AutoScaling != nil && app.Spec.AutoScaling.Enabled
}

// Deployment is the Deployment the MyApp wants, carrying only the fields the operator has an
// opinion on. While autoscaling is enabled it leaves replicas out, so that the
// HorizontalPodAutoscaler owns that field.
func Deployment(app *examplev1.MyApp) (*appsv1ac.DeploymentApplyConfiguration, error) {
	container := corev1ac.Container().
		WithName(ContainerName).
		WithImage(app.Spec.Image).
		WithPorts(corev1ac.ContainerPort().
			WithName(PortName).
			WithContainerPort(port(app)).
			WithProtocol(corev1.ProtocolTCP))
	if len(app.Spec.Env) > 0 {
		container.WithEnv(envVars(app.Spec.Env)...)
	}
	res, err := resources(app.Spec.Resources)
	if err != nil {
		return nil, err
	}
	if res != nil {
		container.WithResources(res)
	}

	spec := appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(app))).
		WithTemplate(corev1ac.PodTemplateSpec().
			WithLabels(Labels(app)).
			WithSpec(corev1ac.PodSpec().WithContainers(container)))
	if !AutoscalingEnabled(app) {
		spec.WithReplicas(replicas(app))
	}

	return appsv1ac.Deployment(app.Name, app.Namespace).
		WithLabels(Labels(app)).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(spec), nil
}

func replicas(app *examplev1.MyApp) int32 { return valueOr(app.Spec.Replicas, DefaultReplicas) }

func port(app *examplev1.MyApp) int32 { return valueOr(app.Spec.Port, DefaultPort) }

func envVars(env []examplev1.EnvVar) []*corev1ac.EnvVarApplyConfiguration {
	out := make([]*corev1ac.EnvVarApplyConfiguration, 0, len(env))
	for _, e := range env {
		v := corev1ac.EnvVar().WithName(e.Name)
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			v.WithValueFrom(corev1ac.EnvVarSource().WithSecretKeyRef(
				corev1ac.SecretKeySelector().WithName(ref.Name).WithKey(ref.Key)))
		case e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			v.WithValueFrom(corev1ac.EnvVarSource().WithConfigMapKeyRef(
				corev1ac.ConfigMapKeySelector().WithName(ref.Name).WithKey(ref.Key)))
		case e.Value != nil:
			v.WithValue(*e.Value)
		}
		out = append(out, v)
	}
	return out
}

// resources parses the MyApp's resource strings without panicking on any input; it returns
// nil when the MyApp sets none.
func resources(r *examplev1.ResourceRequirements) (*corev1ac.ResourceRequirementsApplyConfiguration, error) {
	if r == nil {
		return nil, nil
	}
	limits, err := resourceList("spec.resources.limits", r.Limits)
	if err != nil {
		return nil, err
	}
	requests, err := resourceList("spec.resources.requests", r.Requests)
	if err != nil {
		return nil, err
	}
	if limits == nil && requests == nil {
		return nil, nil
	}
	for _, name := range resourceNames {
		req, hasReq := requests[name]
		lim, hasLim := limits[name]
		if hasReq && hasLim && req.Cmp(lim) > 0 {
			return nil, &InvalidSpecError{
				Field:   fmt.Sprintf("spec.resources.requests.%s", name),
				Message: fmt.Sprintf("must not exceed limits.%s", name),
			}
		}
	}
	out := corev1ac.ResourceRequirements()
	if limits != nil {
		out.WithLimits(limits)
	}
	if requests != nil {
		out.WithRequests(requests)
	}
	return out, nil
}

// resourceNames fixes the order in which resources are checked, so that the same invalid
// MyApp always yields the same error.
var resourceNames = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

func resourceList(path string, l *examplev1.ResourceList) (corev1.ResourceList, error) {
	if l == nil {
		return nil, nil
	}
	out := corev1.ResourceList{}
	for _, name := range resourceNames {
		s := l.CPU
		if name == corev1.ResourceMemory {
			s = l.Memory
		}
		if s == "" {
			continue
		}
		q, err := resource.ParseQuantity(s)
		if err != nil || q.Sign() < 0 {
			return nil, &InvalidSpecError{
				Field:   path + "." + string(name),
				Message: fmt.Sprintf("%q is not a non-negative Kubernetes quantity", s),
			}
		}
		out[name] = q
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
