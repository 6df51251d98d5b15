// Package ssa holds the operator's server-side apply helpers, as cluster-api keeps its own in
// internal/util/ssa: applying an intent without changing it, telling whether an object already
// carries an intent, reading who owns a field, and the one repair a forced apply cannot make
// by itself. It knows nothing of MyApps; the controller decides what to apply and when.
package ssa

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Apply sends cfg as a server-side apply with the given field manager, forced when force is
// set, and leaves in obj exactly the object the API server answers. cfg is only read: it is
// serialized for the request, and the answer is decoded into obj, never into cfg, so an
// intent can be compared or applied again after the call. obj names the object's kind; what
// it held before is discarded.
func Apply(ctx context.Context, c client.Writer, cfg runtime.ApplyConfiguration, obj client.Object, owner string, force bool) error {
	return ApplyAt(ctx, c, cfg, obj, owner, force, "")
}

// ApplyAt is Apply guarded by a resourceVersion, when one is given: the API server refuses the
// apply (Conflict) unless the object is still at that version, so that a change decided from an
// object as a cache showed it never lands on a newer one the decision did not see. cfg is not
// changed: the version goes into the request only.
func ApplyAt(ctx context.Context, c client.Writer, cfg runtime.ApplyConfiguration, obj client.Object, owner string, force bool, resourceVersion string) error {
	body, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	if resourceVersion != "" {
		if body, err = withResourceVersion(body, resourceVersion); err != nil {
			return err
		}
	}
	name, namespace := NameOf(cfg), NamespaceOf(cfg)
	if name == "" {
		return errors.New("apply configuration without a name")
	}
	// Decoding JSON into a filled struct would keep whatever the answer leaves out (a count
	// that dropped to zero, a removed annotation): start from the zero value.
	v := reflect.ValueOf(obj).Elem()
	v.Set(reflect.Zero(v.Type()))
	obj.SetName(name)
	obj.SetNamespace(namespace)
	opts := []client.PatchOption{client.FieldOwner(owner)}
	if force {
		opts = append(opts, client.ForceOwnership)
	}
	return c.Patch(ctx, obj, client.RawPatch(types.ApplyPatchType, body), opts...)
}

// Extractor reads back from an object the apply configuration of what one field manager owns
// in it: appsv1ac.ExtractDeployment and its kin.
type Extractor[T client.Object, AC runtime.ApplyConfiguration] func(T, string) (AC, error)

// Carries tells whether obj holds, under the field manager's entry, exactly what cfg says:
// then applying cfg would change nothing. Only the manager's own fields are compared, as the
// API server stored them, so fields others own or the server defaulted never make a
// difference. A hand edit of a field the manager owns moves that field to the editor's entry,
// so the comparison sees it.
func Carries[T client.Object, AC runtime.ApplyConfiguration](obj T, cfg AC, extract Extractor[T, AC], owner string) (bool, error) {
	owned, err := extract(obj, owner)
	if err != nil {
		return false, err
	}
	return equality.Semantic.DeepEqual(owned, cfg), nil
}

// Digest names an intent by the request that applies it: two intents with the same digest
// send the same body.
type Digest [sha256.Size]byte

// DigestOf is the digest of cfg: the SHA-256 of the JSON an apply of cfg sends. It costs a
// fraction of what Carries does (`make bench`), so it serves to remember that an object
// carried an intent.
func DigestOf(cfg runtime.ApplyConfiguration) (Digest, error) {
	body, err := json.Marshal(cfg)
	if err != nil {
		return Digest{}, err
	}
	return sha256.Sum256(body), nil
}

// Written reads an apply's answer once and tells whether it carries cfg under the field
// manager's entry (nothing on the way, such as a mutating admission webhook, changed a field
// the manager sent) and, when the object existed before, whether what the manager owns differs
// from before's: whether the apply changed anything the manager cares about.
func Written[T client.Object, AC runtime.ApplyConfiguration](before, after T, existed bool, cfg AC, extract Extractor[T, AC], owner string) (carries, changed bool, err error) {
	owned, err := extract(after, owner)
	if err != nil {
		return false, false, err
	}
	carries = equality.Semantic.DeepEqual(owned, cfg)
	if !existed {
		return carries, true, nil
	}
	was, err := extract(before, owner)
	if err != nil {
		return carries, false, err
	}
	return carries, !equality.Semantic.DeepEqual(was, owned), nil
}

// NameOf reads the name an apply configuration carries ("" for none).
func NameOf(cfg runtime.ApplyConfiguration) string {
	if named, ok := cfg.(interface{ GetName() *string }); ok && named.GetName() != nil {
		return *named.GetName()
	}
	return ""
}

// NamespaceOf reads the namespace an apply configuration carries ("" for none).
func NamespaceOf(cfg runtime.ApplyConfiguration) string {
	if named, ok := cfg.(interface{ GetNamespace() *string }); ok && named.GetNamespace() != nil {
		return *named.GetNamespace()
	}
	return ""
}

// withResourceVersion sets metadata.resourceVersion in an apply request's body.
func withResourceVersion(body []byte, resourceVersion string) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	meta, _ := doc["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["resourceVersion"] = resourceVersion
	doc["metadata"] = meta
	return json.Marshal(doc)
}
