package desired

import (
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

func TestReplicasSetByUser(t *testing.T) {
	owns := func(op metav1.ManagedFieldsOperationType, subresource string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: "m", Operation: op, Subresource: subresource,
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)}
	}
	cases := map[string]struct {
		replicas *int32
		entries  []metav1.ManagedFieldsEntry
		want     bool
	}{
		"no replicas at all":                             {},
		"the default, recorded for a client-side create": {replicas: ptr(int32(1)), entries: []metav1.ManagedFieldsEntry{owns(metav1.ManagedFieldsOperationUpdate, "")}},
		"the default, owned by nobody":                   {replicas: ptr(int32(1))},
		"1 sent with server-side apply":                  {replicas: ptr(int32(1)), entries: []metav1.ManagedFieldsEntry{owns(metav1.ManagedFieldsOperationApply, "")}, want: true},
		"1 set with kubectl scale":                       {replicas: ptr(int32(1)), entries: []metav1.ManagedFieldsEntry{owns(metav1.ManagedFieldsOperationUpdate, "scale")}, want: true},
		"any other value":                                {replicas: ptr(int32(3)), want: true},
		"zero":                                           {replicas: ptr(int32(0)), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			app := newApp(func(a *examplev1.MyApp) { a.Spec.Replicas = tc.replicas; a.ManagedFields = tc.entries })
			NewWithT(t).Expect(ReplicasSetByUser(app)).To(Equal(tc.want))
		})
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
	g.Expect(PodDisruptionBudget(app, true).Spec.Selector.MatchLabels).To(Equal(Service(app, true).Spec.Selector))

	d, err = Deployment(app, false)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Annotations).NotTo(HaveKey(AnnotationSelectorMigration))
	g.Expect(PodDisruptionBudget(app, false).Spec.Selector.MatchLabels).To(Equal(SelectorLabels(app)))
}
