package desired

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestAutoscalerStartReplicas(t *testing.T) {
	autoscaled := newApp(func(a *examplev1.MyApp) {
		a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptr(int32(2)), MaxReplicas: ptr(int32(5))}
	})
	cases := map[int32]int32{0: 2, 1: 2, 2: 2, 4: 4, 5: 5, 9: 5}
	for current, want := range cases {
		if got := AutoscalerStartReplicas(autoscaled, current); got != want {
			t.Errorf("from %d: got %d, want %d", current, got, want)
		}
	}
	noMin := newApp(func(a *examplev1.MyApp) {
		a.Spec.AutoScaling = &examplev1.AutoScalingSpec{Enabled: true, MaxReplicas: ptr(int32(3))}
	})
	if got := AutoscalerStartReplicas(noMin, 0); got != DefaultMinReplicas {
		t.Errorf("without minReplicas, from 0: got %d, want the default %d", got, DefaultMinReplicas)
	}
}

func TestReplicas(t *testing.T) {
	on := &examplev1.AutoScalingSpec{Enabled: true, MinReplicas: ptr(int32(2)), MaxReplicas: ptr(int32(9))}
	off := &examplev1.AutoScalingSpec{Enabled: false, MinReplicas: ptr(int32(2)), MaxReplicas: ptr(int32(9))}
	apply := func(n int32) ReplicaIntent { return ReplicaIntent{Replicas: ptr(n), Annotation: "spec"} }
	kept := func(n int32) ReplicaIntent {
		return ReplicaIntent{Replicas: ptr(n), Annotation: fmt.Sprintf("kept=%d", n)}
	}
	deployment := func(n int32, annotation string) *DeploymentReplicas {
		return &DeploymentReplicas{Replicas: ptr(n), Annotation: annotation}
	}
	cases := map[string]struct {
		replicas    *int32
		autoscaling *examplev1.AutoScalingSpec
		deployment  *DeploymentReplicas
		want        ReplicaIntent
	}{
		"no Deployment yet":                              {replicas: ptr(int32(1)), want: apply(1)},
		"no replicas stored, no Deployment":              {want: apply(1)},
		"no Deployment yet, autoscaling off at 4":        {replicas: ptr(int32(4)), autoscaling: off, want: apply(4)},
		"a hand scale to 0 of a MyApp's 1":               {replicas: ptr(int32(1)), deployment: deployment(0, "spec"), want: apply(1)},
		"a hand scale of a MyApp's 3":                    {replicas: ptr(int32(3)), deployment: deployment(5, "spec"), want: apply(3)},
		"a hand scale that the API server left unowned":  {replicas: ptr(int32(1)), deployment: &DeploymentReplicas{Replicas: ptr(int32(0)), Annotation: "spec", HeldForAutoscaler: true}, want: apply(1)},
		"autoscaling on records spec.replicas":           {replicas: ptr(int32(3)), autoscaling: on, deployment: deployment(7, "spec"), want: ReplicaIntent{Annotation: "autoscaler,spec=3"}},
		"autoscaling on again during the hand-over":      {replicas: ptr(int32(1)), autoscaling: on, deployment: deployment(7, "kept=7"), want: ReplicaIntent{Annotation: "autoscaler,spec=1"}},
		"autoscaling on, no Deployment yet":              {autoscaling: on, want: ReplicaIntent{Annotation: "autoscaler,spec=1"}},
		"turned off, spec.replicas the default 1":        {replicas: ptr(int32(1)), autoscaling: off, deployment: deployment(7, "autoscaler,spec=1"), want: kept(7)},
		"turned off by removing autoScaling":             {replicas: ptr(int32(1)), deployment: deployment(7, "autoscaler,spec=1"), want: kept(7)},
		"turned off at another count":                    {replicas: ptr(int32(3)), autoscaling: off, deployment: deployment(7, "autoscaler,spec=3"), want: apply(3)},
		"turned off in the edit that set 1":              {replicas: ptr(int32(1)), autoscaling: off, deployment: deployment(7, "autoscaler,spec=4"), want: apply(1)},
		"during the hand-over, a hand scale":             {replicas: ptr(int32(1)), deployment: deployment(0, "kept=7"), want: kept(7)},
		"during the hand-over, nothing changed":          {replicas: ptr(int32(1)), deployment: deployment(7, "kept=7"), want: kept(7)},
		"spec.replicas changed: the hand-over ends":      {replicas: ptr(int32(2)), deployment: deployment(7, "kept=7"), want: apply(2)},
		"spec.replicas changed to 0: the hand-over ends": {replicas: ptr(int32(0)), deployment: deployment(7, "kept=7"), want: apply(0)},
		"held for the autoscaler by an earlier release":  {replicas: ptr(int32(1)), deployment: &DeploymentReplicas{Replicas: ptr(int32(5)), HeldForAutoscaler: true}, want: kept(5)},
		"owned by someone else under an earlier release": {replicas: ptr(int32(1)), deployment: deployment(5, ""), want: apply(1)},
		"held by an earlier release, spec.replicas set":  {replicas: ptr(int32(2)), deployment: &DeploymentReplicas{Replicas: ptr(int32(5)), HeldForAutoscaler: true}, want: apply(2)},
		"a hand-edited count is no count":                {replicas: ptr(int32(1)), deployment: deployment(0, "kept=lots"), want: apply(1)},
		"a negative count is no count":                   {replicas: ptr(int32(1)), deployment: deployment(0, "kept=-3"), want: apply(1)},
		"a count beyond int32 is no count":               {replicas: ptr(int32(1)), deployment: deployment(0, "autoscaler,spec=2147483648"), want: apply(1)},
		"an unknown annotation":                          {replicas: ptr(int32(1)), deployment: &DeploymentReplicas{Replicas: ptr(int32(5)), Annotation: "mine", HeldForAutoscaler: true}, want: apply(1)},
		"a Deployment without replicas":                  {replicas: ptr(int32(1)), deployment: &DeploymentReplicas{Annotation: "kept=4", HeldForAutoscaler: true}, want: apply(1)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			app := newApp(func(a *examplev1.MyApp) { a.Spec.Replicas = tc.replicas; a.Spec.AutoScaling = tc.autoscaling })
			NewWithT(t).Expect(Replicas(app, tc.deployment)).To(Equal(tc.want))
		})
	}
}

