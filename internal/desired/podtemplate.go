package desired

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// PodTemplate is the pod template of the MyApp's Deployment: the application's container and
// the MyApp's init containers and sidecars, the restricted security defaults, the default readiness probe, and the MyApp's placement rules.
func PodTemplate(app *examplev1.MyApp) (*corev1ac.PodTemplateSpecApplyConfiguration, error) {
	files, err := FilesOf(app)
	if err != nil {
		return nil, err
	}
	c, err := container(app)
	if err != nil {
		return nil, err
	}
	if files != nil {
		c.WithVolumeMounts(files.mounts()...)
	}
	spec := corev1ac.PodSpec().WithContainers(c)
	inits, err := initContainers(app)
	if err != nil {
		return nil, err
	}
	spec.WithInitContainers(inits...)

	podSecurity, err := convert[corev1ac.PodSecurityContextApplyConfiguration]("spec.podSecurityContext", podSecurityContext(app.Spec.PodSecurityContext))
	if err != nil {
		return nil, err
	}
	spec.WithSecurityContext(podSecurity)
	if name := serviceAccountName(app); name != "" {
		// The API server mirrors serviceAccountName into the deprecated serviceAccount, which
		// then belongs to no field manager, and reads serviceAccount back as the name when
		// serviceAccountName is gone: an apply that stops sending the name would leave both.
		// Sending the same value in both makes the operator own both, so that both go with it.
		spec.WithServiceAccountName(name).WithDeprecatedServiceAccount(name)
	}
	for _, s := range app.Spec.ImagePullSecrets {
		spec.WithImagePullSecrets(corev1ac.LocalObjectReference().WithName(s.Name))
	}
	if app.Spec.AutomountServiceAccountToken != nil {
		spec.WithAutomountServiceAccountToken(*app.Spec.AutomountServiceAccountToken)
	}
	if grace, ok := terminationGracePeriod(app); ok {
		spec.WithTerminationGracePeriodSeconds(grace)
	}
	for _, v := range app.Spec.Volumes {
		vol, err := volume(v)
		if err != nil {
			return nil, err
		}
		spec.WithVolumes(vol)
	}
	if files != nil {
		spec.WithVolumes(files.volume(app))
	}
	if len(app.Spec.NodeSelector) > 0 {
		spec.WithNodeSelector(stringMap(app.Spec.NodeSelector))
	}
	if err := placement(app, spec); err != nil {
		return nil, err
	}

	template := corev1ac.PodTemplateSpec().WithLabels(podLabels(app)).WithSpec(spec)
	if files != nil {
		template.WithLabels(map[string]string{LabelFiles: files.Hash})
	}
	if len(app.Spec.PodAnnotations) > 0 {
		template.WithAnnotations(app.Spec.PodAnnotations)
	}
	return template, nil
}

// container is the application's container.
func container(app *examplev1.MyApp) (*corev1ac.ContainerApplyConfiguration, error) {
	c := corev1ac.Container().
		WithName(ContainerName).
		WithImage(app.Spec.Image)
	for _, p := range appPorts(app) {
		c.WithPorts(corev1ac.ContainerPort().
			WithName(p.Name).
			WithContainerPort(p.Port).
			WithProtocol(portProtocol(p)))
	}
	if len(app.Spec.Command) > 0 {
		c.WithCommand(app.Spec.Command...)
	}
	if len(app.Spec.Args) > 0 {
		c.WithArgs(app.Spec.Args...)
	}
	if len(app.Spec.Env) > 0 {
		env, err := envVars("spec.env", app.Spec.Env)
		if err != nil {
			return nil, err
		}
		c.WithEnv(env...)
	}
	for _, from := range app.Spec.EnvFrom {
		c.WithEnvFrom(envFromSource(from))
	}
	mounts, err := volumeMounts("spec.volumeMounts", app, app.Spec.VolumeMounts)
	if err != nil {
		return nil, err
	}
	c.WithVolumeMounts(mounts...)
	pre, err := preStop(app)
	if err != nil {
		return nil, err
	}
	if pre != nil {
		c.WithLifecycle(corev1ac.Lifecycle().WithPreStop(pre))
	}
	res, err := resources("spec.resources", app.Spec.Resources)
	if err != nil {
		return nil, err
	}
	if res != nil {
		c.WithResources(res)
	}

	readiness := app.Spec.ReadinessProbe
	if readiness == nil {
		readiness = &examplev1.Probe{TCPSocket: &examplev1.TCPSocketProbe{}}
	}
	c.WithReadinessProbe(probe(readiness, app))
	if app.Spec.LivenessProbe != nil {
		c.WithLivenessProbe(probe(app.Spec.LivenessProbe, app))
	}
	if app.Spec.StartupProbe != nil {
		c.WithStartupProbe(probe(app.Spec.StartupProbe, app))
	}

	sc, err := containerSecurityContext(app.Spec.SecurityContext)
	if err != nil {
		return nil, err
	}
	security, err := convert[corev1ac.SecurityContextApplyConfiguration]("spec.securityContext", sc)
	if err != nil {
		return nil, err
	}
	return c.WithSecurityContext(security), nil
}

