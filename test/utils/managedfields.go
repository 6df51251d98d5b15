// Package utils holds helpers shared by the integration and end-to-end tests.
package utils

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OwnsField tells whether a field manager owns a field of an object, the field given as its
// FieldsV1 keys, e.g. "f:spec", "f:replicas".
func OwnsField(obj metav1.Object, manager string, path ...string) bool {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager != manager || mf.FieldsV1 == nil {
			continue
		}
		var node map[string]any
		if json.Unmarshal(mf.FieldsV1.Raw, &node) != nil {
			continue
		}
		found := true
		for _, p := range path {
			next, ok := node[p].(map[string]any)
			if !ok {
				found = false
				break
			}
			node = next
		}
		if found {
			return true
		}
	}
	return false
}
