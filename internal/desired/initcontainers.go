package desired

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// initContainers are the pod's init containers and sidecars, in the MyApp's order: Kubernetes
// starts them in that order, a sidecar (restartPolicy Always) staying up while the ones after
// it run. Each gets the restricted container defaults of the application's container; probes
// are built for sidecars only, as Kubernetes allows.
func initContainers(app *examplev1.MyApp) ([]*corev1ac.ContainerApplyConfiguration, error) {
	out := make([]*corev1ac.ContainerApplyConfiguration, 0, len(app.Spec.InitContainers))
	for i := range app.Spec.InitContainers {
		c, err := initContainer(app, i)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// initContainer is the i-th init container of the MyApp.
func initContainer(app *examplev1.MyApp, i int) (*corev1ac.ContainerApplyConfiguration, error) {
	in := &app.Spec.InitContainers[i]
	field := examplev1.InitContainerField(i)
	if in.Name == ContainerName {
		// Admission refuses this; checked here too, so that no input makes a pod the API
		// server refuses (two containers of one name).
		return nil, &InvalidSpecError{Field: field + ".name", Message: "must not be " + ContainerName + ", the name of the application's container"}
	}
	c := corev1ac.Container().WithName(in.Name).WithImage(in.Image)
	if in.IsSidecar() {
		c.WithRestartPolicy(corev1.ContainerRestartPolicyAlways)
	}
	if len(in.Command) > 0 {
		c.WithCommand(in.Command...)
	}
	if len(in.Args) > 0 {
		c.WithArgs(in.Args...)
	}
	if len(in.Env) > 0 {
		env, err := envVars(field+".env", in.Env)
		if err != nil {
			return nil, err
		}
		c.WithEnv(env...)
	}
	for _, from := range in.EnvFrom {
		c.WithEnvFrom(envFromSource(from))
	}
	mounts, err := volumeMounts(field+".volumeMounts", app, in.VolumeMounts)
	if err != nil {
		return nil, err
	}
	c.WithVolumeMounts(mounts...)
	res, err := resources(field+".resources", in.Resources)
	if err != nil {
		return nil, err
	}
	if res != nil {
		c.WithResources(res)
	}
	if in.IsSidecar() {
		if p := sidecarProbe(in.ReadinessProbe); p != nil {
			c.WithReadinessProbe(probe(p, app))
		}
		if p := sidecarProbe(in.LivenessProbe); p != nil {
			c.WithLivenessProbe(probe(p, app))
		}
		if p := sidecarProbe(in.StartupProbe); p != nil {
			c.WithStartupProbe(probe(p, app))
		}
	}
	sc, err := containerSecurityContext(nil)
	if err != nil {
		return nil, err
	}
	security, err := convert[corev1ac.SecurityContextApplyConfiguration](field, sc)
	if err != nil {
		return nil, err
	}
	return c.WithSecurityContext(security), nil
}

// sidecarProbe is a sidecar's probe in the shape of the application's, its port a number.
func sidecarProbe(p *examplev1.SidecarProbe) *examplev1.Probe {
	if p == nil {
		return nil
	}
	out := &examplev1.Probe{
		Exec:                p.Exec,
		InitialDelaySeconds: p.InitialDelaySeconds,
		PeriodSeconds:       p.PeriodSeconds,
		TimeoutSeconds:      p.TimeoutSeconds,
		SuccessThreshold:    p.SuccessThreshold,
		FailureThreshold:    p.FailureThreshold,
	}
	switch {
	case p.HTTPGet != nil:
		port := intstr.FromInt32(p.HTTPGet.Port)
		out.HTTPGet = &examplev1.HTTPGetProbe{Path: p.HTTPGet.Path, Port: &port, Scheme: p.HTTPGet.Scheme, HTTPHeaders: p.HTTPGet.HTTPHeaders}
	case p.TCPSocket != nil:
		port := intstr.FromInt32(p.TCPSocket.Port)
		out.TCPSocket = &examplev1.TCPSocketProbe{Port: &port}
	case p.GRPC != nil:
		out.GRPC = &examplev1.GRPCProbe{Port: &p.GRPC.Port, Service: p.GRPC.Service}
	}
	return out
}
