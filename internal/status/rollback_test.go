package status

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestRolloutFailure(t *testing.T) {
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: examplev1.MyAppSpec{Image: "web:2"}}
	rolling := func() *appsv1.Deployment { return deployment(2, 2, 3, 4, 1, 3, 3, true) }
	deadline := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}
	now := t0.Time
	waiting := func(reason string) []ContainerWaiting {
		return []ContainerWaiting{{Pod: "web-b-1", Container: "app", Image: "web:2", Reason: reason, Since: now.Add(-time.Minute)}}
	}
	young := []ContainerWaiting{{Pod: "web-b-1", Container: "app", Image: "web:2", Reason: "ErrImagePull", Since: now.Add(-10 * time.Second)}}
	cases := map[string]struct {
		d      *appsv1.Deployment
		pods   []ContainerWaiting
		reason string // "" for no failure
	}{
		"a slow rollout":                          {rolling(), nil, ""},
		"new pods being created":                  {rolling(), waiting("ContainerCreating"), ""},
		"an image that cannot be pulled":          {rolling(), waiting("ErrImagePull"), examplev1.ReasonImagePullBackOff},
		"pull back-off":                           {rolling(), waiting("ImagePullBackOff"), examplev1.ReasonImagePullBackOff},
		"an image reference the kubelet refuses":  {rolling(), waiting("InvalidImageName"), examplev1.ReasonInvalidImageName},
		"a missing Secret":                        {rolling(), waiting("CreateContainerConfigError"), examplev1.ReasonCreateContainerConfigError},
		"a crash loop":                            {rolling(), waiting("CrashLoopBackOff"), "CrashLoopBackOff"},
		"the progress deadline passed":            {withCondition(rolling(), deadline), nil, examplev1.ReasonProgressDeadlineExceeded},
		"a deadline of an earlier generation":     {withCondition(deployment(3, 2, 3, 4, 1, 3, 3, true), deadline), nil, ""},
		"the pods' problem before the deadline's": {withCondition(rolling(), deadline), waiting("CrashLoopBackOff"), "CrashLoopBackOff"},
		"no Deployment, no pods":                  {nil, nil, ""},
	}
	t.Run("a problem within its grace asks for a look when it ends", func(t *testing.T) {
		_, _, failed, recheck := RolloutFailure(app, rolling(), young, now, 30*time.Second)
		if failed || recheck != 20*time.Second {
			t.Fatalf("failed %v, recheck %v: want not yet, and a look in 20s", failed, recheck)
		}
	})
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			reason, message, failed, _ := RolloutFailure(app, tc.d, tc.pods, now, 30*time.Second)
			g.Expect(failed).To(Equal(tc.reason != ""))
			g.Expect(reason).To(Equal(tc.reason))
			if failed {
				g.Expect(message).NotTo(BeEmpty())
			}
		})
	}
}

// TestRolloutFailureProperty: over Deployment statuses and pod states drawn at random, a
// rollout has failed exactly when it is not complete and a pod of its template has waited
// past the grace for a reason that blocks it, or the deadline passed for the Deployment's
// latest generation; a rollout that is only slow, or complete, never has.
func TestRolloutFailureProperty(t *testing.T) {
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: examplev1.MyAppSpec{Image: "web:2"}}
	reasons := []string{"ContainerCreating", "PodInitializing", "ErrImagePull", "ImagePullBackOff", "InvalidImageName",
		"CreateContainerConfigError", "CrashLoopBackOff", "RunContainerError", "CreateContainerError", ""}
	conditions := []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated"},
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"},
		{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"},
		{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate"},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		n := func() int32 { return rng.Int32N(6) }
		generation := 1 + rng.Int64N(3)
		d := deployment(generation, generation-rng.Int64N(2), n(), n(), n(), n(), n(), rng.IntN(2) == 0)
		d.Status.Conditions = nil
		deadline := false
		for _, c := range conditions {
			if rng.IntN(3) == 0 {
				d.Status.Conditions = append(d.Status.Conditions, c)
				deadline = deadline || c.Reason == "ProgressDeadlineExceeded"
			}
		}
		var pods []ContainerWaiting
		blocked := false
		for range rng.IntN(3) {
			r := reasons[rng.IntN(len(reasons))]
			age := time.Duration(rng.IntN(60)) * time.Second
			pods = append(pods, ContainerWaiting{Pod: "p", Container: "app", Reason: r, Since: t0.Add(-age)})
			blocked = blocked || (BlocksRollout(r) && age >= 30*time.Second)
		}
		s := d.Status
		incomplete := s.ObservedGeneration < d.Generation || s.Replicas > s.UpdatedReplicas ||
			s.UpdatedReplicas < *d.Spec.Replicas || s.AvailableReplicas < s.UpdatedReplicas
		want := incomplete && (blocked || (deadline && d.Status.ObservedGeneration >= d.Generation))
		if _, _, failed, _ := RolloutFailure(app, d, pods, t0.Time, 30*time.Second); failed != want {
			t.Fatalf("case %d: failed %v, want %v: status %+v, pods %+v", i, failed, want, d.Status, pods)
		}
	}
}

