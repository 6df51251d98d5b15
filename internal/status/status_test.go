package status

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
)

func deployment(generation, observed int64, replicas, updated, ready, available, total int32) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Name, d.Generation = "web", generation
	d.Spec.Replicas = &replicas
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: observed, Replicas: total, UpdatedReplicas: updated,
		ReadyReplicas: ready, AvailableReplicas: available,
	}
	return d
}

func TestCompute(t *testing.T) {
	deadline := deployment(2, 2, 3, 1, 0, 0, 1)
	deadline.Status.Conditions = []appsv1.DeploymentCondition{{
		Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
	}}

	type want struct {
		ready, progressing, degraded metav1.ConditionStatus
		reason                       string // of Ready
		readyReplicas, available     int32
	}
	cases := map[string]struct {
		obs  Observed
		want want
	}{
		"no deployment yet": {
			obs:  Observed{},
			want: want{metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, ReasonRollingOut, 0, 0},
		},
		"spec not yet observed by the deployment controller": {
			obs:  Observed{Deployment: deployment(3, 2, 3, 3, 3, 3, 3)},
			want: want{metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, ReasonRollingOut, 3, 3},
		},
		"replicas being updated": {
			obs:  Observed{Deployment: deployment(2, 2, 3, 1, 3, 3, 4)},
			want: want{metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, ReasonRollingOut, 3, 3},
		},
		"old replicas terminating": {
			obs:  Observed{Deployment: deployment(2, 2, 3, 3, 3, 3, 4)},
			want: want{metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, ReasonRollingOut, 3, 3},
		},
		"updated replicas not yet available": {
			obs:  Observed{Deployment: deployment(2, 2, 3, 3, 2, 2, 3)},
			want: want{metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionFalse, ReasonRollingOut, 2, 2},
		},
		"rolled out": {
			obs:  Observed{Deployment: deployment(2, 2, 3, 3, 3, 3, 3)},
			want: want{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, ReasonAvailable, 3, 3},
		},
		"replicas unset counts as one": {
			obs: Observed{Deployment: func() *appsv1.Deployment {
				d := deployment(1, 1, 0, 1, 1, 1, 1)
				d.Spec.Replicas = nil
				return d
			}()},
			want: want{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse, ReasonAvailable, 1, 1},
		},
		"progress deadline exceeded": {
			obs:  Observed{Deployment: deadline},
			want: want{metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionTrue, ReasonProgressDeadlineExceeded, 0, 0},
		},
		"failure wins over a healthy deployment": {
			obs: Observed{
				Deployment: deployment(2, 2, 3, 3, 3, 3, 3),
				Failure:    &Failure{Reason: ReasonChildNotOwned, Message: "Service web exists"},
			},
			want: want{metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionTrue, ReasonChildNotOwned, 3, 3},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := &examplev1.MyApp{}
			app.Generation = 7
			tc.obs.Selector = "sel"
			got := Compute(app, tc.obs, t0)

			g.Expect(got.ObservedGeneration).To(Equal(int64(7)))
			g.Expect(got.Selector).To(Equal("sel"))
			g.Expect(got.ReadyReplicas).To(Equal(tc.want.readyReplicas))
			g.Expect(got.AvailableReplicas).To(Equal(tc.want.available))
			g.Expect(got.LastUpdateTime).To(HaveValue(Equal(t0)))
			g.Expect(got.Conditions).To(HaveLen(3))
			for typ, status := range map[string]metav1.ConditionStatus{
				examplev1.ConditionReady: tc.want.ready, examplev1.ConditionProgressing: tc.want.progressing,
				examplev1.ConditionDegraded: tc.want.degraded,
			} {
				c := meta.FindStatusCondition(got.Conditions, typ)
				g.Expect(c).NotTo(BeNil(), typ)
				g.Expect(c.Status).To(Equal(status), typ)
				g.Expect(c.ObservedGeneration).To(Equal(int64(7)), typ)
				g.Expect(c.Reason).NotTo(BeEmpty(), typ)
				g.Expect(c.Message).NotTo(BeEmpty(), typ)
				g.Expect(c.LastTransitionTime).To(Equal(t0), typ)
			}
			g.Expect(meta.FindStatusCondition(got.Conditions, examplev1.ConditionReady).Reason).To(Equal(tc.want.reason))
		})
	}
}

// TestComputeIsStable: computing again from the same observation must give the stored status
// back unchanged, or the operator would write status on every resync.
func TestComputeIsStable(t *testing.T) {
	g := NewWithT(t)
	app := &examplev1.MyApp{}
	app.Generation = 2
	obs := Observed{Deployment: deployment(2, 2, 3, 3, 3, 3, 3), Selector: "sel"}
	app.Status = Compute(app, obs, t0)

	again := Compute(app, obs, t1)
	g.Expect(again).To(Equal(app.Status))
}

// TestComputeTimes: LastUpdateTime moves only when something else changed, and a condition's
// transition time only when its status flips.
func TestComputeTimes(t *testing.T) {
	g := NewWithT(t)
	app := &examplev1.MyApp{}
	app.Generation = 2
	app.Status = Compute(app, Observed{Deployment: deployment(2, 2, 3, 3, 2, 2, 3)}, t0)

	// Ready count changes, Ready stays False: LastUpdateTime moves, transition times do not.
	next := Compute(app, Observed{Deployment: deployment(2, 2, 3, 3, 2, 2, 3)}, t1)
	g.Expect(next).To(Equal(app.Status))
	next = Compute(app, Observed{Deployment: deployment(2, 2, 4, 3, 2, 2, 3)}, t1)
	g.Expect(next.LastUpdateTime).To(HaveValue(Equal(t1)))
	g.Expect(meta.FindStatusCondition(next.Conditions, examplev1.ConditionReady).LastTransitionTime).To(Equal(t0))

	// Ready flips: its transition time moves.
	app.Status = next
	next = Compute(app, Observed{Deployment: deployment(2, 2, 3, 3, 3, 3, 3)}, t1)
	c := meta.FindStatusCondition(next.Conditions, examplev1.ConditionReady)
	g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(c.LastTransitionTime).To(Equal(t1))
	g.Expect(meta.FindStatusCondition(next.Conditions, examplev1.ConditionDegraded).LastTransitionTime).To(Equal(t0))
}

// TestComputeDoesNotAliasInput: the stored status must stay as it was, so that the
// reconciler can compare old and new.
func TestComputeDoesNotAliasInput(t *testing.T) {
	g := NewWithT(t)
	app := &examplev1.MyApp{}
	app.Status = Compute(app, Observed{}, t0)
	before := app.Status.DeepCopy()
	_ = Compute(app, Observed{Failure: &Failure{Reason: ReasonInvalidSpec, Message: "x"}}, t1)
	g.Expect(app.Status).To(Equal(*before))
}

func BenchmarkCompute(b *testing.B) {
	app := &examplev1.MyApp{}
	app.Generation = 2
	obs := Observed{Deployment: deployment(2, 2, 3, 3, 3, 3, 3), Selector: "sel"}
	app.Status = Compute(app, obs, t0)
	for b.Loop() {
		_ = Compute(app, obs, t1)
	}
}