// volumeMounts are a container's mounts of spec.volumes (field is where they are in the
// spec).
func volumeMounts(field string, app *examplev1.MyApp, in []examplev1.VolumeMount) ([]*corev1ac.VolumeMountApplyConfiguration, error) {
	out := make([]*corev1ac.VolumeMountApplyConfiguration, 0, len(in))
	for _, m := range in {
		if !slices.ContainsFunc(app.Spec.Volumes, func(v examplev1.Volume) bool { return v.Name == m.Name }) {
			// Admission refuses this; checked here too, so that no input makes a pod the API
			// server refuses.
			return nil, &InvalidSpecError{Field: field, Message: fmt.Sprintf("%s names no volume of spec.volumes", m.Name)}
		}
		mount := corev1ac.VolumeMount().WithName(m.Name).WithMountPath(m.MountPath)
		if m.SubPath != "" {
			mount.WithSubPath(m.SubPath)
		}
		if m.ReadOnly {
			mount.WithReadOnly(true)
		}
		out = append(out, mount)
	}
	return out, nil
}

// podSecurityContext is the MyApp's pod security context with the restricted defaults in
// the fields it leaves out.
func podSecurityContext(in *corev1.PodSecurityContext) *corev1.PodSecurityContext {
	out := &corev1.PodSecurityContext{}
	if in != nil {
		out = in.DeepCopy()
	}
	if out.RunAsNonRoot == nil {
		out.RunAsNonRoot = &DefaultRunAsNonRoot
	}
	if out.SeccompProfile == nil {
		out.SeccompProfile = &corev1.SeccompProfile{Type: DefaultSeccompProfile}
	}
	return out
}

// containerSecurityContext is the MyApp's container security context with the restricted
// defaults in the fields it leaves out. A container that asks for privilege (privileged, or
// CAP_SYS_ADMIN added) gets no allowPrivilegeEscalation default: Kubernetes refuses a pod
// with allowPrivilegeEscalation false beside either.
func containerSecurityContext(in *corev1.SecurityContext) (*corev1.SecurityContext, error) {
	out := &corev1.SecurityContext{}
	if in != nil {
		out = in.DeepCopy()
	}
	privileged := (out.Privileged != nil && *out.Privileged) ||
		(out.Capabilities != nil && slices.Contains(out.Capabilities.Add, sysAdmin))
	switch {
	case out.AllowPrivilegeEscalation == nil && !privileged:
		out.AllowPrivilegeEscalation = &DefaultAllowPrivilegeEscalation
	case out.AllowPrivilegeEscalation != nil && !*out.AllowPrivilegeEscalation && privileged:
		// Admission refuses this since 0.3.1; an object stored before says what to change.
		return nil, &InvalidSpecError{Field: "spec.securityContext.allowPrivilegeEscalation",
			Message: "must not be false for a privileged container or one that adds CAP_SYS_ADMIN"}
	}
	if out.Capabilities == nil {
		out.Capabilities = &corev1.Capabilities{Drop: append([]corev1.Capability(nil), DefaultDropCapabilities...)}
	}
	return out, nil
}

// sysAdmin is the capability Kubernetes' validation names when it refuses
// allowPrivilegeEscalation false (pkg/apis/core/validation, ValidateSecurityContext).
const sysAdmin corev1.Capability = "CAP_SYS_ADMIN"

