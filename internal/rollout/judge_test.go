package rollout

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// failing is a rollout of the spec's template v2 (hash h2) that failed: the deployment
// controller observed it, one new pod of three cannot pull its image for a minute, the three
// old pods of h1 (readyTemplate) serve.
func failing() Facts {
	return Facts{
		Spec:          Spec{Generation: 7, Template: "intent-v2", Request: "req", AutoRollback: true},
		ReadyTemplate: "h1",
		Deployment: &Deployment{
			Generation: 5, ObservedGeneration: 5, Replicas: 3,
			StatusReplicas: 4, UpdatedReplicas: 1, AvailableReplicas: 3,
			Current: "h2", Applied: "intent-v2",
		},
		Problems: []Problem{
			{Template: "h2", Pod: "web-h2-a", Container: "app", Reason: "ImagePullBackOff", FirstSeen: now.Add(-time.Minute)},
			{Template: "h1", Pod: "web-h1-a", Container: "app", Reason: "CreateContainerConfigError", FirstSeen: now.Add(-time.Hour)},
		},
		TargetStored: true,
		TargetIntent: "intent-v1",
		Now:          now,
		Grace:        30 * time.Second,
	}
}

func TestJudge(t *testing.T) {
	rolledBack := &examplev1.RollbackStatus{Generation: 7, FailedSpec: "intent-v2", ReconcileRequest: "req",
		FailedTemplate: "h2", Template: "h1", Reason: examplev1.ReasonImagePullBackOff, Time: metav1.NewTime(now)}
	type want struct {
		judged    string
		completed bool
		ready     string
		failure   string // the Failure's reason, "" for none
		rollBack  *examplev1.RollbackStatus
		recheck   time.Duration
	}
	failed := want{judged: "h2", ready: "h1", failure: examplev1.ReasonImagePullBackOff, rollBack: rolledBack}
	notJudged := want{ready: "h1"}
	reported := want{judged: "h2", ready: "h1", failure: examplev1.ReasonImagePullBackOff}
	cases := map[string]struct {
		edit func(*Facts)
		want want
	}{
		"a failed rollout is rolled back": {func(*Facts) {}, failed},

		// Observed: scenario 1. The user's fix was applied, and the deployment controller has
		// not observed it: the revision, the counts and the pods are still the bad template's.
		"scenario 1: a generation the deployment controller has not observed": {func(f *Facts) {
			f.Deployment.Generation = 6
		}, notJudged},
		"a paused Deployment": {func(f *Facts) { f.Deployment.Paused = true }, notJudged},
		"the current ReplicaSet not known yet": {func(f *Facts) {
			f.Deployment.Current = ""
		}, notJudged},
		"no Deployment": {func(f *Facts) { f.Deployment = nil }, notJudged},
		"the spec's template unknown": {func(f *Facts) {
			f.Spec.Template = ""
			f.Deployment.Applied = ""
		}, notJudged},

		// Completed: scenario 2. v2 completed while no reconcile looked; an HPA scale-up
		// since brought a new pod that cannot pull (a node's registry mirror).
		"scenario 2: completed as the deployment controller says, then a scale-up's pod fails": {func(f *Facts) {
			d := f.Deployment
			d.Replicas, d.StatusReplicas, d.UpdatedReplicas, d.AvailableReplicas = 4, 4, 4, 3
			d.NewReplicaSetAvailable = true
		}, want{judged: "h2", completed: true, ready: "h2"}},
		"completed by the counts": {func(f *Facts) {
			d := f.Deployment
			d.StatusReplicas, d.UpdatedReplicas, d.AvailableReplicas = 3, 3, 3
		}, want{judged: "h2", completed: true, ready: "h2"}},
		"completed, but the apply failed: readyTemplate waits for the intent": {func(f *Facts) {
			d := f.Deployment
			d.StatusReplicas, d.UpdatedReplicas, d.AvailableReplicas, d.Applied = 3, 3, 3, ""
		}, want{judged: "h2", completed: true, ready: "h1"}},
		"NewReplicaSetAvailable kept from the template left, old pods running": {func(f *Facts) {
			f.Deployment.NewReplicaSetAvailable = true
		}, failed},
		"every pod current, one short of available: not yet": {func(f *Facts) {
			d := f.Deployment
			d.StatusReplicas, d.UpdatedReplicas, d.AvailableReplicas = 3, 3, 2
		}, failed},
		"the counts complete, past the progress deadline": {func(f *Facts) {
			d := f.Deployment
			d.StatusReplicas, d.UpdatedReplicas, d.AvailableReplicas, d.DeadlineExceeded = 3, 3, 3, true
			f.Problems = nil
		}, want{judged: "h2", ready: "h1", failure: examplev1.ReasonProgressDeadlineExceeded,
			rollBack: withReason(rolledBack, examplev1.ReasonProgressDeadlineExceeded)}},
		// Scenario 3: at zero replicas the deployment controller says NewReplicaSetAvailable
		// of any template; none of its pods served.
		"scenario 3: a rollout at zero replicas never completes": {func(f *Facts) {
			d := f.Deployment
			d.Replicas, d.StatusReplicas, d.UpdatedReplicas, d.AvailableReplicas = 0, 0, 0, 0
			d.NewReplicaSetAvailable = true
			f.Problems = nil
		}, want{judged: "h2", ready: "h1"}},
		"scenario 3: scaled up from zero, the condition kept, no pod available": {func(f *Facts) {
			d := f.Deployment
			d.Replicas, d.StatusReplicas, d.UpdatedReplicas, d.AvailableReplicas = 2, 2, 2, 0
			d.NewReplicaSetAvailable = true
		}, failed},

		// Failed: scenario 4. The grace starts at the first sighting, not at the pod's
		// creation: a pod that waited for a node and met its first pull error is not due.
		"scenario 4: a problem seen for less than the grace": {func(f *Facts) {
			f.Problems[0].FirstSeen = now.Add(-10 * time.Second)
		}, want{judged: "h2", ready: "h1", recheck: 20 * time.Second}},
		"a problem not seen before counts as seen now": {func(f *Facts) {
			f.Problems[0].FirstSeen = time.Time{}
		}, want{judged: "h2", ready: "h1", recheck: 30 * time.Second}},
		"the problems of another template never count": {func(f *Facts) {
			f.Problems[0].Template = "h1"
		}, want{judged: "h2", ready: "h1"}},
		"a reason that blocks nothing": {func(f *Facts) {
			f.Problems[0].Reason = "ContainerCreating"
		}, want{judged: "h2", ready: "h1"}},
		"a missing volume source": {func(f *Facts) {
			f.Problems[0].Reason = ReasonVolumeSourceMissing
		}, want{judged: "h2", ready: "h1", failure: ReasonVolumeSourceMissing,
			rollBack: withReason(rolledBack, ReasonVolumeSourceMissing)}},
		"ErrImagePull is the pull family": {func(f *Facts) {
			f.Problems[0].Reason = "ErrImagePull"
		}, failed},
		"the most specific reason first": {func(f *Facts) {
			f.Problems = append(f.Problems,
				Problem{Template: "h2", Pod: "web-h2-0", Container: "app", Reason: "CrashLoopBackOff", FirstSeen: now.Add(-time.Hour)},
				Problem{Template: "h2", Pod: "web-h2-z", Container: "app", Reason: "CreateContainerConfigError", FirstSeen: now.Add(-time.Hour)})
		}, want{judged: "h2", ready: "h1", failure: examplev1.ReasonCreateContainerConfigError,
			rollBack: withReason(rolledBack, examplev1.ReasonCreateContainerConfigError)}},
		"the deadline when no pod problem is due": {func(f *Facts) {
			f.Deployment.DeadlineExceeded = true
			f.Problems[0].FirstSeen = now.Add(-10 * time.Second)
		}, want{judged: "h2", ready: "h1", failure: examplev1.ReasonProgressDeadlineExceeded,
			rollBack: withReason(rolledBack, examplev1.ReasonProgressDeadlineExceeded)}},
		"the Deployment does not carry the spec's template (the apply failed)": {func(f *Facts) {
			f.Deployment.Applied = ""
		}, want{judged: "h2", ready: "h1"}},

		// Rolled back only when...
		"autoRollback off: the failure is reported, nothing more": {func(f *Facts) {
			f.Spec.AutoRollback = false
		}, reported},
		"no readyTemplate":                  {func(f *Facts) { f.ReadyTemplate = "" }, want{judged: "h2", failure: examplev1.ReasonImagePullBackOff}},
		"the target's intent is not stored": {func(f *Facts) { f.TargetStored = false }, reported},
		"a target of the spec's own intent (kubectl rollout restart made the difference)": {func(f *Facts) {
			f.TargetIntent = "intent-v2"
		}, reported},
		"a target known by its ReplicaSet only": {func(f *Facts) { f.TargetIntent = "" }, failed},
		"the failing template is the target": {func(f *Facts) {
			f.ReadyTemplate = "h2"
		}, want{judged: "h2", ready: "h2", failure: examplev1.ReasonImagePullBackOff}},
		// Scenario 6: a manager stopped between the record and the apply finds the record
		// and holds it; it never rolls back twice.
		"a rollback held by the status, not yet applied": {func(f *Facts) {
			f.RolledBack = rolledBack
		}, reported},
		"a rollback held by the mark, the status not seen yet": {func(f *Facts) {
			f.Deployment.Mark = rolledBack
		}, reported},
		"a rollback of another template does not hold": {func(f *Facts) {
			f.RolledBack = &examplev1.RollbackStatus{FailedSpec: "intent-v1", ReconcileRequest: "req"}
		}, failed},
		// While it holds, the Deployment carries the target's intent: the spec's template is
		// not judged, and the target completing moves readyTemplate to its hash (a restart
		// since gave it a new one).
		"held: the target's rollout is not judged a failure": {func(f *Facts) {
			f.RolledBack = rolledBack
			f.Deployment.Applied, f.Deployment.Current = "intent-v1", "h1r"
			f.Problems[0].Template = "h1r"
		}, want{judged: "h1r", ready: "h1"}},
		"held: the target completed": {func(f *Facts) {
			f.RolledBack = rolledBack
			d := f.Deployment
			d.Applied, d.Current = "intent-v1", "h1r"
			d.StatusReplicas, d.UpdatedReplicas, d.AvailableReplicas = 3, 3, 3
		}, want{judged: "h1r", completed: true, ready: "h1r"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := failing()
			tc.edit(&f)
			v := Judge(f)
			failure := ""
			if v.Failure != nil {
				failure = v.Failure.Reason
			}
			got := want{v.Judged, v.Completed, v.ReadyTemplate, failure, v.RollBack, v.Recheck}
			if got.judged != tc.want.judged || got.completed != tc.want.completed || got.ready != tc.want.ready ||
				got.failure != tc.want.failure || got.recheck != tc.want.recheck {
				t.Errorf("Judge = %+v, want %+v", got, tc.want)
			}
			if (v.RollBack == nil) != (tc.want.rollBack == nil) || v.RollBack != nil && *v.RollBack != *tc.want.rollBack {
				t.Errorf("RollBack = %+v, want %+v", v.RollBack, tc.want.rollBack)
			}
		})
	}
}

// TestJudgeFailureNamesItsProblem: the failure carries the problem that decided it, so that
// the message names the container and image of the judged template's pod.
func TestJudgeFailureNamesItsProblem(t *testing.T) {
	f := failing()
	f.Problems[0].Image = "web:2"
	v := Judge(f)
	if v.Failure == nil || v.Failure.Problem == nil || v.Failure.Problem.Pod != "web-h2-a" || v.Failure.Problem.Image != "web:2" {
		t.Fatalf("Failure = %+v, want the problem of pod web-h2-a", v.Failure)
	}
}

func withReason(rb *examplev1.RollbackStatus, reason string) *examplev1.RollbackStatus {
	c := *rb
	c.Reason = reason
	return &c
}
