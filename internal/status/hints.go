package status

import (
	"regexp"
	"strings"
)

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

// RejectionHint says what to fix when the API server refuses a child (ChildRejected), from
// its message; "" when the message names no cause the MyApp can fix.
func RejectionHint(kind, message string) string {
	if m := strings.ToLower(message); isQuota(m) {
		hint := ". A ResourceQuota of the namespace forbids the " + kind + ": raise the quota"
		if strings.Contains(m, "services.nodeports") || strings.Contains(m, "services.loadbalancers") {
			hint += ", or change spec.serviceType"
		}
		return hint
	}
	return ""
}

// isQuota tells whether a lower-cased admission message is the ResourceQuota admission's.
func isQuota(m string) bool {
	return strings.Contains(m, "exceeded quota") || strings.Contains(m, "failed quota") ||
		strings.Contains(m, "for quota") || strings.Contains(m, "insufficient quota")
}

// quotaUsage matches the figures the ResourceQuota admission adds to its refusal:
// "exceeded quota: compute, requested: cpu=500m, used: cpu=1500m, limited: cpu=2". The used
// amount moves with every pod of the namespace, and a status or event that carried it would
// be rewritten at each change.
var quotaUsage = regexp.MustCompile(`, requested: (\S+), used: \S+, limited: [^\s;\]]+`)

// refusedPod matches the name of the pod an admission refused, which the ReplicaSet's next
// attempt changes: `pods "web-5d4b8-x7k2p" is forbidden: `.
var refusedPod = regexp.MustCompile(`pods "[^"]*" is forbidden: `)

// StableAdmissionMessage is an admission refusal without what changes from one attempt to the
// next: the name of the refused pod, and the quota's live usage (the quota's name and the
// resources it refused stay, so the message still says what to raise).
func StableAdmissionMessage(message string) string {
	message = refusedPod.ReplaceAllString(message, "pods are forbidden: ")
	return quotaUsage.ReplaceAllStringFunc(message, func(m string) string {
		requested := quotaUsage.FindStringSubmatch(m)[1]
		var names []string
		for _, r := range strings.Split(requested, ",") {
			name, _, _ := strings.Cut(r, "=")
			names = append(names, name)
		}
		return " (" + strings.Join(names, ", ") + ")"
	})
}
