package controller

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/myapp-operator/internal/desired"
)

// WatchNamespaceEnv names the environment variable that lists, comma-separated, the
// namespaces the operator watches. Under OLM it comes from the olm.targetNamespaces
// annotation; empty means all namespaces.
const WatchNamespaceEnv = "WATCH_NAMESPACE"

// WatchNamespaces parses the value of WatchNamespaceEnv. It returns nil for all namespaces.
func WatchNamespaces(value string) []string {
	var out []string
	for _, ns := range strings.Split(value, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// CacheOptions trims what the manager caches: only the given namespaces (all when empty),
// of the children only those carrying our managed-by label, and of managedFields only the
// operator's own entries. Those entries are what lets the reconciler see, without asking
// the API server, whether a child still carries exactly what it would apply.
func CacheOptions(namespaces []string) cache.Options {
	ours := labels.SelectorFromSet(labels.Set{desired.LabelManagedBy: desired.ManagedBy})
	opts := cache.Options{
		DefaultTransform: keepOwnManagedFields,
		ByObject: map[client.Object]cache.ByObject{
			&appsv1.Deployment{}:                     {Label: ours},
			&corev1.Service{}:                        {Label: ours},
			&autoscalingv2.HorizontalPodAutoscaler{}: {Label: ours},
			&policyv1.PodDisruptionBudget{}:          {Label: ours},
		},
	}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// keepOwnManagedFields drops the managedFields entries of every field manager but the
// operator's.
func keepOwnManagedFields(in any) (any, error) {
	obj, err := meta.Accessor(in)
	if err != nil {
		return in, nil
	}
	entries := obj.GetManagedFields()
	var kept []metav1.ManagedFieldsEntry
	for _, mf := range entries {
		if mf.Manager == FieldOwner || mf.Manager == RepairFieldOwner {
			kept = append(kept, mf)
		}
	}
	obj.SetManagedFields(kept)
	return in, nil
}
