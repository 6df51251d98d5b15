// Package desired computes, from a MyApp alone, the children the operator wants to exist.
// Every function here is pure: no API calls, no clock, no randomness, so that the same MyApp
// always yields the same apply configurations and server-side apply sees no change at steady
// state.
package desired

import (
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Label keys the operator puts on every child, after the Kubernetes recommended labels.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelManagedBy = "app.kubernetes.io/managed-by"

	// ManagedBy is the value of LabelManagedBy on every child. The manager's cache keeps
	// only children that carry it.
	ManagedBy = "myapp-operator"

	// PortName names the container port and the Service port, so that the Service
	// targets the container by name.
	PortName = "http"

	// ContainerName is the name of the single container of the application's pods.
	ContainerName = "app"
)

// SelectorLabels are the labels that pick a MyApp's pods. They end up in a Deployment's
// selector, which is immutable, so they must never change for a given MyApp.
func SelectorLabels(app *examplev1.MyApp) map[string]string {
	return map[string]string{
		LabelName:     app.Name,
		LabelInstance: app.Name,
	}
}

// Labels are the labels of every child of a MyApp and of its pods.
func Labels(app *examplev1.MyApp) map[string]string {
	l := SelectorLabels(app)
	l[LabelManagedBy] = ManagedBy
	return l
}

// ownerReference makes the MyApp the controller of a child, so that the garbage collector
// removes the child with the MyApp and the child's events reach the MyApp's reconciler.
func ownerReference(app *examplev1.MyApp) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(examplev1.GroupVersion.String()).
		WithKind("MyApp").
		WithName(app.Name).
		WithUID(app.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}
