package status

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// ContainerWaiting is a container of one of the MyApp's pods that waits for a reason the
// user must fix, as the kubelet reports it in the pod's status.
type ContainerWaiting struct {
	Pod, Container string
	// Image is the image the container runs (its pod's spec), which may be an older
	// template's.
	Image string
	// Reason and Message are the kubelet's (containerStatuses[].state.waiting); or, for a
	// volume source that does not exist, examplev1.ReasonVolumeSourceMissing and the source
	// with the field naming it (Pod and Container empty).
	Reason, Message string
}

// podReasons maps the kubelet's waiting reasons that only the user can fix to the MyApp's
// condition reason. CrashLoopBackOff is deliberately absent: a crash may come from a
// dependency that recovers on its own, the container leaves that state at each restart (a
// condition built on it would flap, with an event per restart), and the Deployment already
// reports it: Ready is False (Unavailable) at once, and Stalled (ProgressDeadlineExceeded)
// when a rollout cannot finish.
var podReasons = map[string]string{
	"CreateContainerConfigError": examplev1.ReasonCreateContainerConfigError,
	"ErrImagePull":               examplev1.ReasonImagePullBackOff,
	"ImagePullBackOff":           examplev1.ReasonImagePullBackOff,
	"InvalidImageName":           examplev1.ReasonInvalidImageName,
	// Not the kubelet's: the reconciler names a volume source that does not exist.
	examplev1.ReasonVolumeSourceMissing: examplev1.ReasonVolumeSourceMissing,
}

// UserMustFix tells whether a container waiting with the kubelet's reason cannot start
// until the user changes something. The operator's pod cache keeps only such states.
func UserMustFix(kubeletReason string) bool {
	_, ok := podReasons[kubeletReason]
	return ok
}

// podOrder is the order in which problems are reported when several pods have one: the
// most specific first, so that the message does not move between them.
var podOrder = []string{examplev1.ReasonCreateContainerConfigError, examplev1.ReasonVolumeSourceMissing, examplev1.ReasonInvalidImageName,
	examplev1.ReasonImagePullBackOff}

// podsProblem reports the first problem, in a stable order, among the containers that
// cannot start; decide makes it Stalled only when it blocks the MyApp. Its message names
// neither pods nor times, so it holds while the problem does, across pod restarts and
// replacements.
func podsProblem(app *examplev1.MyApp, waiting []ContainerWaiting) *Failure {
	var first *ContainerWaiting
	rank := func(w *ContainerWaiting) int { return slices.Index(podOrder, podReasons[w.Reason]) }
	for i := range waiting {
		w := &waiting[i]
		if !UserMustFix(w.Reason) {
			continue
		}
		if first == nil || cmp.Or(cmp.Compare(rank(w), rank(first)), cmp.Compare(w.Pod, first.Pod),
			cmp.Compare(w.Container, first.Container)) < 0 {
			first = w
		}
	}
	if first == nil {
		return nil
	}
	reason := podReasons[first.Reason]
	c := containerOf(app, first.Container)
	image := cmp.Or(first.Image, c.image)
	// The kubelet's and the registry's messages vary between attempts and name pods; they
	// stay out of the status, which is built from the reason, the container and its image.
	// `kubectl describe pods` shows them.
	var msg string
	switch reason {
	case examplev1.ReasonCreateContainerConfigError:
		msg = fmt.Sprintf("The pods of MyApp %s cannot create %s %s from its configuration (CreateContainerConfigError). %s; "+
			"`kubectl describe pods -l %s=%s` shows the kubelet's answer", app.Name, c.kind, first.Container, configHint(c, first.Message), selectorLabel, app.Name)
	case examplev1.ReasonInvalidImageName:
		msg = fmt.Sprintf("The pods of MyApp %s cannot start: the kubelet cannot parse image %q%s. Fix %s.image", app.Name, image, c.of(), c.field)
	case examplev1.ReasonVolumeSourceMissing:
		msg = fmt.Sprintf("The pods of MyApp %s cannot start: %s does not exist, and they wait to mount it. "+
			"Create it in the MyApp's namespace or fix the name (a ConfigMap's volume may also be made optional)", app.Name, first.Message)
	default:
		msg = fmt.Sprintf("The pods of MyApp %s cannot pull image %q%s. Check %s.image, and spec.imagePullSecrets for a "+
			"private registry; `kubectl describe pods -l %s=%s` shows the registry's answer",
			app.Name, image, c.of(), c.field, selectorLabel, app.Name)
	}
	return &Failure{Reason: reason, Message: msg}
}

