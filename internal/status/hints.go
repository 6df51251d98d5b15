package status

import "strings"

// replicaFailureHint says what to fix when the Deployment cannot create pods, from the
// admission error it reports (the quota, LimitRange and Pod Security admission messages).
func replicaFailureHint(message string) string {
	switch m := strings.ToLower(message); {
	case isQuota(m):
		return ". A ResourceQuota of the namespace forbids the pods: raise the quota, or lower spec.replicas " +
			"(spec.autoScaling.maxReplicas) or spec.resources; a quota on cpu or memory also needs spec.resources to set them"
	case strings.Contains(m, " per container is") || strings.Contains(m, " per pod is"):
		return ". A LimitRange of the namespace rejects the pods: bring spec.resources within its bounds, or change the LimitRange"
	case strings.Contains(m, "violates podsecurity"):
		return ". The namespace's Pod Security level refuses the pods: change spec.securityContext or spec.podSecurityContext, " +
			"or the namespace's pod-security.kubernetes.io/enforce label"
	default:
		return ""
	}
}

// isQuota tells whether a lower-cased admission message is the ResourceQuota admission's.
func isQuota(m string) bool {
	return strings.Contains(m, "exceeded quota") || strings.Contains(m, "failed quota") ||
		strings.Contains(m, "for quota") || strings.Contains(m, "insufficient quota")
}
