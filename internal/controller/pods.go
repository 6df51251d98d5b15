package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/rollout"
	"github.com/example/myapp-operator/internal/status"
)

// Some problems only the kubelet sees: a Secret or ConfigMap that spec.env refers to is
// missing, an image cannot be pulled. The Deployment reports none of them (its pods exist,
// they just never start), so the operator reads them from the MyApp's pods. It never reads
// the Secrets themselves: pods only, list and watch, and of each pod only what the status
// needs.

// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=list;watch

// podsByMyApp indexes the cached pods by namespace and MyApp name (their selector label).
const podsByMyApp = "myapp.example.com/name"

// podCache is how the reconciler's pod cache (setupPods) holds pods: only those of a MyApp (they carry the selector
// label, whatever the MyApp's version), trimmed by trimPod.
func podCache() cache.ByObject {
	req, err := labels.NewRequirement(desired.LabelSelector, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant key: cannot happen
	}
	return cache.ByObject{Label: labels.NewSelector().Add(*req), Transform: trimPod}
}

// trimPod keeps of a pod what the MyApp's status reads: its name, labels (the MyApp's name,
// the pod-template-hash), creation and deletion, and the waiting state and image of containers (init containers included) that wait
// for something the user must fix or crash-loop (status.BlocksRollout). Spec, owners, managedFields, annotations and the rest of the
// status are dropped, so a cached pod costs a fraction of a full one (TestPodCacheFootprint
// bounds it; docs/performance/tuning.md has the figures). It is idempotent, as a cache
// transform must be.
func trimPod(in any) (any, error) {
	pod, ok := in.(*corev1.Pod)
	if !ok {
		return in, nil
	}
	out := &corev1.Pod{TypeMeta: pod.TypeMeta, ObjectMeta: cachedIdentity(&pod.ObjectMeta)}
	out.CreationTimestamp = pod.CreationTimestamp
	if podReady(pod) {
		// Whether the pod is ready, and nothing else of its conditions: a problem of a pod
		// that became ready since is over (sightings.go).
		out.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	out.Status.InitContainerStatuses = blockingStatuses(pod, pod.Status.InitContainerStatuses)
	out.Status.ContainerStatuses = blockingStatuses(pod, pod.Status.ContainerStatuses)
	return out, nil
}

// blockingStatuses keeps of a pod's container statuses (its init containers' or its
// containers') those that wait for something the user must fix or crash-loop, trimmed to the
// name, image and waiting state.
func blockingStatuses(pod *corev1.Pod, statuses []corev1.ContainerStatus) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, c := range statuses {
		if w := c.State.Waiting; w != nil && status.BlocksRollout(w.Reason) {
			out = append(out, corev1.ContainerStatus{
				Name:  c.Name,
				Image: imageOf(pod, c),
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}},
			})
		}
	}
	return out
}

// podReady tells whether the pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// imageOf is the image a container of the pod runs: its spec's, which the status of a
// container that never started may not give (a trimmed pod has no spec: its status's).
func imageOf(pod *corev1.Pod, c corev1.ContainerStatus) string {
	for _, spec := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		if spec.Name == c.Name {
			return spec.Image
		}
	}
	return c.Image
}

// observePods lists, from the cache, the containers of the pods of the Deployment's current
// pod template that wait for something the user must fix. Pods of an older template (still
// failing after the user fixed the spec) and pods being deleted are left out. retry, when
// set, asks for another look: pods wait but the current template's ReplicaSet is not yet
// in the cache.
func (r *MyAppReconciler) observePods(ctx context.Context, app *examplev1.MyApp, d *appsv1.Deployment) (waiting []status.ContainerWaiting, retry time.Duration, err error) {
	if r.pods == nil {
		return nil, 0, nil
	}
	pods := &corev1.PodList{}
	if err := r.pods.List(ctx, pods, client.InNamespace(app.Namespace), client.MatchingFields{podsByMyApp: app.Name}); err != nil {
		return nil, 0, err
	}
	// Telling the current template's pods apart reads the ReplicaSet cache: only when a pod
	// has a problem.
	if !slices.ContainsFunc(pods.Items, hasProblemPod) {
		return nil, 0, nil
	}
	if d == nil || !metav1.IsControlledBy(d, app) {
		// Pods without the MyApp's Deployment (orphaned by a Deployment deleted with
		// --cascade=orphan, the name now taken by one the MyApp does not own) belong to no
		// template of its: the Deployment's own events say when that changes.
		return nil, 0, nil
	}
	hash, known, err := r.currentTemplateHash(ctx, app, d)
	switch {
	case err != nil:
		return nil, 0, err
	case !known && d.Annotations[revisionAnnotation] != "":
		// The current template's ReplicaSet is not in the cache yet.
		return nil, currentTemplateRetry, nil
	case !known:
		return nil, 0, nil // no template rolled out yet: the Deployment's status write says when
	}
	for i := range pods.Items {
		if pods.Items[i].Labels[appsv1.DefaultDeploymentUniqueLabelKey] == hash {
			waiting = append(waiting, waitingIn(&pods.Items[i])...)
		}
	}
	return waiting, 0, nil
}

