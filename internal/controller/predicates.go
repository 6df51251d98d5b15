package controller

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// myAppChanged passes a MyApp's creation and deletion, a new spec (generation), a new reconcile
// request or canary control (the annotations), and the informer's periodic resync (an update with an unchanged
// resourceVersion). It drops the MyApp's own status writes, and a change of field ownership
// alone (managedFields): no decision reads how a client wrote the MyApp.
var myAppChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil {
			return true
		}
		return e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion() ||
			e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
			e.ObjectOld.GetAnnotations()[examplev1.ReconcileRequestAnnotation] !=
				e.ObjectNew.GetAnnotations()[examplev1.ReconcileRequestAnnotation] ||
			e.ObjectOld.GetAnnotations()[examplev1.CanaryControlAnnotation] !=
				e.ObjectNew.GetAnnotations()[examplev1.CanaryControlAnnotation]
	},
}

// childChanged passes the updates of a child that can change its MyApp's status or call for
// an apply: a new spec, new labels, annotations or owners, a change to what the operator's
// field manager owns (a hand edit takes fields from it), deletion, a resync, and the status
// changes statusChanged picks. Creations and deletions always pass.
func childChanged(statusChanged func(old, new client.Object) bool) predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld, e.ObjectNew
			if o == nil || n == nil {
				return true
			}
			return o.GetResourceVersion() == n.GetResourceVersion() ||
				o.GetGeneration() != n.GetGeneration() ||
				!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) ||
				!equality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels()) ||
				!equality.Semantic.DeepEqual(o.GetAnnotations(), n.GetAnnotations()) ||
				!equality.Semantic.DeepEqual(o.GetOwnerReferences(), n.GetOwnerReferences()) ||
				!equality.Semantic.DeepEqual(o.GetManagedFields(), n.GetManagedFields()) ||
				(statusChanged != nil && statusChanged(o, n))
		},
	}
}

// statusPartChanged makes a statusChanged for children of type T from pick, the part of a
// T's status that its MyApp reads: an update passes when that part differs (or either
// object is not a T).
func statusPartChanged[T client.Object, P any](pick func(T) P) func(old, new client.Object) bool {
	return func(old, new client.Object) bool {
		o, ok1 := old.(T)
		n, ok2 := new.(T)
		return !ok1 || !ok2 || !equality.Semantic.DeepEqual(pick(o), pick(n))
	}
}

// deploymentStatusChanged picks the Deployment status fields the MyApp's status reads.
func deploymentStatusChanged(old, new client.Object) bool {
	o, ok1 := old.(*appsv1.Deployment)
	n, ok2 := new.(*appsv1.Deployment)
	if !ok1 || !ok2 {
		return true
	}
	a, b := o.Status, n.Status
	if a.ObservedGeneration != b.ObservedGeneration || a.Replicas != b.Replicas || a.UpdatedReplicas != b.UpdatedReplicas ||
		a.ReadyReplicas != b.ReadyReplicas || a.AvailableReplicas != b.AvailableReplicas || len(a.Conditions) != len(b.Conditions) {
		return true
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message {
			return true
		}
	}
	return false
}

// autoscalerStatusChanged picks the autoscaler's conditions, which the MyApp's status reads;
// its metrics and replica counts change at every sync and are not read.
func autoscalerStatusChanged(old, new client.Object) bool {
	o, ok1 := old.(*autoscalingv2.HorizontalPodAutoscaler)
	n, ok2 := new.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok1 || !ok2 {
		return true
	}
	a, b := o.Status.Conditions, n.Status.Conditions
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Status != b[i].Status || a[i].Reason != b[i].Reason || a[i].Message != b[i].Message {
			return true
		}
	}
	return false
}
