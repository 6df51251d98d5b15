package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// TestMyAppChanged: the MyApp's event filter passes every change a decision reads, and drops
// its status writes and changes of field ownership alone.
func TestMyAppChanged(t *testing.T) {
	base := func() *examplev1.MyApp {
		return &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: "1", Generation: 1}}
	}
	cases := map[string]struct {
		change func(*examplev1.MyApp)
		want   bool
	}{
		"a resync":   {change: func(*examplev1.MyApp) {}, want: true},
		"a new spec": {change: func(a *examplev1.MyApp) { a.ResourceVersion, a.Generation = "2", 2 }, want: true},
		"a reconcile request": {change: func(a *examplev1.MyApp) {
			a.ResourceVersion = "2"
			a.Annotations = map[string]string{examplev1.ReconcileRequestAnnotation: "now"}
		}, want: true},
		"a status write": {change: func(a *examplev1.MyApp) {
			a.ResourceVersion = "2"
			a.Status.ObservedGeneration = 1
		}},
		"a server-side apply of the same spec that takes spec.replicas": {change: func(a *examplev1.MyApp) {
			a.ResourceVersion = "2"
			a.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "gitops", Operation: metav1.ManagedFieldsOperationApply,
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)}}
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			newApp := base()
			tc.change(newApp)
			if got := myAppChanged.Update(event.UpdateEvent{ObjectOld: base(), ObjectNew: newApp}); got != tc.want {
				t.Errorf("passed %v, want %v", got, tc.want)
			}
		})
	}
}
