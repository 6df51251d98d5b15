package status

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// reasonCrashLoopBackOff is the kubelet's waiting reason of a container that keeps exiting.
// It is no status problem of its own (podReasons says why), but a template whose new pods
// crash-loop while the last Ready one ran has failed its rollout.
const reasonCrashLoopBackOff = "CrashLoopBackOff"

// BlocksRollout tells whether a container waiting with the kubelet's reason keeps a new pod
// template from rolling out: what the user must fix (UserMustFix), and a crash loop. The
// operator's pod cache keeps only such states.
func BlocksRollout(kubeletReason string) bool {
	return UserMustFix(kubeletReason) || kubeletReason == reasonCrashLoopBackOff
}

// RolloutFailure tells whether the rollout of the Deployment's current pod template failed
// for a reason tied to that template, from the waiting containers of that template's pods
// (pods) and the Deployment: a container that cannot pull or parse its image, cannot be
// created from its configuration or crash-loops, or the deployment controller's progress
// deadline passed for the Deployment's latest generation. A rollout that is only slow has
// not failed before its deadline. reason is the kubelet's (ErrImagePull as
// ImagePullBackOff) or ProgressDeadlineExceeded; message says what failed.
func RolloutFailure(app *examplev1.MyApp, d *appsv1.Deployment, pods []ContainerWaiting) (reason, message string, failed bool) {
	if p := podsProblem(app, pods); p != nil {
		return p.Reason, p.Message, true
	}
	for _, w := range pods {
		if w.Reason == reasonCrashLoopBackOff {
			return reasonCrashLoopBackOff, fmt.Sprintf("The pods of MyApp %s keep exiting (CrashLoopBackOff): container %s of image %q; "+
				"`kubectl logs -l %s=%s --previous` shows why", app.Name, w.Container, w.Image, selectorLabel, app.Name), true
		}
	}
	if d != nil && d.Status.ObservedGeneration >= d.Generation && progressDeadlineExceeded(d) {
		return examplev1.ReasonProgressDeadlineExceeded, fmt.Sprintf("Deployment %s did not finish rolling out within its progress deadline", d.Name), true
	}
	return "", "", false
}

// RollbackHeld tells whether the MyApp's stored rollback still holds: it was made for the
// MyApp's current generation and reconcile request. Until either changes, the operator keeps
// the Deployment on the template it returned to and does not try the failed one again.
func RollbackHeld(app *examplev1.MyApp) bool {
	rb := app.Status.RolledBack
	return rb != nil && rb.Generation == app.Generation &&
		rb.ReconcileRequest == app.Annotations[examplev1.ReconcileRequestAnnotation]
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
