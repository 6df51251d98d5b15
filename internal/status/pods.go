package status

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// ContainerWaiting is a container of one of the MyApp's pods that waits for a reason the
// user must fix, as the kubelet reports it in the pod's status.
type ContainerWaiting struct {
	Pod, Container string
	// Reason and Message are the kubelet's (containerStatuses[].state.waiting).
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
}

// UserMustFix tells whether a container waiting with the kubelet's reason cannot start
// until the user changes something. The operator's pod cache keeps only such states.
func UserMustFix(kubeletReason string) bool {
	_, ok := podReasons[kubeletReason]
	return ok
}

// podOrder is the order in which problems are reported when several pods have one: the
// most specific first, so that the message does not move between them.
var podOrder = []string{examplev1.ReasonCreateContainerConfigError, examplev1.ReasonInvalidImageName, examplev1.ReasonImagePullBackOff}

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
	var msg string
	switch reason {
	case examplev1.ReasonCreateContainerConfigError:
		detail := podNameInMessage.ReplaceAllString(strings.TrimSpace(first.Message), "")
		msg = fmt.Sprintf("The pods of MyApp %s cannot start container %s: %s. %s", app.Name, first.Container, detail, configHint(detail))
	case examplev1.ReasonInvalidImageName:
		msg = fmt.Sprintf("The pods of MyApp %s cannot start: the kubelet cannot parse image %q. Fix spec.image", app.Name, app.Spec.Image)
	default:
		// The registry's answer varies between attempts (and between ErrImagePull and
		// ImagePullBackOff), so it stays out of the status; kubectl describe shows it.
		msg = fmt.Sprintf("The pods of MyApp %s cannot pull image %q. Check spec.image, and spec.imagePullSecrets for a "+
			"private registry; `kubectl describe pods -l myapp.example.com/name=%s` shows the registry's answer",
			app.Name, app.Spec.Image, app.Name)
	}
	return &Failure{Reason: reason, Message: msg}
}

// podNameInMessage matches the pod the kubelet names at the end of some messages, e.g.
// `container has runAsNonRoot and image will run as root (pod: "web-5d4b8-x_ns(uid)",
// container: app)`: the pod changes, the problem does not.
var podNameInMessage = regexp.MustCompile(`\s*\(pod: "[^"]*", container: [^)]*\)$`)

// configHint says what to fix for a CreateContainerConfigError, from the kubelet's message.
func configHint(kubeletMessage string) string {
	switch m := strings.ToLower(kubeletMessage); {
	case strings.Contains(m, "runasnonroot"):
		return "Use an image that runs as a non-root user, set spec.securityContext.runAsUser to a non-zero UID, " +
			"or set spec.podSecurityContext.runAsNonRoot: false"
	case strings.Contains(m, "secret") || strings.Contains(m, "configmap"):
		return "Create the Secret or ConfigMap (with the key) that spec.env refers to, in the MyApp's namespace, or change the reference"
	default:
		return "Check spec.env, spec.securityContext and spec.podSecurityContext"
	}
}
