package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/rollout"
)

// TestSightings: a problem's first sighting lasts while its pod exists and is not ready (a
// crash loop keeps it between crashes), goes once the pod is ready or gone, and a missing
// volume source's belongs to the template whose pods wait for it.
func TestSightings(t *testing.T) {
	app := types.NamespacedName{Namespace: "shop", Name: "web"}
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	crash := func() []rollout.Problem {
		return []rollout.Problem{{Template: "v2", Pod: "web-v2-a", Container: "app", Reason: "CrashLoopBackOff"}}
	}
	missing := func(template string) []rollout.Problem {
		return []rollout.Problem{{Template: template, Container: "ConfigMap/settings", Reason: examplev1.ReasonVolumeSourceMissing}}
	}
	var s sightings
	at := func(problems []rollout.Problem, waiting map[string]bool, now time.Time) time.Time {
		t.Helper()
		s.stamp(app, problems, waiting, now)
		if len(problems) == 0 {
			return time.Time{}
		}
		return problems[0].FirstSeen
	}
	unready := map[string]bool{"web-v2-a": true}
	ready := map[string]bool{"web-v2-a": false}

	if got := at(crash(), unready, t0); !got.Equal(t0) {
		t.Fatalf("first sighting = %v, want %v", got, t0)
	}
	at(nil, unready, t0.Add(10*time.Second)) // running between two crashes, not ready yet
	if got := at(crash(), unready, t0.Add(20*time.Second)); !got.Equal(t0) {
		t.Errorf("a crash loop's problem between crashes: first sighting = %v, want %v", got, t0)
	}
	at(nil, ready, t0.Add(30*time.Second)) // the pod served
	if got := at(crash(), unready, t0.Add(20*time.Minute)); !got.Equal(t0.Add(20 * time.Minute)) {
		t.Errorf("a problem after the pod was ready: first sighting = %v, want the new look's", got)
	}
	at(nil, map[string]bool{}, t0.Add(21*time.Minute)) // the pod is gone
	if got := at(crash(), unready, t0.Add(22*time.Minute)); !got.Equal(t0.Add(22 * time.Minute)) {
		t.Errorf("a problem of a pod of the same name made again: first sighting = %v, want the new look's", got)
	}

	s.forget(app)
	if got := at(missing("v2"), nil, t0); !got.Equal(t0) {
		t.Fatalf("first sighting = %v, want %v", got, t0)
	}
	if got := at(missing("v2"), nil, t0.Add(time.Minute)); !got.Equal(t0) {
		t.Errorf("the same template's missing source: first sighting = %v, want %v", got, t0)
	}
	if got := at(missing("v3"), nil, t0.Add(2*time.Minute)); !got.Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("a later template's missing source inherited the sighting of v2's: %v", got)
	}
}