func TestRollbackHolds(t *testing.T) {
	record := &examplev1.RollbackStatus{FailedSpec: "spec-b", ReconcileRequest: Digest("a")}
	cases := map[string]struct {
		spec, request string
		record        *examplev1.RollbackStatus
		held          bool
	}{
		"no rollback":                              {"spec-b", "a", nil, false},
		"the template that failed":                 {"spec-b", "a", record, true},
		"a new template":                           {"spec-c", "a", record, false},
		"a reconcile request":                      {"spec-b", "b", record, false},
		"a request where there was one, gone":      {"spec-b", "", record, false},
		"a long request value, held by its digest": {"spec-b", strings.Repeat("x", 1000), &examplev1.RollbackStatus{FailedSpec: "spec-b", ReconcileRequest: Digest(strings.Repeat("x", 1000))}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			app := &examplev1.MyApp{}
			if tc.request != "" {
				app.Annotations = map[string]string{examplev1.ReconcileRequestAnnotation: tc.request}
			}
			if got := RollbackHolds(tc.record, app, tc.spec); got != tc.held {
				t.Fatalf("held %v, want %v", got, tc.held)
			}
		})
	}
}

func TestReadyTemplateAndRolledBack(t *testing.T) {
	g := NewWithT(t)
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 1}}
	rolledOut := deployment(1, 1, 3, 3, 3, 3, 3, true)

	app.Status = Compute(app, Observed{Deployment: rolledOut}, t0)
	g.Expect(app.Status.ReadyTemplate).To(BeEmpty(), "Ready, but which template is not known yet")
	app.Status = Compute(app, Observed{Deployment: rolledOut, TemplateHash: "a"}, t0)
	g.Expect(app.Status.ReadyTemplate).To(Equal("a"))

	app.Generation = 2
	rolling := deployment(2, 2, 3, 4, 1, 3, 3, true)
	app.Status = Compute(app, Observed{Deployment: rolling, TemplateHash: "b"}, t0)
	g.Expect(app.Status.ReadyTemplate).To(Equal("a"), "a template whose rollout is not done is not recorded")

	done := deployment(2, 2, 3, 3, 3, 3, 3, true)
	stalled := Observed{Deployment: done, TemplateHash: "b", Failures: []Failure{{Reason: examplev1.ReasonChildRejected, Message: "m", Terminal: true}}}
	if next := Compute(app, stalled, t0); next.ReadyTemplate != "b" {
		t.Fatalf("readyTemplate %q: a completed rollout is recorded, whatever else is Stalled", next.ReadyTemplate)
	}

	rb := &examplev1.RollbackStatus{Generation: 2, FailedTemplate: "b", Template: "a", Reason: examplev1.ReasonImagePullBackOff, Message: "Rolled back"}
	app.Status = Compute(app, Observed{Deployment: rolledOut, DeploymentStale: true, RolledBack: rb}, t0)
	g.Expect(app.Status.RolledBack).To(Equal(rb))
	g.Expect(app.Status.ReadyTemplate).To(Equal("a"))
	for _, c := range app.Status.Conditions {
		g.Expect(c.Reason).To(Equal(examplev1.ReasonRolledBack), c.Type)
		g.Expect(c.Message).To(Equal("Rolled back"), c.Type)
	}
	g.Expect(conditionStatus(app, examplev1.ConditionStalled)).To(Equal(metav1.ConditionTrue))
	g.Expect(conditionStatus(app, examplev1.ConditionReady)).To(Equal(metav1.ConditionFalse))

	app.Status = Compute(app, Observed{Deployment: rolledOut, TemplateHash: "a"}, t0)
	g.Expect(app.Status.RolledBack).To(BeNil(), "a rollback that no longer holds is dropped")
}

func conditionStatus(app *examplev1.MyApp, typ string) metav1.ConditionStatus {
	for _, c := range app.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return metav1.ConditionUnknown
}