// probe turns a MyApp probe into the container's, aiming handlers without a port at the
// MyApp's port.
func probe(p *examplev1.Probe, app *examplev1.MyApp) *corev1ac.ProbeApplyConfiguration {
	out := corev1ac.Probe()
	namedPort := intstr.FromString(PortName)
	switch {
	case p.HTTPGet != nil:
		out.WithHTTPGet(httpGet(p.HTTPGet))
	case p.TCPSocket != nil:
		out.WithTCPSocket(corev1ac.TCPSocketAction().WithPort(valueOr(p.TCPSocket.Port, namedPort)))
	case p.GRPC != nil:
		grpc := corev1ac.GRPCAction().WithPort(valueOr(p.GRPC.Port, port(app)))
		if p.GRPC.Service != nil {
			grpc.WithService(*p.GRPC.Service)
		}
		out.WithGRPC(grpc)
	case p.Exec != nil:
		out.WithExec(corev1ac.ExecAction().WithCommand(p.Exec.Command...))
	}
	if p.InitialDelaySeconds != nil {
		out.WithInitialDelaySeconds(*p.InitialDelaySeconds)
	}
	if p.PeriodSeconds != nil {
		out.WithPeriodSeconds(*p.PeriodSeconds)
	}
	if p.TimeoutSeconds != nil {
		out.WithTimeoutSeconds(*p.TimeoutSeconds)
	}
	if p.SuccessThreshold != nil {
		out.WithSuccessThreshold(*p.SuccessThreshold)
	}
	if p.FailureThreshold != nil {
		out.WithFailureThreshold(*p.FailureThreshold)
	}
	return out
}

// httpGet is an HTTP GET of a probe or a hook: path "/" and the container's port by default.
func httpGet(h *examplev1.HTTPGetProbe) *corev1ac.HTTPGetActionApplyConfiguration {
	path := h.Path
	if path == "" {
		path = "/"
	}
	get := corev1ac.HTTPGetAction().WithPath(path).WithPort(valueOr(h.Port, intstr.FromString(PortName)))
	if h.Scheme != "" {
		get.WithScheme(corev1.URIScheme(h.Scheme))
	}
	for _, hd := range h.HTTPHeaders {
		get.WithHTTPHeaders(corev1ac.HTTPHeader().WithName(hd.Name).WithValue(hd.Value))
	}
	return get
}

// terminationGracePeriod is the grace period the pod template states, if any: the MyApp's,
// or the Kubernetes default once a preStop hook is set, so that the hook is always checked
// against the period the pods get.
func terminationGracePeriod(app *examplev1.MyApp) (int64, bool) {
	if app.Spec.TerminationGracePeriodSeconds != nil {
		return *app.Spec.TerminationGracePeriodSeconds, true
	}
	if app.Spec.Lifecycle != nil && app.Spec.Lifecycle.PreStop != nil {
		return DefaultTerminationGracePeriodSeconds, true
	}
	return 0, false
}

// preStop is the container's preStop hook, or nil. A sleep longer than the grace period is
// refused here as admission refuses it, for an object stored before the rule.
func preStop(app *examplev1.MyApp) (*corev1ac.LifecycleHandlerApplyConfiguration, error) {
	if app.Spec.Lifecycle == nil || app.Spec.Lifecycle.PreStop == nil {
		return nil, nil
	}
	h := app.Spec.Lifecycle.PreStop
	out := corev1ac.LifecycleHandler()
	switch {
	case h.Sleep != nil:
		grace, _ := terminationGracePeriod(app)
		if h.Sleep.Seconds < 0 || h.Sleep.Seconds > grace {
			return nil, &InvalidSpecError{Field: "spec.lifecycle.preStop.sleep.seconds",
				Message: fmt.Sprintf("must be from 0 to terminationGracePeriodSeconds (%d)", grace)}
		}
		out.WithSleep(corev1ac.SleepAction().WithSeconds(h.Sleep.Seconds))
	case h.Exec != nil:
		out.WithExec(corev1ac.ExecAction().WithCommand(h.Exec.Command...))
	case h.HTTPGet != nil:
		out.WithHTTPGet(httpGet(h.HTTPGet))
	default:
		return nil, &InvalidSpecError{Field: "spec.lifecycle.preStop", Message: "exactly one of exec, httpGet and sleep must be set"}
	}
	return out, nil
}

