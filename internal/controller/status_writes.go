package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// statusWrites remembers, per MyApp, the resourceVersion its last status write produced, or the
// one a later check found current. The reconciler writes a status only when it differs from
// the cached MyApp's; but the cache may not hold the operator's own last write yet, and the
// MyApp's watch drops status-only updates, so a status computed equal to an older cached one
// would never be written, and the stored status would keep what the last write said. While
// the cached MyApp is not the version a write produced, an unchanged status is therefore
// confirmed with an empty patch guarded by the cached resourceVersion: a stale cache makes it
// conflict, and the reconcile looks again once the cache has caught up. At steady state the
// cached version is the remembered one and nothing is sent.
type statusWrites struct {
	mu   sync.Mutex
	seen map[types.NamespacedName]string
}

// current tells whether rv is the version the last write to the MyApp produced or confirmed.
// A MyApp the operator has not written since it started is taken as current: its cache was
// listed after any earlier write.
func (s *statusWrites) current(key types.NamespacedName, rv string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.seen[key]
	return !ok || last == rv
}

// remember records the version a write produced or a check confirmed.
func (s *statusWrites) remember(key types.NamespacedName, rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[types.NamespacedName]string{}
	}
	s.seen[key] = rv
}

// forget drops what is known of a MyApp that is gone.
func (s *statusWrites) forget(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.seen, key)
}