// currentTemplateRetry is how soon a MyApp whose pods wait looks again when it cannot yet
// tell which of them run the current template.
const currentTemplateRetry = 2 * time.Second

// currentTemplateHash is the pod-template-hash of the pods of the Deployment's current pod
// template: that of the ReplicaSet the Deployment controls whose revision is the
// Deployment's. The deployment controller moves the Deployment's revision annotation to a
// new template's ReplicaSet in the sync that observes it; until then the annotation names the
// template of the last observed spec, whose pods are the ones the MyApp's status spoke of
// (a scale keeps them; after a template change they are the pods a rollout replaces, and the
// status is not Ready then anyway). known is false while the Deployment has no revision, while
// the cache does not hold that ReplicaSet yet, and while a ReplicaSet has a later revision
// than the Deployment (rollout.CurrentTemplate says why).
func (r *MyAppReconciler) currentTemplateHash(ctx context.Context, app *examplev1.MyApp, d *appsv1.Deployment) (hash string, known bool, err error) {
	if d == nil {
		return "", false, nil
	}
	revision := d.Annotations[revisionAnnotation]
	if revision == "" {
		return "", false, nil
	}
	sets, synced, err := r.replicaSetsOf(ctx, app)
	if err != nil || !synced {
		if !synced && err == nil {
			log.FromContext(ctx).Info("The ReplicaSet cache has not synced; pod problems wait for it (RBAC: list and watch replicasets)")
		}
		return "", false, err
	}
	hash = rollout.CurrentTemplate(revision, ownedSets(sets, d))
	return hash, hash != "", nil
}

// replicaSetsOf lists the metadata of the MyApp's ReplicaSets (those with its selector label,
// whoever controls them) from the ReplicaSet cache. A cache read waits for the informer's
// first list; without the RBAC to list ReplicaSets it would wait for ever and hold a worker.
// Bounded (boundedReader), it reports synced false instead, and the caller decides nothing
// from it.
func (r *MyAppReconciler) replicaSetsOf(ctx context.Context, app *examplev1.MyApp) (sets []metav1.PartialObjectMetadata, synced bool, err error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSetList"))
	reads := boundedReader{Reader: r.pods, what: "ReplicaSets", wait: cacheSyncWait}
	err = reads.List(ctx, list, client.InNamespace(app.Namespace), client.MatchingFields{podsByMyApp: app.Name})
	var notSynced *notSyncedError
	switch {
	case errors.As(err, &notSynced):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("listing the ReplicaSets of %s/%s: %w", app.Namespace, app.Name, err)
	}
	return list.Items, true, nil
}

// revisionAnnotation is where the deployment controller numbers a Deployment's rollouts, on
// the Deployment (the current one) and on each of its ReplicaSets.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// replicaSetMetadata is how the pod cache holds ReplicaSets: as metadata (no pod template,
// no status), of a MyApp's only, trimmed to what currentTemplateHash reads.
func replicaSetMetadata() (client.Object, cache.ByObject) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	by := podCache()
	by.Transform = trimReplicaSet
	return obj, by
}

// trimReplicaSet keeps of a ReplicaSet's metadata its name, labels, revision and controller.
// It is idempotent, as a cache transform must be.
func trimReplicaSet(in any) (any, error) {
	m, ok := in.(*metav1.PartialObjectMetadata)
	if !ok {
		return in, nil
	}
	out := &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion, Labels: m.Labels,
	}}
	if rev, ok := m.Annotations[revisionAnnotation]; ok {
		out.Annotations = map[string]string{revisionAnnotation: rev}
	}
	if owner := metav1.GetControllerOf(m); owner != nil {
		out.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return out, nil
}

