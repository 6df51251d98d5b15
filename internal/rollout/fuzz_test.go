package rollout

import (
	"testing"
	"time"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// FuzzJudge: for any facts, Judge does not panic, never rolls back a template that completed,
// always rolls back to readyTemplate and the template it judged, proposes a rollback only when
// none holds, and moves readyTemplate only to a completed template whose intent is known.
// Confirm, over any two views of the Deployment, moves readyTemplate only to the judged
// Deployment's template while the latest still carries it, and rolls back only what Judge
// rolls back on the latest, never a template either view shows completed.
func FuzzJudge(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24})
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255})
	f.Add([]byte{1, 0, 1, 1, 1, 0, 3, 4, 1, 1, 1, 0, 1, 2, 1, 1, 0, 2, 3, 1, 200, 1, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		facts := factsFrom(&byteSource{data: data})
		v := Judge(facts)
		d := facts.Deployment
		if v.ReadyTemplate != facts.ReadyTemplate && (!v.Completed || v.ReadyTemplate != v.Judged || d.Applied == "") {
			t.Fatalf("readyTemplate moved to %q (judged %q, completed %v) for %+v", v.ReadyTemplate, v.Judged, v.Completed, facts)
		}
		if v.Completed && v.Failure != nil {
			t.Fatalf("a completed template failed: %+v", facts)
		}
		checkConfirm(t, facts, deploymentFrom(&byteSource{data: data[min(len(data), 24):]}))
		rb := v.RollBack
		if rb == nil {
			return
		}
		switch {
		case v.Completed || completed(d):
			t.Fatalf("rolled back a completed template: %+v", facts)
		case Held(facts) != nil:
			t.Fatalf("rolled back while %+v holds", Held(facts))
		case rb.Template != facts.ReadyTemplate || rb.Template == "":
			t.Fatalf("rolled back to %q, readyTemplate %q", rb.Template, facts.ReadyTemplate)
		case rb.FailedTemplate != v.Judged || rb.FailedTemplate == rb.Template:
			t.Fatalf("rolled back %q, judged %q", rb.FailedTemplate, v.Judged)
		case rb.FailedSpec != facts.Spec.Template || d.Applied != facts.Spec.Template || !facts.Spec.AutoRollback ||
			!facts.TargetStored || facts.TargetIntent == facts.Spec.Template:
			t.Fatalf("rolled back a template the spec does not ask for, or may not: %+v", facts)
		case v.Failure == nil || rb.Reason != v.Failure.Reason:
			t.Fatalf("rolled back for %q without that failure (%+v)", rb.Reason, v.Failure)
		}
	})
}

// checkConfirm checks Confirm's properties, with facts.Deployment as the judged view.
func checkConfirm(t *testing.T, facts Facts, latest *Deployment) {
	judged := facts.Deployment
	v := Confirm(facts, judged, latest)
	if v.ReadyTemplate != facts.ReadyTemplate &&
		(judged == nil || latest == nil || v.ReadyTemplate != judged.Current || latest.Current != judged.Current || judged.Applied == "") {
		t.Fatalf("Confirm moved readyTemplate to %q (judged %+v, latest %+v)", v.ReadyTemplate, judged, latest)
	}
	rb := v.RollBack
	if rb == nil {
		return
	}
	facts.Deployment = latest
	if Judge(facts).RollBack == nil {
		t.Fatalf("Confirm rolled back what Judge on the latest Deployment does not: %+v", facts)
	}
	for _, d := range []*Deployment{judged, latest} {
		if observed(d) && d.Current == rb.FailedTemplate && completed(d) {
			t.Fatalf("Confirm rolled back %s, which a view shows completed: %+v", rb.FailedTemplate, d)
		}
	}
}

// byteSource reads small numbers from fuzz input, then zeros.
type byteSource struct {
	data []byte
}

func (s *byteSource) next(n int) int {
	if len(s.data) == 0 {
		return 0
	}
	b := s.data[0]
	s.data = s.data[1:]
	return int(b) % n
}

func (s *byteSource) bool() bool { return s.next(2) == 1 }

// factsFrom builds facts over a few names, so that equalities between them are common.
func factsFrom(s *byteSource) Facts {
	hashes := []string{"", "h1", "h2", "h3"}
	intents := []string{"", "intent-v1", "intent-v2"}
	requests := []string{"", "req"}
	reasons := []string{"ImagePullBackOff", "ErrImagePull", "CrashLoopBackOff", "CreateContainerConfigError",
		ReasonVolumeSourceMissing, "InvalidImageName", "ContainerCreating", ""}
	record := func() *examplev1.RollbackStatus {
		if !s.bool() {
			return nil
		}
		return &examplev1.RollbackStatus{FailedSpec: intents[s.next(3)], ReconcileRequest: requests[s.next(2)],
			FailedTemplate: hashes[s.next(4)], Template: hashes[s.next(4)]}
	}
	f := Facts{
		Spec:          Spec{Generation: int64(s.next(4)), Template: intents[s.next(3)], Request: requests[s.next(2)], AutoRollback: s.bool()},
		ReadyTemplate: hashes[s.next(4)],
		RolledBack:    record(),
		TargetStored:  s.bool(),
		TargetIntent:  intents[s.next(3)],
		Now:           now,
		Grace:         time.Duration(s.next(3)) * 30 * time.Second,
	}
	if s.next(8) > 0 {
		f.Deployment = deploymentFrom(s)
	}
	for range s.next(4) {
		f.Problems = append(f.Problems, Problem{Template: hashes[s.next(4)], Pod: "p" + hashes[s.next(4)], Container: "app",
			Reason: reasons[s.next(len(reasons))], FirstSeen: now.Add(-time.Duration(s.next(90)) * time.Second)})
	}
	return f
}

// deploymentFrom builds a Deployment over the same few names.
func deploymentFrom(s *byteSource) *Deployment {
	hashes := []string{"", "h1", "h2", "h3"}
	intents := []string{"", "intent-v1", "intent-v2"}
	n := func() int32 { return int32(s.next(5)) }
	d := &Deployment{
		Generation: int64(s.next(3)), ObservedGeneration: int64(s.next(3)), Paused: s.next(6) == 0,
		Replicas: n(), StatusReplicas: n(), UpdatedReplicas: n(), AvailableReplicas: n(),
		NewReplicaSetAvailable: s.bool(), DeadlineExceeded: s.bool(),
		Current: hashes[s.next(4)], Applied: intents[s.next(3)],
	}
	if s.bool() {
		d.Mark = &examplev1.RollbackStatus{FailedSpec: intents[s.next(3)], FailedTemplate: hashes[s.next(4)], Template: hashes[s.next(4)]}
	}
	return d
}
