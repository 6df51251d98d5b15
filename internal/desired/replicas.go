package desired

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/ssa"
)

// AutoscalerStartReplicas is the count a Deployment is handed to its new autoscaler with: the
// current count brought within [minReplicas, maxReplicas]. An autoscaler never scales a target
// that runs 0 pods (it reports ScalingDisabled), so a MyApp scaled to zero whose autoscaling is
// turned on starts at minReplicas.
func AutoscalerStartReplicas(app *examplev1.MyApp, current int32) int32 {
	minReplicas, maxReplicas := autoscalerRange(app)
	return min(max(current, minReplicas), maxReplicas)
}

// ReplicasSetByUser tells whether spec.replicas is the user's choice rather than the API
// server's default. Since 0.1.0 the CRD defaults spec.replicas to 1, so every stored MyApp has
// one; the MyApp's managedFields tell who set it:
//
//   - a value other than the default was set by someone;
//   - a server-side apply (kubectl apply --server-side, Flux, Argo CD's server-side sync) or
//     a scale through the scale subresource (kubectl scale, an autoscaler of the MyApp) owns
//     exactly the fields it sent, so its ownership of spec.replicas means it was set;
//   - any other owner of a 1 is ambiguous: a create or update without server-side apply is
//     recorded as owning every field of the object it sent, the API server's defaults included,
//     and every MyApp stored by 0.2.0 was created that way. Such a 1 counts as not set.
//
// The operator's cache keeps of a MyApp's managedFields only the entries that own
// spec.replicas (cache.go), which is all this reads.
func ReplicasSetByUser(app *examplev1.MyApp) bool {
	if app.Spec.Replicas == nil {
		return false
	}
	if *app.Spec.Replicas != DefaultReplicas {
		return true
	}
	for _, mf := range ssa.EntriesOwning(app, ReplicasFieldPath...) {
		if mf.Operation == metav1.ManagedFieldsOperationApply || mf.Subresource == "scale" {
			return true
		}
	}
	return false
}

// ReplicasFieldPath is spec.replicas as managedFields name it.
var ReplicasFieldPath = []string{"f:spec", "f:replicas"}
