package ssa

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Owners lists the field managers that own a field of an object, the field given as its
// FieldsV1 keys, e.g. "f:spec", "f:replicas".
func Owners(obj metav1.Object, path ...string) []string {
	entries := EntriesOwning(obj, path...)
	owners := make([]string, 0, len(entries))
	for _, mf := range entries {
		owners = append(owners, mf.Manager)
	}
	return owners
}

// EntriesOwning lists the managedFields entries that own a field of an object, the field
// given as its FieldsV1 keys. An entry whose FieldsV1 cannot be read owns nothing.
func EntriesOwning(obj metav1.Object, path ...string) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, mf := range obj.GetManagedFields() {
		if entryOwns(mf, path) {
			out = append(out, mf)
		}
	}
	return out
}

func entryOwns(mf metav1.ManagedFieldsEntry, path []string) bool {
	if mf.FieldsV1 == nil {
		return false
	}
	var node map[string]any
	if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &node) != nil {
		return false
	}
	for _, p := range path {
		next, ok := node[p].(map[string]any)
		if !ok {
			return false
		}
		node = next
	}
	return true
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

// DropManager removes the field manager's entry from the object's managedFields, so that
// the fields only it owned are no longer kept alive for it. It reads the object from reader
// (the API server, not a cache) and sends a merge patch guarded by the resourceVersion it
// read; an object that is gone, or no longer has the entry, needs nothing.
func DropManager(ctx context.Context, reader client.Reader, writer client.Writer, obj client.Object, manager string) error {
	live, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("%T is not a client.Object", obj)
	}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return client.IgnoreNotFound(err)
	}
	var kept []metav1.ManagedFieldsEntry
	for _, mf := range live.GetManagedFields() {
		if mf.Manager != manager {
			kept = append(kept, mf)
		}
	}
	if len(kept) == len(live.GetManagedFields()) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"managedFields": kept, "resourceVersion": live.GetResourceVersion(),
	}})
	if err != nil {
		return err
	}
	return writer.Patch(ctx, live, client.RawPatch(types.MergePatchType, patch))
}
