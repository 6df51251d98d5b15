package rollout

import (
	"time"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Facts is everything the decision reads: stored state, what this reconcile's apply answered,
// the first sightings of pod problems, and the clock.
type Facts struct {
	// Spec is what the MyApp's spec asks.
	Spec Spec
	// ReadyTemplate is status.readyTemplate: the pod-template-hash of the last template
	// whose rollout completed, and the rollback target.
	ReadyTemplate string
	// RolledBack is status.rolledBack, the rollback recorded in the MyApp's status.
	RolledBack *examplev1.RollbackStatus
	// Deployment is what the decision reads of the stored Deployment; nil while there is none.
	Deployment *Deployment
	// Problems are the problems of the MyApp's pods, of any template: the decision picks
	// those of the template it judges.
	Problems []Problem
	// TargetStored says that the intent of ReadyTemplate is stored (its ControllerRevision),
	// or that its ReplicaSet still exists: without either there is nothing to return to.
	TargetStored bool
	// TargetIntent is the digest of the intent stored for ReadyTemplate (in Spec.Template's
	// terms), "" when only its ReplicaSet is known. A target of the spec's own intent differs
	// from the failing template only in fields other managers own (`kubectl rollout restart`'s
	// annotation, which a recreated Deployment also loses): applying it changes nothing.
	TargetIntent string
	// Now is the clock at this look.
	Now time.Time
	// Grace is how long a pod problem must last, from its first sighting, before the
	// rollout of its template counts as failed: a registry that refuses one pull, a first
	// crash, a Secret created a few seconds after the Deployment do not roll back.
	Grace time.Duration
}

// Spec is what the MyApp's spec asks for its pod template.
type Spec struct {
	// Generation is the MyApp's metadata.generation.
	Generation int64
	// Template is a digest of the operator's intent for the pod template (the fields it
	// applies), or "" while it is unknown because an input of it could not be read (a
	// ConfigMap the template takes a hash of). While it is unknown nothing is judged and a
	// recorded rollback stays in force.
	Template string
	// Request is a digest of the reconcile-request annotation's value, "" when there is none.
	// A new request asks to try a template that was rolled back again.
	Request string
	// AutoRollback is spec.autoRollback (true unless set to false).
	AutoRollback bool
}

// Deployment is what the decision reads of the stored Deployment, and what this reconcile's
// apply answered.
type Deployment struct {
	// Generation and ObservedGeneration are metadata.generation and
	// status.observedGeneration. Until the second covers the first, the deployment controller
	// has not acted on the spec: its counts, its revision and its pods are an older spec's.
	Generation, ObservedGeneration int64
	// Paused is spec.paused. A paused Deployment's observedGeneration moves without a
	// rollout: the deployment controller does not create the new template's ReplicaSet.
	Paused bool
	// Replicas is spec.replicas, 1 when unset (the API server's default).
	Replicas int32
	// StatusReplicas, UpdatedReplicas and AvailableReplicas are status.replicas,
	// status.updatedReplicas and status.availableReplicas.
	StatusReplicas, UpdatedReplicas, AvailableReplicas int32
	// NewReplicaSetAvailable says that the Progressing condition is True with reason
	// NewReplicaSetAvailable.
	NewReplicaSetAvailable bool
	// DeadlineExceeded says that the Progressing condition is False with reason
	// ProgressDeadlineExceeded for the ReplicaSet at the Deployment's revision
	// (DeadlineExceeded reads it): a deadline passed for another template does not count.
	DeadlineExceeded bool
	// Current is the pod-template-hash of the ReplicaSet the Deployment controls at the
	// Deployment's revision, "" while it is not known (no revision yet, its ReplicaSet not in
	// the cache yet, or a ReplicaSet moved past it): CurrentTemplate reads it.
	Current string
	// Mark is the rollback recorded on the Deployment, by an annotation the rollback's apply
	// writes with the target template; nil when there is none. It holds the rollback when the
	// status that records it is not seen yet.
	Mark *examplev1.RollbackStatus
	// Applied is the digest of the template intent the Deployment carries after this
	// reconcile's apply (in Spec.Template's terms), "" when it is not known because the apply
	// failed. The spec's template is judged only while the Deployment carries it.
	Applied string
}

// Problem is a problem of one container of one of the MyApp's pods that keeps the pod from
// serving.
type Problem struct {
	// Template is the pod's pod-template-hash.
	Template string
	// Pod and Container name the container; Image is the image it runs.
	Pod, Container, Image string
	// Reason is the kubelet's waiting reason (ErrImagePull, ImagePullBackOff,
	// InvalidImageName, CreateContainerConfigError, CrashLoopBackOff), or
	// ReasonVolumeSourceMissing; Message is the kubelet's. Other reasons are no problem.
	Reason, Message string
	// FirstSeen is when the running manager first saw this container with a problem of this
	// reason's family. It lives in the manager's memory: a restart restarts it, which can
	// only delay a rollback. A zero FirstSeen counts as seen now.
	FirstSeen time.Time
}
