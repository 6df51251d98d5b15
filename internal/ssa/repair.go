package ssa

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KeyedList is a list of an object whose items server-side apply merges by a numeric key
// (a Service's ports by port, a container's ports by containerPort), with the name each item
// carries.
type KeyedList struct {
	// Path is the list's JSON pointer, e.g. "/spec/ports".
	Path string
	// KeyField is the JSON name of the items' merge key, e.g. "port".
	KeyField string
	// Names and Keys hold each item's name and key, in the list's order.
	Names []string
	Keys  []int32
}

// RepairKeyClash handles the one rejection a forced apply cannot overcome by itself. When
// someone changes the key of an item the field manager owns, the edited item becomes theirs
// and the apply adds the manager's item beside it; both carry the item's name, and the API
// server rejects the duplicate. For each list, the item named name whose key is not want gets
// want back (any further item of that name is removed), with a JSON patch by owner whose
// first operation tests the resourceVersion obj was read at. Every other item stays. The apply that
// follows then owns the item again. It reports whether it sent a patch.
func RepairKeyClash(ctx context.Context, c client.Writer, obj client.Object, owner, name string, want int32, lists ...KeyedList) (bool, error) {
	var ops []map[string]any
	for _, l := range lists {
		ops = append(ops, keyClashOps(l, name, want)...)
	}
	if len(ops) == 0 {
		return false, nil
	}
	ops = append([]map[string]any{testOp("/metadata/resourceVersion", obj.GetResourceVersion())}, ops...)
	body, err := json.Marshal(ops)
	if err != nil {
		return false, err
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, body), client.FieldOwner(owner)); err != nil {
		return false, fmt.Errorf("repairing the clashing list items: %w", err)
	}
	return true, nil
}

// keyClashOps are the JSON patch operations that leave one item named name, with key want.
// Items are visited from the end so that a removal does not shift the indices still to come.
func keyClashOps(l KeyedList, name string, want int32) []map[string]any {
	var ops []map[string]any
	keep := !slices.Contains(l.Keys, want) // no item has our key yet: one clashing item gets it
	for i := len(l.Names) - 1; i >= 0; i-- {
		if l.Names[i] != name || l.Keys[i] == want {
			continue
		}
		item := fmt.Sprintf("%s/%d", l.Path, i)
		if keep {
			ops = append(ops, testOp(item+"/name", name), map[string]any{"op": "replace", "path": item + "/" + l.KeyField, "value": want})
			keep = false
			continue
		}
		ops = append(ops, testOp(item+"/name", name), map[string]any{"op": "remove", "path": item})
	}
	return ops
}

func testOp(path string, value any) map[string]any {
	return map[string]any{"op": "test", "path": path, "value": value}
}
