package controller

import (
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The cache holds thousands of objects whose metadata repeats the same few strings: the
// namespace, the label keys and most label values, the field manager, operation and API
// version of the operator's managedFields entry. Decoding gives each object its own copies.
// intern replaces them with one shared copy each (package unique), so the heap holds each
// string once however many MyApps there are (docs/performance/tuning.md has the figures).
// Strings are immutable, so sharing them changes nothing else.

func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// internMap is m with its keys and values interned.
func internMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[intern(k)] = intern(v)
	}
	return out
}

// internMeta interns the repeated strings of an object's metadata.
func internMeta(m *metav1.ObjectMeta) {
	m.Namespace = intern(m.Namespace)
	m.Labels, m.Annotations = internMap(m.Labels), internMap(m.Annotations)
	for i := range m.ManagedFields {
		mf := &m.ManagedFields[i]
		mf.Manager, mf.APIVersion, mf.FieldsType = intern(mf.Manager), intern(mf.APIVersion), intern(mf.FieldsType)
		mf.Operation = metav1.ManagedFieldsOperationType(intern(string(mf.Operation)))
		mf.Subresource = intern(mf.Subresource)
	}
	for i := range m.OwnerReferences {
		ref := &m.OwnerReferences[i]
		ref.APIVersion, ref.Kind = intern(ref.APIVersion), intern(ref.Kind)
	}
}