// placement copies tolerations, affinity and topology spread constraints onto the pod spec.
// A spread constraint without a label selector selects the MyApp's own pods.
func placement(app *examplev1.MyApp, spec *corev1ac.PodSpecApplyConfiguration) error {
	for i := range app.Spec.Tolerations {
		t, err := convert[corev1ac.TolerationApplyConfiguration](fmt.Sprintf("spec.tolerations[%d]", i), &app.Spec.Tolerations[i])
		if err != nil {
			return err
		}
		spec.WithTolerations(t)
	}
	if app.Spec.Affinity != nil {
		a, err := convert[corev1ac.AffinityApplyConfiguration]("spec.affinity", app.Spec.Affinity)
		if err != nil {
			return err
		}
		spec.WithAffinity(a)
	}
	for i := range app.Spec.TopologySpreadConstraints {
		t, err := convert[corev1ac.TopologySpreadConstraintApplyConfiguration](
			fmt.Sprintf("spec.topologySpreadConstraints[%d]", i), &app.Spec.TopologySpreadConstraints[i])
		if err != nil {
			return err
		}
		if t.LabelSelector == nil {
			t.WithLabelSelector(metav1ac.LabelSelector().WithMatchLabels(SelectorLabels(app)))
		}
		spec.WithTopologySpreadConstraints(t)
	}
	return nil
}

// convert turns a core API value into its apply configuration. The two share one JSON
// shape, so the round trip is exact; it fails only on values no API server stores.
func convert[T any](field string, in any) (*T, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, &InvalidSpecError{Field: field, Message: err.Error()}
	}
	out := new(T)
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, &InvalidSpecError{Field: field, Message: err.Error()}
	}
	return out, nil
}

// envVars are the container's variables. A divisor that is not a quantity (stored before a
// rule refused it) is an InvalidSpecError rather than a panic.
func envVars(field string, env []examplev1.EnvVar) ([]*corev1ac.EnvVarApplyConfiguration, error) {
	out := make([]*corev1ac.EnvVarApplyConfiguration, 0, len(env))
	for i, e := range env {
		v := corev1ac.EnvVar().WithName(e.Name)
		from := e.ValueFrom
		switch {
		case from != nil && from.SecretKeyRef != nil:
			v.WithValueFrom(corev1ac.EnvVarSource().WithSecretKeyRef(
				corev1ac.SecretKeySelector().WithName(from.SecretKeyRef.Name).WithKey(from.SecretKeyRef.Key)))
		case from != nil && from.ConfigMapKeyRef != nil:
			v.WithValueFrom(corev1ac.EnvVarSource().WithConfigMapKeyRef(
				corev1ac.ConfigMapKeySelector().WithName(from.ConfigMapKeyRef.Name).WithKey(from.ConfigMapKeyRef.Key)))
		case from != nil && from.FieldRef != nil:
			v.WithValueFrom(corev1ac.EnvVarSource().WithFieldRef(
				corev1ac.ObjectFieldSelector().WithAPIVersion("v1").WithFieldPath(from.FieldRef.FieldPath)))
		case from != nil && from.ResourceFieldRef != nil:
			sel, err := resourceFieldSelector(fmt.Sprintf("%s[%d].valueFrom.resourceFieldRef", field, i), from.ResourceFieldRef)
			if err != nil {
				return nil, err
			}
			v.WithValueFrom(corev1ac.EnvVarSource().WithResourceFieldRef(sel))
		case e.Value != nil && *e.Value != "":
			// An empty value is stored as no value; sending it would differ from what the
			// child holds at every comparison.
			v.WithValue(*e.Value)
		}
		out = append(out, v)
	}
	return out, nil
}

// resourceFieldSelector is a limit or request of the application's container, for a variable
// or a downward API file (field is where it is in the spec).
func resourceFieldSelector(field string, ref *examplev1.ResourceFieldSelector) (*corev1ac.ResourceFieldSelectorApplyConfiguration, error) {
	sel := corev1ac.ResourceFieldSelector().WithResource(ref.Resource)
	if d := ref.Divisor; d != nil {
		q, err := resource.ParseQuantity(string(*d))
		if err != nil {
			return nil, &InvalidSpecError{Field: field + ".divisor", Message: fmt.Sprintf("%q is not a Kubernetes quantity", string(*d))}
		}
		divisor, ok := Divisor(ref.Resource, q)
		if !ok {
			return nil, &InvalidSpecError{Field: field + ".divisor", Message: fmt.Sprintf("%q is not a divisor Kubernetes accepts for %s", string(*d), ref.Resource)}
		}
		if divisor != nil {
			sel.WithDivisor(*divisor)
		}
	}
	return sel, nil
}