// waitingIn lists the containers of a pod, init containers and sidecars first, that wait for
// something the user must fix, or crash-loop: what keeps a new template from rolling out
// (status.BlocksRollout). An init container that cannot start holds the whole pod back as
// much as the application's container does.
func waitingIn(pod *corev1.Pod) []status.ContainerWaiting {
	if pod.DeletionTimestamp != nil {
		return nil
	}
	var out []status.ContainerWaiting
	for _, c := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
		if w := c.State.Waiting; w != nil && status.BlocksRollout(w.Reason) {
			out = append(out, status.ContainerWaiting{Pod: pod.Name, Container: c.Name, Image: imageOf(pod, c), Reason: w.Reason, Message: w.Message})
		}
	}
	return out
}

// setupPods gives the reconciler a cache of its own for pods (with their ReplicaSets and the
// canary Services' EndpointSlices), with an index by MyApp, and adds to b the watches that
// reconcile a MyApp when its pods' problems change (podProblemChanged) and when its canary
// Services list other pods (listedChanged). The cache starts only with the leadership, as the controllers do:
// a standby keeps no pods, and a manager that never leads (or lacks the pods RBAC) never
// waits for a pod informer to sync, which would hold its shutdown.
func (r *MyAppReconciler) setupPods(mgr ctrl.Manager, b *builder.Builder) (*builder.Builder, error) {
	sets, setsBy := replicaSetMetadata()
	opts := cache.Options{
		HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: podCache(), sets: setsBy, &discoveryv1.EndpointSlice{}: endpointSliceCache()},
	}
	opts.DefaultNamespaces = namespaceConfigs(r.WatchNamespaces)
	pods, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return nil, err
	}
	byMyApp := func(obj client.Object) []string {
		if name, ok := obj.GetLabels()[desired.LabelSelector]; ok {
			return []string{name}
		}
		return nil
	}
	for _, obj := range []client.Object{&corev1.Pod{}, sets} {
		if err := pods.IndexField(context.Background(), obj, podsByMyApp, byMyApp); err != nil {
			return nil, err
		}
	}
	if err := mgr.Add(leaderOnly{pods}); err != nil {
		return nil, err
	}
	r.pods = pods
	return b.WatchesRawSource(source.Kind[client.Object](pods, &corev1.Pod{},
		handler.EnqueueRequestsFromMapFunc(myAppOfPod), podProblemChanged)).
		WatchesRawSource(source.Kind[client.Object](pods, sets,
			handler.EnqueueRequestsFromMapFunc(myAppOfPod), filesReplicaSetGone)).
		WatchesRawSource(source.Kind[client.Object](pods, &discoveryv1.EndpointSlice{},
			handler.EnqueueRequestsFromMapFunc(myAppOfPod), listedChanged)), nil
}

// leaderOnly runs a cache only while the manager leads.
type leaderOnly struct{ cache.Cache }

func (leaderOnly) NeedLeaderElection() bool { return true }

// myAppOfPod names the MyApp a pod belongs to, from its selector label.
func myAppOfPod(_ context.Context, obj client.Object) []reconcile.Request {
	name, ok := obj.GetLabels()[desired.LabelSelector]
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}

// podProblemChanged passes a pod's event only when it changes the problems the MyApp's
// status reports: a pod created or deleted with a problem, or an update that changes its
// containers' problems; and a pod that becomes ready, whose earlier problem is then over
// (sightings.go). A pod's other transitions are the Deployment's to count, and its status
// changes are not read. Resyncs of an unchanged pod pass nothing: the MyApp's own resync
// recomputes its status.
var podProblemChanged = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return hasProblem(e.Object) },
	DeleteFunc: func(e event.DeleteEvent) bool { return hasProblem(e.Object) },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !slices.Equal(problemsOf(e.ObjectOld), problemsOf(e.ObjectNew)) || becameReady(e.ObjectOld, e.ObjectNew)
	},
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// filesReplicaSetGone passes the deletion of a ReplicaSet that mounts a files ConfigMap: that
// ConfigMap may now be mounted by none (collectFiles).
var filesReplicaSetGone = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(e event.DeleteEvent) bool { _, ok := e.Object.GetLabels()[desired.LabelFiles]; return ok },
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func hasProblem(obj client.Object) bool { return len(problemsOf(obj)) > 0 }

func becameReady(before, after client.Object) bool {
	b, ok1 := before.(*corev1.Pod)
	a, ok2 := after.(*corev1.Pod)
	return ok1 && ok2 && !podReady(b) && podReady(a)
}

func hasProblemPod(pod corev1.Pod) bool { return len(waitingIn(&pod)) > 0 }

func problemsOf(obj client.Object) []status.ContainerWaiting {
	if pod, ok := obj.(*corev1.Pod); ok {
		return waitingIn(pod)
	}
	return nil
}
