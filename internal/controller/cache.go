package controller

import (
	"maps"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/admission"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/ssa"
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

// namespaceConfigs are the DefaultNamespaces of a cache that holds the given namespaces: nil,
// every namespace, when there are none.
func namespaceConfigs(namespaces []string) map[string]cache.Config {
	if len(namespaces) == 0 {
		return nil
	}
	out := make(map[string]cache.Config, len(namespaces))
	for _, ns := range namespaces {
		out[ns] = cache.Config{}
	}
	return out
}

// CacheOptions trims what the manager caches: only the given namespaces (all when empty),
// of the children only those carrying our managed-by label, of ConfigMaps only metadata
// (configMapCache), and of managedFields only the
// operator's own entries (and who else owns a Deployment's count). Those entries are what
// lets the reconciler see, without asking the API server, whether a child still carries
// exactly what it would apply. Of a MyApp it keeps neither the
// last-applied annotation of kubectl (it repeats the whole spec of every MyApp created with
// `kubectl apply`) nor managedFields: how a client wrote the MyApp decides nothing.
//
// syncPeriod is how often every cached object is handed to the controller again (a resync):
// the safety net for a change the watches missed. A reconcile that finds nothing to do sends
// no request, so a resync costs the API server nothing (but the look at the grant on Secrets,
// at most every 5 minutes per namespace, of MyApps that track them: secrets.go).
func CacheOptions(namespaces []string, syncPeriod time.Duration) cache.Options {
	ours := labels.SelectorFromSet(labels.Set{desired.LabelManagedBy: desired.ManagedBy})
	onlyPolicy := fields.OneTermEqualSelector("metadata.name", admission.Name)
	configMaps, configMapsBy := configMapCache()
	opts := cache.Options{
		SyncPeriod:       &syncPeriod,
		DefaultTransform: keepOwnManagedFields,
		ByObject: map[client.Object]cache.ByObject{
			&examplev1.MyApp{}:                       {Transform: trimMyApp},
			&appsv1.Deployment{}:                     {Label: ours, Transform: trimDeployment},
			&corev1.Service{}:                        {Label: ours},
			&autoscalingv2.HorizontalPodAutoscaler{}: {Label: ours},
			&policyv1.PodDisruptionBudget{}:          {Label: ours},
			&networkingv1.Ingress{}:                  {Label: ours},
			&networkingv1.NetworkPolicy{}:            {Label: ours},
			configMaps:                               configMapsBy,
			// The operator's own admission policy and binding, and nothing of anyone else's.
			&admissionregistrationv1.ValidatingAdmissionPolicy{}:        {Field: onlyPolicy},
			&admissionregistrationv1.ValidatingAdmissionPolicyBinding{}: {Field: onlyPolicy},
		},
	}
	opts.DefaultNamespaces = namespaceConfigs(namespaces)
	return opts
}

// configMapCache is how the manager's cache holds ConfigMaps: every one, metadata only, trimmed
// by trimConfigMap. The files ConfigMaps (files.go) and the ConfigMaps a MyApp references
// (config.go) are read from it; no ConfigMap's data enters the cache.
func configMapCache() (client.Object, cache.ByObject) {
	return configMapMetadata(), cache.ByObject{Transform: trimConfigMap}
}

// trimConfigMap keeps of a ConfigMap's metadata what the reconciler reads: its name and
// resourceVersion (config.go), its controller, creation and deletion, and the labels of the
// operator's own (files.go). Annotations go: kubectl's last-applied annotation repeats
// the data. It is idempotent, as a cache transform must be.
func trimConfigMap(in any) (any, error) {
	m, ok := in.(*metav1.PartialObjectMetadata)
	if !ok {
		return in, nil
	}
	out := &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
	}}
	if m.Labels[desired.LabelManagedBy] == desired.ManagedBy {
		out.Labels = m.Labels
	}
	if owner := metav1.GetControllerOf(m); owner != nil {
		out.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	internMeta(&out.ObjectMeta)
	return out, nil
}

// trimMyApp drops from a cached MyApp what the reconciler never reads, and interns its
// metadata's and conditions' repeated strings.
func trimMyApp(in any) (any, error) {
	app, ok := in.(*examplev1.MyApp)
	if !ok {
		return in, nil
	}
	app.ManagedFields = nil
	delete(app.Annotations, corev1.LastAppliedConfigAnnotation)
	if len(app.Annotations) == 0 {
		app.Annotations = nil
	}
	internMeta(&app.ObjectMeta)
	for i := range app.Status.Conditions {
		c := &app.Status.Conditions[i]
		c.Type, c.Reason = intern(c.Type), intern(c.Reason)
		c.Status = metav1.ConditionStatus(intern(string(c.Status)))
	}
	return in, nil
}

// replicasOnly is the FieldsV1 of a managedFields entry that owns spec.replicas alone; every
// cached Deployment shares it (cached objects are never changed in place).
var replicasOnly = metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)

// trimDeployment keeps of a cached Deployment's managedFields the operator's entries and, of
// every other field manager owning spec.replicas, an entry reduced to that field
// (heldForAutoscaler reads them); it keeps the deployment controller's revision annotation (it
// names the current template's ReplicaSet, pods.go), interns the metadata's repeated strings, and
// shares one map between the Deployment's labels and its pod template's when they are equal.
// Cached objects are never changed in place (readers get deep copies), so the shared map
// stays as decoded.
func trimDeployment(in any) (any, error) {
	d, ok := in.(*appsv1.Deployment)
	if !ok {
		return keepOwnManagedFields(in)
	}
	var holds []metav1.ManagedFieldsEntry
	for _, mf := range ssa.EntriesOwning(d, desired.ReplicasFieldPath...) {
		if !isOwnManager(mf.Manager) {
			holds = append(holds, metav1.ManagedFieldsEntry{Manager: intern(mf.Manager), Operation: mf.Operation,
				Subresource: intern(mf.Subresource), FieldsType: mf.FieldsType, FieldsV1: replicasOnly})
		}
	}
	// keepOwnManagedFields interns the metadata, the annotations as they are now included.
	if _, err := keepOwnManagedFields(d); err != nil {
		return in, err
	}
	d.ManagedFields = append(d.ManagedFields, holds...)
	// The pod template usually carries the Deployment's own labels: one map for both.
	if t := &d.Spec.Template; maps.Equal(t.Labels, d.Labels) {
		t.Labels = d.Labels
	} else {
		t.Labels = internMap(t.Labels)
	}
	return in, nil
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
		if isOwnManager(mf.Manager) {
			kept = append(kept, mf)
		}
	}
	obj.SetManagedFields(kept)
	if a, ok := in.(metav1.ObjectMetaAccessor); ok {
		if m, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			internMeta(m)
		}
	}
	return in, nil
}

// isOwnManager tells whether a field manager is one of the operator's whose entries the cache
// keeps whole.
func isOwnManager(manager string) bool { return manager == FieldOwner || manager == RepairFieldOwner }
