package controller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/example/myapp-operator/internal/rollout"
)

// sightings remembers when the running manager first saw each problem of a MyApp's pods: per
// pod, container and problem family (rollout.Family). The grace before a problem fails a
// rollout counts from there, not from the pod's creation: a pod that waited a minute for a
// node and then meets one pull error is not due at once. The kubelet writes no time for a
// waiting reason, so the first sighting is the manager's own; it lives in memory because
// losing it can only delay a rollback by one grace (a restarted manager sees the problem
// anew), never make one. A sighting lasts while its pod exists and is not ready: a container
// that crash-loops is running between two crashes, and its problem is the same one when it
// waits again; a pod that became ready since served, and a later problem of it is a new one.
// A missing volume source's sighting is the template's whose pods wait for it, so that it never
// passes to a later template that takes the same source.
type sightings struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[sighting]time.Time
}

// sighting names one problem: the pod and container (or, for a missing volume source, the
// source: Pod empty), the problem's family, and the template of the pods.
type sighting struct {
	pod, container, family, template string
}

// stamp gives each problem its first sighting, the remembered one or now, and forgets the
// MyApp's sightings of pods that are gone or ready (waiting names the MyApp's pods that exist
// and are not ready; the volume sources' sightings go when the source is found).
func (s *sightings) stamp(app types.NamespacedName, problems []rollout.Problem, waiting map[string]bool, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[types.NamespacedName]map[sighting]time.Time{}
	}
	seen := s.m[app]
	next := make(map[sighting]time.Time, len(seen)+len(problems))
	for k, t := range seen {
		if k.pod != "" && waiting[k.pod] {
			next[k] = t
		}
	}
	for i := range problems {
		p := &problems[i]
		k := sighting{pod: p.Pod, container: p.Container, family: rollout.Family(p.Reason), template: p.Template}
		first, ok := seen[k]
		if !ok {
			first = now
		}
		next[k] = first
		p.FirstSeen = first
	}
	if len(next) == 0 {
		delete(s.m, app)
		return
	}
	s.m[app] = next
}

// forget drops what is known of a MyApp that is gone.
func (s *sightings) forget(app types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, app)
}
