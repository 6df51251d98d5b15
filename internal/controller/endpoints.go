package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

// A Gateway's controller sends a backend's share to the endpoints the backend Service's
// EndpointSlices list, not to the pods a Deployment counts available: a pod the EndpointSlice
// controller has not listed yet takes no request, and a share sent to a Service whose slices
// list nothing is answered 503 at the edge. So the route of a canary moves a share to a
// Service (a weight to the canary's, the requests back to the stable pods', the split from the
// MyApp's Service to the stable pods') only once that Service's slices list its pods ready.
// The operator reads the slices of the canary's two Services only (they carry
// desired.LabelTrack, which the EndpointSlice controller copies from the Service with its other
// labels), from the pod cache, and never writes one.

// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list;watch

// podKind is the kind of an endpoint's target that is a pod.
const podKind = "Pod"

// endpointSliceCache is how the pod cache holds EndpointSlices: those of the operator's
// canary Services only, trimmed by trimEndpointSlice.
func endpointSliceCache() cache.ByObject {
	ours, err := labels.NewRequirement(desired.LabelManagedBy, selection.Equals, []string{desired.ManagedBy})
	if err != nil {
		panic(err) // constant keys and values: cannot happen
	}
	track, err := labels.NewRequirement(desired.LabelTrack, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return cache.ByObject{Label: labels.NewSelector().Add(*ours, *track), Transform: trimEndpointSlice}
}

// trimEndpointSlice keeps of an EndpointSlice its name, labels (its Service's, and the MyApp's
// selector label the watch maps it by) and, of each endpoint, the pod it names and whether it
// is ready. It is idempotent, as a cache transform must be.
func trimEndpointSlice(in any) (any, error) {
	s, ok := in.(*discoveryv1.EndpointSlice)
	if !ok {
		return in, nil
	}
	out := &discoveryv1.EndpointSlice{TypeMeta: s.TypeMeta, ObjectMeta: cachedIdentity(&s.ObjectMeta), AddressType: s.AddressType}
	for _, e := range s.Endpoints {
		if e.TargetRef == nil || e.TargetRef.Kind != podKind {
			continue
		}
		out.Endpoints = append(out.Endpoints, discoveryv1.Endpoint{
			Conditions: discoveryv1.EndpointConditions{Ready: e.Conditions.Ready},
			TargetRef:  &corev1.ObjectReference{Kind: podKind, Name: e.TargetRef.Name},
		})
	}
	return out, nil
}

// cachedIdentity is the metadata a trimmed cached object keeps of m: its name, namespace,
// version, labels and deletion.
func cachedIdentity(m *metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, ResourceVersion: m.ResourceVersion,
		Labels: m.Labels, DeletionTimestamp: m.DeletionTimestamp}
}

// listedPods are the names of the pods the slices list ready. A ready condition left unset is
// ready: the API says consumers read an unknown state as ready, and Gateway controllers do.
func listedPods(sets []discoveryv1.EndpointSlice) map[string]bool {
	out := map[string]bool{}
	for _, s := range sets {
		if s.DeletionTimestamp != nil {
			continue
		}
		for _, e := range s.Endpoints {
			if e.TargetRef != nil && e.TargetRef.Kind == podKind && (e.Conditions.Ready == nil || *e.Conditions.Ready) {
				out[e.TargetRef.Name] = true
			}
		}
	}
	return out
}

// listing is what a Service's EndpointSlices say of the MyApp's pods of one template.
type listing struct {
	// listed counts the template's pods (not being deleted) the slices list ready; ready
	// counts those the pod cache holds ready.
	listed, ready int32
}

// listingOf reads the slices and the pods for a template (pod-template-hash): of the pods of
// that hash not being deleted, how many the slices list ready, and how many are ready.
func listingOf(sets []discoveryv1.EndpointSlice, pods []corev1.Pod, hash string) listing {
	names := listedPods(sets)
	var l listing
	for i := range pods {
		p := &pods[i]
		if hash == "" || p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash || p.DeletionTimestamp != nil {
			continue
		}
		if names[p.Name] {
			l.listed++
		}
		if podReady(p) {
			l.ready++
		}
	}
	return l
}

// servesAll says that the slices list every ready pod of the template, and at least least of
// them: a Service the requests move to lists the pods that are to take them.
func (l listing) servesAll(least int32) bool { return l.listed >= max(l.ready, least) }

// serviceListing reads what the Service's EndpointSlices, from slices (the pod cache, or the
// API server), say of the MyApp's pods of the template hash, the pods read from the pod cache.
// known is false until the pod cache holds the slices (its first list, bounded as the
// ReplicaSets' is: boundedReader).
func (r *MyAppReconciler) serviceListing(ctx context.Context, slices client.Reader, app *examplev1.MyApp, service, hash string) (l listing, known bool, err error) {
	if r.pods == nil {
		return listing{}, false, nil
	}
	sets := &discoveryv1.EndpointSliceList{}
	reads := boundedReader{Reader: slices, what: "EndpointSlices", wait: cacheSyncWait}
	err = reads.List(ctx, sets, client.InNamespace(app.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: service})
	var notSynced *notSyncedError
	switch {
	case errors.As(err, &notSynced):
		return listing{}, false, nil
	case err != nil:
		return listing{}, false, fmt.Errorf("listing the EndpointSlices of Service %s: %w", service, err)
	}
	pods := &corev1.PodList{}
	if err := r.pods.List(ctx, pods, client.InNamespace(app.Namespace), client.MatchingFields{podsByMyApp: app.Name}); err != nil {
		return listing{}, false, err
	}
	return listingOf(sets.Items, pods.Items, hash), true, nil
}

// listedChanged passes an EndpointSlice's event when it changes which pods it lists ready.
var listedChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*discoveryv1.EndpointSlice)
		after, ok2 := e.ObjectNew.(*discoveryv1.EndpointSlice)
		return !ok1 || !ok2 || !maps.Equal(listedPods([]discoveryv1.EndpointSlice{*before}), listedPods([]discoveryv1.EndpointSlice{*after}))
	},
	GenericFunc: func(event.GenericEvent) bool { return false },
}
