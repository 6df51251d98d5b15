// Package desired computes, from a MyApp alone, the children the operator wants to exist.
// Every function here is pure: no API calls, no clock, no randomness, so that the same MyApp
// always yields the same apply configurations and server-side apply sees no change at steady
// state.
package desired

import (
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Label and annotation keys the operator puts on its children and their pods.
const (
	// LabelSelector picks a MyApp's pods. The operator owns this key: unlike the
	// app.kubernetes.io labels, which Helm charts also use for their selectors, no chart
	// shares it, so a chart named like the MyApp neither adopts its pods nor routes to them.
	LabelSelector = "myapp.example.com/name"

	LabelName      = "app.kubernetes.io/name"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// LabelInstance was half of 0.2.0's pod selector; it is kept only to recognise 0.2.0's
	// pods during the selector migration.
	LabelInstance = "app.kubernetes.io/instance"

	// ManagedBy is the value of LabelManagedBy on every child. The manager's cache keeps
	// only children that carry it.
	ManagedBy = "myapp-operator"

	// AnnotationSelectorMigration marks the Service and the new Deployment while a 0.2.0
	// Deployment, whose selector was LegacySelectorLabels, is being replaced: the Service and
	// the PodDisruptionBudget then select both the old and the new pods.
	AnnotationSelectorMigration = "myapp.example.com/selector-migration"

	// PortName names the container port and the Service port, so that the Service and the
	// default probe target the container by name.
	PortName = "http"

	// ContainerName is the name of the single container of the application's pods.
	ContainerName = "app"
)

// SelectorLabels are the labels that pick a MyApp's pods. They end up in a Deployment's
// selector, which is immutable, so they must never change for a given MyApp.
func SelectorLabels(app *examplev1.MyApp) map[string]string {
	return map[string]string{LabelSelector: app.Name}
}

// LegacySelectorLabels are the pod selector of the Deployments 0.2.0 made.
func LegacySelectorLabels(app *examplev1.MyApp) map[string]string {
	return map[string]string{LabelName: app.Name, LabelInstance: app.Name}
}

// migrationSelectorLabels match the pods of both a 0.2.0 Deployment and the current one:
// the Service selects them while the first is replaced by the second.
func migrationSelectorLabels(app *examplev1.MyApp) map[string]string {
	return map[string]string{LabelName: app.Name, LabelManagedBy: ManagedBy}
}

// Labels are the labels of every child of a MyApp and of its pods.
func Labels(app *examplev1.MyApp) map[string]string {
	return map[string]string{
		LabelName:      app.Name,
		LabelManagedBy: ManagedBy,
		LabelSelector:  app.Name,
	}
}

// podLabels are the MyApp's own pod labels over the user's podLabels (admission keeps the
// user from setting ours; an object stored before that rule still gets ours).
func podLabels(app *examplev1.MyApp) map[string]string {
	out := make(map[string]string, len(app.Spec.PodLabels)+3)
	for k, v := range app.Spec.PodLabels {
		out[k] = string(v)
	}
	for k, v := range Labels(app) {
		out[k] = v
	}
	return out
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

func stringMap[V ~string](in map[string]V) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = string(v)
	}
	return out
}
