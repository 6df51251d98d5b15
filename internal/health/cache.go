// Package health holds the manager's health and readiness checks.
package health

import (
	"context"
	"errors"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// SyncWaiter is what CacheSynced reads of the manager's cache.
type SyncWaiter interface {
	WaitForCacheSync(ctx context.Context) bool
}

// ErrCacheNotSynced is what /readyz reports while the cache has not listed every kind it
// watches.
var ErrCacheNotSynced = errors.New("the cache has not synced every informer: a list of a watched kind fails or has not finished")

// CacheSynced is a readiness check that fails while the cache has not started, or any of its
// informers has not completed its first list. A controller reconciles nothing until its
// informers sync, so a replica whose lists keep failing (a kind it may not list, or an object
// it cannot decode) is not ready, whatever else works. Once synced, an informer stays synced
// through later list failures (a deleted CRD), as client-go defines it. A synced cache
// answers at once; an unsynced one is waited on for at most wait, within the probe's deadline.
func CacheSynced(c SyncWaiter, wait time.Duration) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), wait)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return ErrCacheNotSynced
		}
		return nil
	}
}
