package rollout

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ReplicaSet is what the decision reads of one of the ReplicaSets the Deployment controls:
// its name, its pod-template-hash label and its revision annotation
// (deployment.kubernetes.io/revision), and, when the ReplicaSet itself was read (not only its
// metadata), whether its pod template is another than the Deployment's (compared without the
// pod-template-hash label, as the deployment controller's EqualIgnoreHash compares them), or
// it was gone when read.
type ReplicaSet struct {
	Name, Hash, Revision string
	Other                bool
}

// CurrentTemplate is Deployment.Current: the pod-template-hash of the ReplicaSet, among those
// the Deployment controls (sets), at the Deployment's revision, or "" while it is not known.
//
// It is not known while the ReplicaSet at the revision was read and carries another template
// than the Deployment's (Other): the deployment controller can write observedGeneration before it makes
// the ReplicaSet of a new template. A sync that sees a scaling event (spec.replicas changed with
// the template in one edit) only scales the existing ReplicaSets, and the Recreate strategy
// writes the status while the old pods terminate; in both the revision still names the template
// the Deployment leaves, and its pods are not the spec's.
//
// It is not known while a ReplicaSet has a later revision than the Deployment. When a
// Deployment returns to a template whose ReplicaSet still exists, the deployment controller
// first moves that ReplicaSet's revision to the newest, and getNewReplicaSet returns at once;
// the same sync goes on to write observedGeneration, and only the next one moves the
// Deployment's revision. In between, the Deployment says it observed its generation while its
// revision names the ReplicaSet it left, whose pods are not the spec's.
func CurrentTemplate(revision string, sets []ReplicaSet) string {
	want, err := strconv.ParseInt(revision, 10, 64)
	if err != nil || want < 1 {
		return ""
	}
	current := ""
	for _, rs := range sets {
		switch r, err := strconv.ParseInt(rs.Revision, 10, 64); {
		case err != nil:
		case r > want:
			return ""
		case r == want && rs.Other:
			return ""
		case r == want:
			current = rs.Hash
		}
	}
	return current
}

// DeadlineExceeded is Deployment.DeadlineExceeded, from the Deployment's Progressing condition
// (its status, reason and message) and the name of the ReplicaSet at its revision: the progress
// deadline passed for that ReplicaSet. The deployment controller keeps a passed deadline until
// it sees progress, also through a return to an existing ReplicaSet (getNewReplicaSet leaves the
// condition alone), so the condition may still be about the template the Deployment left. Its
// message names the ReplicaSet it is about: `ReplicaSet "web-5d4f8" has timed out progressing.`
func DeadlineExceeded(status, reason, message, replicaSet string) bool {
	return status == string(corev1.ConditionFalse) && reason == "ProgressDeadlineExceeded" && replicaSet != "" &&
		strings.Contains(message, strconv.Quote(replicaSet))
}
