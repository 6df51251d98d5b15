package ssa

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KeyedList is a list of an object whose items server-side apply merges by a number and a
// protocol (a Service's ports by port and protocol, a container's ports by containerPort and
// protocol), with the name each item carries.
type KeyedList struct {
	// Path is the list's JSON pointer, e.g. "/spec/ports".
	Path string
	// KeyField is the JSON name of the items' number, e.g. "port".
	KeyField string
	// Items are the list's items, in its order.
	Items []KeyedItem
}

// KeyedItem is one item of a KeyedList: its name and merge key.
type KeyedItem struct {
	Name string
	ItemKey
}

// ItemKey is the merge key of a KeyedList's item: its number and protocol.
type ItemKey struct {
	Number   int32
	Protocol string
}

// RepairKeyClash handles the one rejection a forced apply cannot overcome by itself. When
// someone changes the key (number or protocol) of an item the field manager owns, the edited
// item becomes theirs and the apply adds the manager's item beside it; both carry the item's
// name, and the API server rejects the duplicate. For each list and each name of want, the
// item of that name whose key is not the wanted one gets the wanted key back (any further item
// of that name is removed), with a JSON patch by owner whose first operation tests the
// resourceVersion obj was read at. Every other item stays. The apply that follows then owns
// the item again. It reports whether it sent a patch.
func RepairKeyClash(ctx context.Context, c client.Writer, obj client.Object, owner string, want map[string]ItemKey, lists ...KeyedList) (bool, error) {
	var ops []map[string]any
	for _, l := range lists {
		ops = append(ops, keyClashOps(l, want)...)
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

// keyClashOps are the JSON patch operations that leave, for each name of want, one item of
// that name with the wanted key. Items are visited from the end so that a removal does not
// shift the indices still to come.
func keyClashOps(l KeyedList, want map[string]ItemKey) []map[string]any {
	// A name whose key no item has yet gets it back in one clashing item; a name whose key an
	// item has (the manager's own, or someone else's the apply takes over) loses its others.
	keep := map[string]bool{}
	for name, key := range want {
		keep[name] = !slices.ContainsFunc(l.Items, func(i KeyedItem) bool { return i.ItemKey == key })
	}
	var ops []map[string]any
	for i := len(l.Items) - 1; i >= 0; i-- {
		it := l.Items[i]
		key, ours := want[it.Name]
		if !ours || it.ItemKey == key {
			continue
		}
		item := fmt.Sprintf("%s/%d", l.Path, i)
		ops = append(ops, testOp(item+"/name", it.Name))
		if !keep[it.Name] {
			ops = append(ops, map[string]any{"op": "remove", "path": item})
			continue
		}
		keep[it.Name] = false
		if it.Number != key.Number {
			ops = append(ops, map[string]any{"op": "replace", "path": item + "/" + l.KeyField, "value": key.Number})
		}
		if it.Protocol != key.Protocol {
			ops = append(ops, map[string]any{"op": "replace", "path": item + "/protocol", "value": key.Protocol})
		}
	}
	return ops
}

func testOp(path string, value any) map[string]any {
	return map[string]any{"op": "test", "path": path, "value": value}
}
