package desired

import (
	"strconv"
	"strings"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// AutoscalerStartReplicas is the count a Deployment is handed to its new autoscaler with: the
// current count brought within [minReplicas, maxReplicas]. An autoscaler never scales a target
// that runs 0 pods (it reports ScalingDisabled), so a MyApp scaled to zero whose autoscaling is
// turned on starts at minReplicas.
func AutoscalerStartReplicas(app *examplev1.MyApp, current int32) int32 {
	minReplicas, maxReplicas := autoscalerRange(app)
	return min(max(current, minReplicas), maxReplicas)
}

// AnnotationReplicas is on every Deployment the operator applies and says who sets its replica
// count, so that the fact outlives the reconcile that learnt it:
//
//   - "spec": the operator applies the MyApp's spec.replicas;
//   - "autoscaler,spec=<n>": autoscaling is on; n is the MyApp's spec.replicas then;
//   - "kept=<n>": the hand-over after autoscaling was turned off keeps n, the count the
//     autoscaler left.
const AnnotationReplicas = "myapp.example.com/replicas"

// DeploymentReplicas is what the Deployment as stored says about its replica count.
type DeploymentReplicas struct {
	// Replicas is the Deployment's spec.replicas.
	Replicas *int32
	// Annotation is the Deployment's AnnotationReplicas, "" when it has none.
	Annotation string
	// HeldForAutoscaler tells that no field manager but the autoscaler or the operator's
	// hand-over holds spec.replicas. Read only of a Deployment without AnnotationReplicas, one
	// a release before 0.3.2 applied: it is how those releases left a Deployment whose
	// autoscaling was turned off while spec.replicas was 1.
	HeldForAutoscaler bool
}

// ReplicaIntent is what the Deployment intent says about the replica count.
type ReplicaIntent struct {
	// Replicas is the count to apply; nil leaves spec.replicas to the autoscaler.
	Replicas *int32
	// Annotation is the value of AnnotationReplicas to apply with it.
	Annotation string
}

// Replicas decides who sets the Deployment's count, from the MyApp's stored spec and the
// Deployment as stored (nil when there is none). It reads nothing of how a client wrote the
// MyApp (managedFields are housekeeping), so any reconcile reaches the same answer.
//
//   - Autoscaling on: the autoscaler's; the Deployment records spec.replicas.
//   - Autoscaling turned off with spec.replicas unchanged at the default, 1: the hand-over
//     keeps the count the autoscaler left (the CRD stores 1 when replicas is left out, so a 1
//     says nothing about the count wanted), records it, and puts it back if it is edited,
//     until spec.replicas changes or autoscaling is turned on again.
//   - Otherwise spec.replicas: a count other than 1 was chosen, and so was a 1 written in the
//     edit that turned autoscaling off. A hand edit of the Deployment is put back.
//   - A Deployment a release before 0.3.2 held at the autoscaler's count (no annotation)
//     enters the hand-over, so that upgrading the operator scales no one's pods.
func Replicas(app *examplev1.MyApp, d *DeploymentReplicas) ReplicaIntent {
	spec := replicas(app)
	if AutoscalingEnabled(app) {
		return ReplicaIntent{Annotation: replicasAutoscaler + strconv.Itoa(int(spec))}
	}
	apply := ReplicaIntent{Replicas: &spec, Annotation: replicasSpec}
	if spec != DefaultReplicas || d == nil || d.Replicas == nil {
		return apply
	}
	keep := func(count int32) ReplicaIntent {
		return ReplicaIntent{Replicas: &count, Annotation: replicasKept + strconv.Itoa(int(count))}
	}
	switch a := d.Annotation; {
	case strings.HasPrefix(a, replicasKept):
		if kept, ok := count(strings.TrimPrefix(a, replicasKept)); ok {
			return keep(kept)
		}
	case strings.HasPrefix(a, replicasAutoscaler):
		if from, ok := count(strings.TrimPrefix(a, replicasAutoscaler)); ok && from == spec {
			return keep(*d.Replicas)
		}
	case a == "" && d.HeldForAutoscaler:
		return keep(*d.Replicas)
	}
	return apply
}

// The forms of AnnotationReplicas.
const (
	replicasSpec       = "spec"
	replicasAutoscaler = "autoscaler,spec="
	replicasKept       = "kept="
)

// count reads a replica count the operator wrote into the annotation; anything else (a hand
// edit) is no count.
func count(s string) (int32, bool) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 0 {
		return 0, false
	}
	return int32(n), true
}

// ReplicasFieldPath is spec.replicas as managedFields name it.
var ReplicasFieldPath = []string{"f:spec", "f:replicas"}
