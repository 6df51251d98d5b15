package status

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// reasonCrashLoopBackOff is the kubelet's waiting reason of a container that keeps exiting.
// It is no status problem of its own (podReasons says why), but a template whose new pods
// crash-loop while the last Ready one ran has failed its rollout.
const reasonCrashLoopBackOff = "CrashLoopBackOff"

// DefaultRolloutFailureGrace is how long a pod of a new template may wait for a reason that
// blocks its rollout before the rollout counts as failed: a registry that refuses one pull, a
// first crash, a Secret created a few seconds after the Deployment do not roll back.
const DefaultRolloutFailureGrace = 30 * time.Second

// BlocksRollout tells whether a container waiting with the kubelet's reason keeps a new pod
// template from rolling out: what the user must fix (UserMustFix), and a crash loop. The
// operator's pod cache keeps only such states.
func BlocksRollout(kubeletReason string) bool {
	return UserMustFix(kubeletReason) || kubeletReason == reasonCrashLoopBackOff
}

// RolloutFailure tells whether the rollout of the Deployment's current pod template failed
// for a reason tied to that template, from the waiting containers of that template's pods
// (pods) and the Deployment, at now: while the rollout is not complete, a container that
// cannot pull or parse its image, cannot be created from its configuration or crash-loops,
// in a pod older than grace; or the deployment controller's progress deadline passed for the
// Deployment's latest generation. A rollout that is only slow has not failed before its
// deadline. reason is the kubelet's (ErrImagePull as ImagePullBackOff) or
// ProgressDeadlineExceeded; message says what failed. recheck, when set, is how soon a pod
// problem still within its grace counts.
func RolloutFailure(app *examplev1.MyApp, d *appsv1.Deployment, pods []ContainerWaiting, now time.Time, grace time.Duration) (reason, message string, failed bool, recheck time.Duration) {
	if d == nil || !rolloutIncomplete(d) {
		return "", "", false, 0
	}
	due := make([]ContainerWaiting, 0, len(pods))
	for _, w := range pods {
		if !BlocksRollout(w.Reason) {
			continue
		}
		if wait := w.Since.Add(grace).Sub(now); wait > 0 {
			if recheck == 0 || wait < recheck {
				recheck = wait
			}
			continue
		}
		due = append(due, w)
	}
	if p := podsProblem(app, due); p != nil {
		return p.Reason, p.Message, true, 0
	}
	for _, w := range due {
		if w.Reason == reasonCrashLoopBackOff {
			return reasonCrashLoopBackOff, fmt.Sprintf("The pods of MyApp %s keep exiting (CrashLoopBackOff): container %s of image %q; "+
				"`kubectl logs -l %s=%s --previous` shows why", app.Name, w.Container, w.Image, selectorLabel, app.Name), true, 0
		}
	}
	if d.Status.ObservedGeneration >= d.Generation && progressDeadlineExceeded(d) {
		return examplev1.ReasonProgressDeadlineExceeded, fmt.Sprintf("Deployment %s did not finish rolling out within its progress deadline", d.Name), true, 0
	}
	return "", "", false, recheck
}

// rolloutIncomplete tells whether the Deployment has not finished rolling out its current
// template: the deployment controller has not observed it, pods of an older template remain,
// or not every pod it wants runs the template and is available.
func rolloutIncomplete(d *appsv1.Deployment) bool {
	s := d.Status
	return s.ObservedGeneration < d.Generation || s.Replicas > s.UpdatedReplicas ||
		s.UpdatedReplicas < wantedReplicas(d) || s.AvailableReplicas < s.UpdatedReplicas
}

// Digest is a SHA-256 of s, in hex, as the rollback records what it holds for; "" for "".
func Digest(s string) string {
	if s == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// RollbackHolds tells whether the rollback rb still holds for a MyApp whose spec asks for the
// pod template of digest spec: it was made for that template and for the MyApp's current
// reconcile request. Until either changes, the operator keeps the Deployment on the template
// it returned to and does not try the failed one again.
func RollbackHolds(rb *examplev1.RollbackStatus, app *examplev1.MyApp, spec string) bool {
	return rb != nil && rb.FailedSpec == spec && rb.ReconcileRequest == Digest(app.Annotations[examplev1.ReconcileRequestAnnotation])
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
