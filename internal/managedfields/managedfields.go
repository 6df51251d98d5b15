// Package managedfields reads who owns which field of an object, from its managedFields.
package managedfields

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Owners lists the field managers that own a field of an object, the field given as its
// FieldsV1 keys, e.g. "f:spec", "f:replicas".
func Owners(obj metav1.Object, path ...string) []string {
	var owners []string
	for _, mf := range obj.GetManagedFields() {
		if mf.FieldsV1 == nil {
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
			owners = append(owners, mf.Manager)
		}
	}
	return owners
}

// Owns tells whether the field manager owns the field.
func Owns(obj metav1.Object, manager string, path ...string) bool {
	for _, o := range Owners(obj, path...) {
		if o == manager {
			return true
		}
	}
	return false
}

// Has tells whether the field manager has an entry in the object's managedFields.
func Has(obj metav1.Object, manager string) bool {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == manager {
			return true
		}
	}
	return false
}
