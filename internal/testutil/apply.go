package testutil

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplyAs server-side applies obj, a typed object with its TypeMeta set, as the field manager
// owner, forced: how a test sets the scene as an earlier release of the operator left it.
func ApplyAs(ctx context.Context, c client.Client, obj client.Object, owner string) error {
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return c.Patch(ctx, obj, client.RawPatch(types.ApplyPatchType, body), client.FieldOwner(owner), client.ForceOwnership)
}
