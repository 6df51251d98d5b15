package status

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// DefaultRolloutFailureGrace is how long a problem of the pods of a new template must last,
// from when it was first seen, before the rollout counts as failed (internal/rollout): a
// registry that refuses one pull, a first crash, a Secret created a few seconds after the
// Deployment do not roll back.
const DefaultRolloutFailureGrace = 30 * time.Second

// BlocksRollout tells whether a container waiting with the kubelet's reason keeps a new pod
// template from rolling out: what the user must fix (UserMustFix), and a crash loop. The
// operator's pod cache keeps only such states.
func BlocksRollout(kubeletReason string) bool {
	return UserMustFix(kubeletReason) || kubeletReason == examplev1.ReasonCrashLoopBackOff
}

// Digest is a SHA-256 of s, in hex, as the rollback records what it holds for; "" for "".
func Digest(s string) string {
	if s == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// AutoRollback tells whether the MyApp lets the operator roll a failed rollout back: unless
// spec.autoRollback is false.
func AutoRollback(app *examplev1.MyApp) bool {
	return app.Spec.AutoRollback == nil || *app.Spec.AutoRollback
}

// rolledBack is the Stalled problem of a MyApp whose failed rollout was rolled back.
func rolledBack(rb *examplev1.RollbackStatus) *Failure {
	return &Failure{Reason: examplev1.ReasonRolledBack, Terminal: true, Message: rb.Message}
}

// RolloutProblemMessage says, in the operator's words, what keeps a container of a new template
// from rolling out: the status's message for a problem the user must fix, or that it keeps
// exiting. The rollback's message repeats it.
func RolloutProblemMessage(app *examplev1.MyApp, w ContainerWaiting) string {
	if p := podsProblem(app, []ContainerWaiting{w}); p != nil {
		return p.Message
	}
	c := containerOf(app, w.Container)
	return fmt.Sprintf("The pods of MyApp %s keep exiting (%s): %s %s of image %q; `kubectl logs -l %s=%s -c %s --previous` shows why",
		app.Name, w.Reason, c.kind, w.Container, cmp.Or(w.Image, c.image), selectorLabel, app.Name, w.Container)
}

// DeadlineMessage says that the Deployment passed its progress deadline rolling out.
func DeadlineMessage(deployment string) string {
	return fmt.Sprintf("Deployment %s did not finish rolling out within its progress deadline", deployment)
}
