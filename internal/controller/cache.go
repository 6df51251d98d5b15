package controller

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
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
// no managedFields, and of Deployments, Services and HorizontalPodAutoscalers only those
// carrying our managed-by label, so that the operator's memory grows with the number of
// MyApps, not with the size of the cluster.
func CacheOptions(namespaces []string) cache.Options {
	ours := labels.SelectorFromSet(labels.Set{desired.LabelManagedBy: desired.ManagedBy})
	opts := cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&appsv1.Deployment{}:                     {Label: ours},
			&corev1.Service{}:                        {Label: ours},
			&autoscalingv2.HorizontalPodAutoscaler{}: {Label: ours},
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