// configHint says what to fix for a CreateContainerConfigError. The kubelet's message only
// picks the kind of hint, and which kind of object (a Secret, a ConfigMap) to list the
// references to when it names only one; what the hint names comes from the MyApp's spec.
func configHint(c container, kubeletMessage string) string {
	m := strings.ToLower(kubeletMessage)
	secret, configMap := strings.Contains(m, "secret"), strings.Contains(m, "configmap")
	switch {
	case strings.Contains(m, "runasnonroot") && c.isApp():
		return "Use an image that runs as a non-root user, set spec.securityContext.runAsUser to a non-zero UID, " +
			"or set spec.podSecurityContext.runAsNonRoot: false"
	case strings.Contains(m, "runasnonroot"):
		return fmt.Sprintf("Use an image for %s that runs as a non-root user, set spec.podSecurityContext.runAsUser to a non-zero UID, "+
			"or set spec.podSecurityContext.runAsNonRoot: false", c.field)
	case secret || configMap:
		hint := fmt.Sprintf("Create the Secret or ConfigMap (with the key) that %s.env or %s.envFrom refers to, in the MyApp's namespace, or change the reference", c.field, c.field)
		refs := envReferences(c, secret && !configMap, configMap && !secret)
		if refs == "" {
			refs = envReferences(c, false, false)
		}
		if refs != "" {
			hint += " (" + refs + ")"
		}
		return hint
	case c.isApp():
		return "Check spec.env, spec.envFrom, spec.securityContext and spec.podSecurityContext"
	default:
		return fmt.Sprintf("Check %s.env, %s.envFrom and spec.podSecurityContext", c.field, c.field)
	}
}

// container is a container of the MyApp's pods as the status names it: its kind ("container"
// for the application's, "init container" or "sidecar"), the field of the spec that holds it,
// and what that field sets.
type container struct {
	kind, name, field, image string
	env                      []examplev1.EnvVar
	envFrom                  []examplev1.EnvFromSource
}

// appField is the field of the spec that holds the application's container: the spec itself.
const appField = "spec"

func (c container) isApp() bool { return c.field == appField }

// of names the container after an image, when it is not the application's.
func (c container) of() string {
	if c.isApp() {
		return ""
	}
	return fmt.Sprintf(" of %s %s", c.kind, c.name)
}

// containerOf finds the container of that name in the MyApp's spec: one of its init
// containers, or else the application's (a pod of an older template may run containers the
// spec no longer has; the application's own fields are the ones to check then).
func containerOf(app *examplev1.MyApp, name string) container {
	for i := range app.Spec.InitContainers {
		ic := &app.Spec.InitContainers[i]
		if ic.Name != name {
			continue
		}
		kind := "init container"
		if ic.IsSidecar() {
			kind = "sidecar"
		}
		return container{kind: kind, name: name, field: examplev1.InitContainerField(i), image: ic.Image, env: ic.Env, envFrom: ic.EnvFrom}
	}
	return container{kind: "container", name: name, field: appField, image: app.Spec.Image, env: app.Spec.Env, envFrom: app.Spec.EnvFrom}
}

// maxEnvReferences bounds the references a hint lists, so that a long spec does not make a
// long condition.
const maxEnvReferences = 8

// envReferences lists, in the spec's order, what the container's env and envFrom take from
// Secrets and ConfigMaps and a pod cannot start without, each with its field: `Secret db key password
// (spec.env[1].valueFrom.secretKeyRef), ConfigMap ui (spec.envFrom[0].configMapRef)`. An
// envFrom source with optional: true is left out: its absence stops no pod. onlySecrets and
// onlyConfigMaps keep one kind.
func envReferences(c container, onlySecrets, onlyConfigMaps bool) string {
	var refs []string
	for i, e := range c.env {
		switch v := e.ValueFrom; {
		case v == nil:
		case v.SecretKeyRef != nil && !onlyConfigMaps:
			refs = append(refs, fmt.Sprintf("Secret %s key %s (%s.env[%d].valueFrom.secretKeyRef)", v.SecretKeyRef.Name, v.SecretKeyRef.Key, c.field, i))
		case v.ConfigMapKeyRef != nil && !onlySecrets:
			refs = append(refs, fmt.Sprintf("ConfigMap %s key %s (%s.env[%d].valueFrom.configMapKeyRef)", v.ConfigMapKeyRef.Name, v.ConfigMapKeyRef.Key, c.field, i))
		}
	}
	required := func(ref *examplev1.EnvFromReference) bool {
		return ref != nil && (ref.Optional == nil || !*ref.Optional)
	}
	for i, from := range c.envFrom {
		switch {
		case required(from.SecretRef) && !onlyConfigMaps:
			refs = append(refs, fmt.Sprintf("Secret %s (%s.envFrom[%d].secretRef)", from.SecretRef.Name, c.field, i))
		case required(from.ConfigMapRef) && !onlySecrets:
			refs = append(refs, fmt.Sprintf("ConfigMap %s (%s.envFrom[%d].configMapRef)", from.ConfigMapRef.Name, c.field, i))
		}
	}
	if len(refs) > maxEnvReferences {
		refs = append(refs[:maxEnvReferences], fmt.Sprintf("and %d more", len(refs)-maxEnvReferences))
	}
	return strings.Join(refs, ", ")
}
