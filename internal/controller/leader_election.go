package controller

import "os"

// PodNamespaceEnv names the environment variable the manager's Deployment fills with the pod's
// namespace (downward API, metadata.namespace).
const PodNamespaceEnv = "POD_NAMESPACE"

// LeaseNamespace picks the namespace of the leader election Lease: the flag when
// given, else the pod's own namespace. Under OLM that is the operator's namespace, the one
// where every install mode grants the CSV's permissions (leases included), whatever namespaces
// it watches. Empty leaves it to controller-runtime, which reads the service account's
// namespace file and fails outside a cluster.
func LeaseNamespace(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	return os.Getenv(PodNamespaceEnv)
}
