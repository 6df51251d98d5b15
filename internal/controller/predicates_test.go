package controller

import (
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

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

// TestStatusPartChanged: a child's status update passes the filter only when the part its
// MyApp reads changes; an object of another type always passes.
func TestStatusPartChanged(t *testing.T) {
	route := func(accepted metav1.ConditionStatus, observedAt string) *gatewayv1.HTTPRoute {
		return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: observedAt},
			Status: gatewayv1.HTTPRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{{
				ParentRef: gatewayv1.ParentReference{Name: "edge"}, ControllerName: "example.com/gateway",
				Conditions: []metav1.Condition{{Type: "Accepted", Status: accepted, Reason: "Accepted"}}}}}}}
	}
	cert := func(ready cmmeta.ConditionStatus, observedAt string) *cmv1.Certificate {
		return &cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: observedAt},
			Status: cmv1.CertificateStatus{Conditions: []cmv1.CertificateCondition{{Type: cmv1.CertificateConditionReady, Status: ready}}}}
	}
	withRenewal := cert(cmmeta.ConditionTrue, "3")
	withRenewal.Status.RenewalTime = &metav1.Time{}
	cases := map[string]struct {
		changed  func(old, new client.Object) bool
		old, new client.Object
		want     bool
	}{
		"a route the Gateway now accepts":          {changed: routeStatusChanged, old: route(metav1.ConditionFalse, "1"), new: route(metav1.ConditionTrue, "2"), want: true},
		"a route whose parents say the same":       {changed: routeStatusChanged, old: route(metav1.ConditionTrue, "1"), new: route(metav1.ConditionTrue, "2")},
		"a certificate now issued":                 {changed: certificateStatusChanged, old: cert(cmmeta.ConditionFalse, "1"), new: cert(cmmeta.ConditionTrue, "2"), want: true},
		"a certificate whose conditions are alike": {changed: certificateStatusChanged, old: cert(cmmeta.ConditionTrue, "1"), new: withRenewal},
		"an object of another type":                {changed: certificateStatusChanged, old: route(metav1.ConditionTrue, "1"), new: route(metav1.ConditionTrue, "2"), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.changed(tc.old, tc.new); got != tc.want {
				t.Errorf("passed %v, want %v", got, tc.want)
			}
		})
	}
}
