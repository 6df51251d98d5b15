package controller

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A read of a controller-runtime cache waits for its informer's first list, with the
// caller's context as its only bound. An informer whose first list never succeeds (the
// HTTPRoute CRD removed after the manager resolved the kind and before the route cache
// synced; the RBAC to list the kind missing) would hold every reconcile that reads it, and the
// event handlers that map through it, for ever. The reads of such a cache (the HTTPRoutes';
// the pod cache's ReplicaSets and EndpointSlices) are bounded instead: past the bound the read
// fails with notSyncedError, and the caller decides nothing from it (a route read sends the
// reconciler to discovery to look again whether the kind is served).

// cacheSyncWait bounds one read of such a cache.
const cacheSyncWait = 5 * time.Second

// boundedReader is a cache's reader whose reads wait at most wait for the cache.
type boundedReader struct {
	client.Reader
	what string
	wait time.Duration
}

// notSyncedError says that a cache did not answer within its bound: its informer has not
// listed the kind yet.
type notSyncedError struct{ what string }

func (e *notSyncedError) Error() string {
	return fmt.Sprintf("the cache of %s has not synced: the API server did not list them (is the kind still served, and may the operator list it?)", e.what)
}

func (b boundedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	bounded, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	return b.failed(ctx, bounded, b.Reader.Get(bounded, key, obj, opts...))
}

func (b boundedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	bounded, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	return b.failed(ctx, bounded, b.Reader.List(bounded, list, opts...))
}

// failed is err, or notSyncedError when the bound, and not the caller's context, ended the read.
func (b boundedReader) failed(ctx, bounded context.Context, err error) error {
	if err != nil && bounded.Err() != nil && ctx.Err() == nil {
		return &notSyncedError{what: b.what}
	}
	return err
}
