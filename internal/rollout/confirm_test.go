package rollout

import (
	"testing"
)

func TestConfirm(t *testing.T) {
	// judged: the cached Deployment, h2 complete with one pod; latest: h2 scaled to zero since.
	complete := func() *Deployment {
		return &Deployment{Generation: 5, ObservedGeneration: 5, Replicas: 1, StatusReplicas: 1, UpdatedReplicas: 1,
			AvailableReplicas: 1, NewReplicaSetAvailable: true, Current: "h2", Applied: "intent-v2"}
	}
	scaledToZero := func() *Deployment {
		d := complete()
		d.Generation, d.ObservedGeneration, d.Replicas, d.StatusReplicas, d.UpdatedReplicas, d.AvailableReplicas = 6, 6, 0, 0, 0, 0
		return d
	}
	cases := map[string]struct {
		judged, latest func() *Deployment
		ready          string
		rollBack       bool
	}{
		"a completion the cache saw, its pods gone since": {complete, scaledToZero, "h2", false},
		"the Deployment moved on to another template": {complete, func() *Deployment {
			d := failing().Deployment
			d.Current = "h3"
			return d
		}, "h1", false},
		"the Deployment is gone": {complete, func() *Deployment { return nil }, "h1", false},
		// The cache showed the Deployment in the revision window: the ReplicaSets read after
		// it show no current template, so nothing moves.
		"the judged template not confirmed": {func() *Deployment {
			d := complete()
			d.Current = ""
			return d
		}, complete, "h1", false},
		"a failure the latest Deployment still shows": {func() *Deployment { return failing().Deployment }, func() *Deployment { return failing().Deployment }, "h1", true},
		"a failure that completed since":              {func() *Deployment { return failing().Deployment }, complete, "h1", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := Confirm(failing(), tc.judged(), tc.latest())
			if v.ReadyTemplate != tc.ready || (v.RollBack != nil) != tc.rollBack {
				t.Fatalf("Confirm = readyTemplate %q, rollBack %+v; want %q, %v", v.ReadyTemplate, v.RollBack, tc.ready, tc.rollBack)
			}
		})
	}
}
