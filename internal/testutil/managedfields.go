// Package testutil holds helpers shared by the integration and end-to-end tests.
package testutil

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/myapp-operator/internal/ssa"
)

// OwnsField tells whether a field manager owns a field of an object, the field given as its
// FieldsV1 keys, e.g. "f:spec", "f:replicas".
func OwnsField(obj metav1.Object, manager string, path ...string) bool {
	return ssa.Owns(obj, manager, path...)
}
