package rollout

import (
	"testing"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestHeld(t *testing.T) {
	spec := Spec{Generation: 4, Template: "intent-v2", Request: "req-1", AutoRollback: true}
	record := func(failedSpec, request string) *examplev1.RollbackStatus {
		return &examplev1.RollbackStatus{FailedSpec: failedSpec, ReconcileRequest: request, FailedTemplate: "h2", Template: "h1"}
	}
	holding, other := record("intent-v2", "req-1"), record("intent-v1", "req-1")
	withMark := func(mark *examplev1.RollbackStatus) *Deployment { return &Deployment{Mark: mark} }
	// completedOn is a Deployment observed on the template current, its rollout complete.
	completedOn := func(current string, mark *examplev1.RollbackStatus) *Deployment {
		return &Deployment{Generation: 2, ObservedGeneration: 2, Replicas: 2, StatusReplicas: 2, UpdatedReplicas: 2,
			AvailableReplicas: 2, Current: current, Mark: mark}
	}
	type heldCase struct {
		spec       Spec
		status     *examplev1.RollbackStatus
		deployment *Deployment
		want       *examplev1.RollbackStatus
	}
	cases := map[string]heldCase{
		"nothing recorded": {spec, nil, withMark(nil), nil},
		"the status's rollback of the spec's template":    {spec, holding, withMark(nil), holding},
		"a rollback of another template":                  {spec, other, withMark(other), nil},
		"a rollback made under another reconcile request": {spec, record("intent-v2", ""), withMark(nil), nil},
		"autoRollback turned off ends it": {
			Spec{Template: "intent-v2", Request: "req-1"}, holding, withMark(holding), nil},
		// Scenario 6: the manager stopped after the apply's mark, or the status write is not
		// in the cache yet: the mark holds.
		"the mark when the status does not show it":   {spec, nil, withMark(holding), holding},
		"the mark when the status shows an older one": {spec, other, withMark(holding), holding},
		"the status first":                            {spec, holding, withMark(record("intent-v2", "req-1")), holding},
		// Scenario 5: the Deployment was deleted while a rollback held; it is made again on
		// the held template.
		"the status's rollback without a Deployment": {spec, holding, nil, holding},
		"the spec's template unknown keeps the status's": {
			Spec{Request: "req-2"}, other, withMark(holding), other},
		"the spec's template unknown keeps the mark":    {Spec{}, nil, withMark(other), other},
		"the spec's template unknown, nothing recorded": {Spec{AutoRollback: true}, nil, nil, nil},
		// A record decided a moment before its failed template completed, whose apply then
		// conflicted, is void: a completed template is never rolled back.
		"a record not carried out, its failed template completed since": {spec, holding, completedOn("h2", nil), nil},
		"a record carried out (the mark) is not void":                   {spec, holding, completedOn("h2", holding), holding},
		"a record while its target completed":                           {spec, holding, completedOn("h1", holding), holding},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Held(Facts{Spec: tc.spec, RolledBack: tc.status, Deployment: tc.deployment})
			if got != tc.want {
				t.Fatalf("Held = %+v, want %+v", got, tc.want)
			}
		})
	}
}
