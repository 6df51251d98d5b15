// Package rollout decides what the operator does about the rollout of a MyApp's Deployment:
// which pod template is judged, whether its rollout completed or failed, which rollback is in
// force, and whether to roll back now. It is pure: it reads facts the reconciler gathered from
// stored objects (the MyApp, the Deployment, its ReplicaSets and pods, the ControllerRevisions)
// and the clock, and it answers; the reconciler records the answer, then acts on it.
//
// The rules are those of docs/design/rollout-decision.md. A wrong rollback is an outage the
// operator caused, so every rule judges only what the deployment controller has observed and
// what is stored, never what one reconcile happened to see: a template is judged once the
// Deployment's observedGeneration covers it and only by its own pods; a template that completed
// its rollout is never rolled back; a rollback target is a template that served; the grace of a
// pod problem starts when the problem is first seen; and a rollback is recorded before it is
// applied, and holds from whichever record a reconcile sees first.
//
// A look reads the facts (CurrentTemplate and DeadlineExceeded read two of them from the
// Deployment and its ReplicaSets, Family names a pod problem), asks Held which rollback is in
// force and applies the Deployment accordingly, then asks Judge; a verdict that acts is
// confirmed with Confirm on the API server's word before it is recorded and carried out.
// model_test.go drives these functions through that protocol over a simulated cluster, and
// checks the design's invariants after every step.
package rollout

import (
	"time"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Reasons a rollout fails for beside examplev1.ReasonImagePullBackOff, ReasonInvalidImageName,
// ReasonCreateContainerConfigError and ReasonProgressDeadlineExceeded: a RollbackStatus and a
// Failure carry them.
const (
	// ReasonCrashLoopBackOff is examplev1.ReasonCrashLoopBackOff: the new template's pods
	// crash-loop.
	ReasonCrashLoopBackOff = examplev1.ReasonCrashLoopBackOff
	// ReasonVolumeSourceMissing is examplev1.ReasonVolumeSourceMissing: a volume's source does
	// not exist. The kubelet reports no waiting reason for it, so the reconciler names it from
	// the sources it knows the template refers to.
	ReasonVolumeSourceMissing = examplev1.ReasonVolumeSourceMissing
)

// Verdict is the decision about one look at a MyApp's rollout.
type Verdict struct {
	// Judged is the pod-template-hash of the template judged: the Deployment's current
	// template once the deployment controller observed it. It is empty when nothing is judged:
	// the spec's template is unknown, there is no Deployment, the deployment controller has
	// not observed its generation, it is paused, or the current ReplicaSet is not known.
	Judged string
	// Completed says that the judged template completed its rollout.
	Completed bool
	// ReadyTemplate is the status.readyTemplate to store next. It moves to Judged only when
	// Judged completed and the Deployment's applied intent is known, because the caller must
	// store that intent (a ControllerRevision) before the status names the template: a
	// rollback target is applied from its stored intent. (Confirm moves it only to the template
	// of the Deployment judged from the cache.)
	ReadyTemplate string
	// Failure is the judged template's failure once it is due, or nil. Only the spec's own
	// template fails: one the Deployment carries while a rollback holds is not judged for it.
	Failure *Failure
	// RollBack, when set, is the rollback to make now. The caller records it in the MyApp's
	// status (writing its Message), then applies the target's stored intent with the record
	// as the Deployment's mark; the design's "Record, then act" says why in that order.
	RollBack *examplev1.RollbackStatus
	// Recheck is how soon a problem of the judged template that is still within its grace
	// becomes due, while no failure is due; zero when there is none. The caller looks again
	// then: no watch event marks the end of a grace.
	Recheck time.Duration
}

// Failure is why the rollout of the judged template failed.
type Failure struct {
	// Reason is the family of the problem that decided it (Family), or
	// examplev1.ReasonProgressDeadlineExceeded when the deployment controller's progress
	// deadline passed and no pod problem is due.
	Reason string
	// Problem is the pod problem that decided it, the first in a stable order (most specific
	// reason first, then pod, then container), so that a message built from it does not move
	// between pods; nil for a passed progress deadline.
	Problem *Problem
}
