package status

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// TestRolloutProblemMessage: the rollback's message names the problem in the status's words,
// and a crash loop, which is no status problem of its own, in words of its own.
func TestRolloutProblemMessage(t *testing.T) {
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: examplev1.MyAppSpec{Image: "web:2"}}
	cases := map[string]struct {
		w    ContainerWaiting
		want []string
	}{
		"a pull error": {ContainerWaiting{Container: "app", Image: "web:2", Reason: "ErrImagePull"}, []string{`cannot pull image "web:2"`}},
		"a crash loop": {ContainerWaiting{Container: "app", Image: "web:2", Reason: "CrashLoopBackOff"}, []string{"keep exiting (CrashLoopBackOff)", "--previous"}},
		"a missing source": {ContainerWaiting{Reason: examplev1.ReasonVolumeSourceMissing, Message: "ConfigMap settings (spec.volumes[0].configMap.name)"},
			[]string{"ConfigMap settings (spec.volumes[0].configMap.name) does not exist", "may also be made optional"}},
		"a missing claim": {ContainerWaiting{Reason: examplev1.ReasonVolumeSourceMissing, Message: "PersistentVolumeClaim data (spec.volumes[0].persistentVolumeClaim.claimName)"},
			[]string{"PersistentVolumeClaim data (spec.volumes[0].persistentVolumeClaim.claimName) does not exist", "fix the name"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := RolloutProblemMessage(app, tc.w)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("RolloutProblemMessage() = %q, want it to say %q", got, w)
				}
			}
		})
	}
}

func TestReadyTemplateAndRolledBack(t *testing.T) {
	g := NewWithT(t)
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 1}}
	rolledOut := deployment(1, 1, 3, 3, 3, 3, 3, true)

	app.Status = Compute(app, Observed{Deployment: rolledOut}, t0)
	g.Expect(app.Status.ReadyTemplate).To(BeEmpty(), "Ready, but no template recorded by the rollout decision")
	app.Status = Compute(app, Observed{Deployment: rolledOut, ReadyTemplate: "a"}, t0)
	g.Expect(app.Status.ReadyTemplate).To(Equal("a"))

	app.Generation = 2
	rolling := deployment(2, 2, 3, 4, 1, 3, 3, true)
	app.Status = Compute(app, Observed{Deployment: rolling}, t0)
	g.Expect(app.Status.ReadyTemplate).To(Equal("a"), "the recorded template stays until the decision records another")

	done := deployment(2, 2, 3, 3, 3, 3, 3, true)
	stalled := Observed{Deployment: done, ReadyTemplate: "b", Failures: []Failure{{Reason: examplev1.ReasonChildRejected, Message: "m", Terminal: true}}}
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

	app.Status = Compute(app, Observed{Deployment: rolledOut, ReadyTemplate: "a"}, t0)
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