// cpuDivisors and otherDivisors are the divisors Kubernetes accepts for a container resource,
// each in the only spelling it accepts: its pod validation (validateContainerResourceDivisor)
// compares the quantity's canonical form with these, so that it takes 1000m as a cpu divisor
// but refuses 1e3 as a memory divisor, though it is worth 1k.
var (
	cpuDivisors   = []string{"1", "1m"}
	otherDivisors = []string{"1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"}
)

// Divisor is the divisor of a resourceFieldRef of resourceName as the pod template carries it,
// from the quantity the MyApp gives: the divisor Kubernetes accepts of the same value, so that
// any spelling of it works (1000m, 0.001k and 1 are one cpu divisor; 1048576 and 1024Ki are
// 1Mi), or nil for 0, which Kubernetes takes as no divisor (1). ok is false when no divisor
// Kubernetes accepts has that value (api/v1 refuses such a MyApp).
func Divisor(resourceName string, q resource.Quantity) (divisor *resource.Quantity, ok bool) {
	if q.IsZero() {
		return nil, true
	}
	allowed := otherDivisors
	if resourceName == "limits.cpu" || resourceName == "requests.cpu" {
		allowed = cpuDivisors
	}
	for _, s := range allowed {
		if d := resource.MustParse(s); d.Cmp(q) == 0 {
			return &d, true
		}
	}
	return nil, false
}

// envFromSource is one ConfigMap or Secret whose keys become variables.
func envFromSource(from examplev1.EnvFromSource) *corev1ac.EnvFromSourceApplyConfiguration {
	out := corev1ac.EnvFromSource()
	if from.Prefix != "" {
		out.WithPrefix(from.Prefix)
	}
	if ref := from.ConfigMapRef; ref != nil {
		cm := corev1ac.ConfigMapEnvSource().WithName(string(ref.Name))
		if ref.Optional != nil {
			cm.WithOptional(*ref.Optional)
		}
		out.WithConfigMapRef(cm)
	}
	if ref := from.SecretRef; ref != nil {
		sec := corev1ac.SecretEnvSource().WithName(string(ref.Name))
		if ref.Optional != nil {
			sec.WithOptional(*ref.Optional)
		}
		out.WithSecretRef(sec)
	}
	return out
}

// resources parses the MyApp's quantities, without panicking on any input, and checks what
// admission checks, so that an object stored before a rule existed yields an
// InvalidSpecError rather than a child the API server rejects. It returns nil when the MyApp
// sets none.
func resources(field string, r *examplev1.ResourceRequirements) (*corev1ac.ResourceRequirementsApplyConfiguration, error) {
	if r == nil || (len(r.Limits) == 0 && len(r.Requests) == 0) {
		return nil, nil
	}
	limits, err := resourceList(field+".limits", r.Limits)
	if err != nil {
		return nil, err
	}
	requests, err := resourceList(field+".requests", r.Requests)
	if err != nil {
		return nil, err
	}
	for _, name := range sortedNames(requests) {
		lim, hasLim := limits[name]
		if req := requests[name]; hasLim && req.Cmp(lim) > 0 {
			return nil, &InvalidSpecError{
				Field:   field + ".requests." + string(name),
				Message: "must not exceed limits." + string(name),
			}
		}
	}
	out := corev1ac.ResourceRequirements()
	if len(limits) > 0 {
		out.WithLimits(limits)
	}
	if len(requests) > 0 {
		out.WithRequests(requests)
	}
	return out, nil
}

func resourceList(path string, in map[corev1.ResourceName]examplev1.Quantity) (corev1.ResourceList, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(corev1.ResourceList, len(in))
	for name, raw := range in {
		q, err := resource.ParseQuantity(string(raw))
		if err != nil || q.Sign() < 0 {
			return nil, &InvalidSpecError{
				Field:   path + "." + string(name),
				Message: fmt.Sprintf("%q is not a non-negative Kubernetes quantity", string(raw)),
			}
		}
		out[name] = q
	}
	return out, nil
}

// sortedNames fixes the order in which resources are checked, so that the same invalid
// MyApp always yields the same error.
func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}