// TestReplicasIgnoresHowTheMyAppWasWritten: the MyApp's managedFields never change the
// decision (a client-side create records the API server's default as its own).
func TestReplicasIgnoresHowTheMyAppWasWritten(t *testing.T) {
	owns := func(op metav1.ManagedFieldsOperationType, subresource string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: "m", Operation: op, Subresource: subresource,
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)}
	}
	writers := [][]metav1.ManagedFieldsEntry{nil, {owns(metav1.ManagedFieldsOperationUpdate, "")},
		{owns(metav1.ManagedFieldsOperationApply, "")}, {owns(metav1.ManagedFieldsOperationUpdate, "scale")}}
	deployments := []*DeploymentReplicas{nil, {Replicas: ptr(int32(0)), Annotation: "spec"},
		{Replicas: ptr(int32(7)), HeldForAutoscaler: true}, {Replicas: ptr(int32(7)), Annotation: "autoscaler,spec=1"}}
	for _, d := range deployments {
		want := Replicas(newApp(func(a *examplev1.MyApp) { a.Spec.Replicas = ptr(int32(1)) }), d)
		for _, entries := range writers {
			app := newApp(func(a *examplev1.MyApp) { a.Spec.Replicas = ptr(int32(1)); a.ManagedFields = entries })
			NewWithT(t).Expect(Replicas(app, d)).To(Equal(want), "written as %v, Deployment %+v", entries, d)
		}
	}
}

// TestMigrationMarks: while a 0.2.0 Deployment is replaced, the new Deployment carries the
// migration mark and the budget selects old and new pods, as the Service does.
func TestMigrationMarks(t *testing.T) {
	g := NewWithT(t)
	app := newApp(func(a *examplev1.MyApp) {
		a.Spec.PodDisruptionBudget = &examplev1.PodDisruptionBudgetSpec{MinAvailable: ptr(intstr.FromInt32(1))}
	})
	d, err := Deployment(app, true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Annotations).To(HaveKeyWithValue(AnnotationSelectorMigration, SelectorMigrationFrom020))
	g.Expect(d.Spec.Selector.MatchLabels).To(Equal(SelectorLabels(app)), "the new Deployment's own selector")
	pdb, err := PodDisruptionBudget(app, true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pdb.Spec.Selector.MatchLabels).To(Equal(Service(app, true).Spec.Selector))

	d, err = Deployment(app, false)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Annotations).NotTo(HaveKey(AnnotationSelectorMigration))
	pdb, err = PodDisruptionBudget(app, false)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pdb.Spec.Selector.MatchLabels).To(Equal(SelectorLabels(app)))
}
