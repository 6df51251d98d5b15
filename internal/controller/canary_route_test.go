package controller

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/rollout"
)

// storedRoute is the HTTPRoute the reconciler applies for a canary record, as the API server
// would store it (the apply configuration read back as an object).
func storedRoute(t *testing.T, app *examplev1.MyApp, rec *rollout.CanaryRecord) *gatewayv1.HTTPRoute {
	t.Helper()
	raw, err := json.Marshal(canaryRoute(app, examplev1.GatewayReference{Namespace: "edge", Name: "web"}, rec))
	if err != nil {
		t.Fatal(err)
	}
	route := &gatewayv1.HTTPRoute{}
	if err := json.Unmarshal(raw, route); err != nil {
		t.Fatal(err)
	}
	return route
}

// stored is the record as status.canary holds it: the record read back from its status.
func stored(rec *rollout.CanaryRecord) *rollout.CanaryRecord {
	if rec == nil {
		return nil
	}
	back, _ := canaryRecordOf(canaryStatusOf(rec, nil, nil))
	return back
}

// TestAnOlderRouteDoesNotCarryALaterRecordsWeight: a cache that lags shows a route the
// operator applied for an earlier record. Over walks of the step machine (random facts, user
// controls, new templates and requests, a clock moving by 1 to 20 s a look), such a route
// carries a later record (routeCarries) only if every record between them had the same weight:
// the weight it shows is then the weight in force. Without the record's tag on the route, a
// split of 100 to 0 from before the canary took a weight carries the abort's weight of 0.
func TestAnOlderRouteDoesNotCarryALaterRecordsWeight(t *testing.T) {
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: examplev1.MyAppSpec{Expose: &examplev1.Expose{Hosts: []examplev1.Hostname{"shop.example.com"}}}}
	steps := []rollout.CanaryStep{{Weight: 10}, {Pause: time.Minute}, {Weight: 10}, {Pause: 0}, {Weight: 50}}
	controls := []rollout.CanaryControl{"", rollout.ControlPause, rollout.ControlResume, rollout.ControlPromote, rollout.ControlAbort}
	for seed := uint64(1); seed <= 300; seed++ {
		rnd := rand.New(rand.NewPCG(seed, 41))
		now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
		templates, ready, request := []string{"a", "b", "c"}, "r", ""
		spec := "a"
		var rec *rollout.CanaryRecord
		var records []*rollout.CanaryRecord
		for look := 0; look < 200; look++ {
			now = now.Add(time.Second + time.Duration(rnd.Int64N(int64(19*time.Second))))
			switch rnd.IntN(20) {
			case 0:
				spec = templates[rnd.IntN(len(templates))]
			case 1:
				request = now.String()
			}
			f := rollout.CanaryFacts{
				Spec: rollout.Spec{Template: spec, Request: request}, Steps: steps, ReadyTemplate: ready, Record: rec,
				CanaryReady: rnd.IntN(2) == 0, CanaryListed: rnd.IntN(4) > 0, WeightInForce: rnd.IntN(2) == 0, StableServed: rnd.IntN(2) == 0,
				Analysis: rollout.AnalysisOutcome(rnd.IntN(3)), Now: now,
			}
			if c := controls[rnd.IntN(len(controls))]; c != "" {
				f.Control, f.Token = c, now.String()
			}
			if rnd.IntN(15) == 0 {
				f.CanaryFailure = &rollout.Failure{Reason: examplev1.ReasonCrashLoopBackOff}
			}
			if rec != nil && rec.Phase == rollout.CanaryPromoting && rec.StableMoved && rnd.IntN(3) == 0 {
				ready = rec.Template
				f.ReadyTemplate = ready
			}
			next := stored(rollout.Canary(f))
			if next != nil && (rec == nil || *next != *rec) {
				records = append(records, next)
			}
			rec = next
		}
		routes := make([]*gatewayv1.HTTPRoute, len(records))
		for i, rec := range records {
			routes[i] = storedRoute(t, app, rec)
		}
		for j, later := range records {
			for i := 0; i < j; i++ {
				if !routeCarries(routes[i], app, later) {
					continue
				}
				for k := i; k <= j; k++ {
					if records[k].Weight != later.Weight {
						t.Fatalf("seed %d: the route of record %d (%+v) carries record %d (%+v), yet record %d between them had weight %d",
							seed, i, *records[i], j, *later, k, records[k].Weight)
					}
				}
			}
		}
	}
}

// TestARouteCarriesItsOwnRecord: the route applied for a record carries it, and the split of
// 100 to 0 made before a canary took a weight does not carry the abort's weight of 0.
func TestARouteCarriesItsOwnRecord(t *testing.T) {
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: examplev1.MyAppSpec{Expose: &examplev1.Expose{Hosts: []examplev1.Hostname{"shop.example.com"}}}}
	started := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	start := &rollout.CanaryRecord{Template: "a", Stable: "r", Phase: rollout.CanaryProgressing, StepStarted: started}
	aborted := *start
	aborted.Phase, aborted.StepStarted, aborted.Size = rollout.CanaryAborted, started.Add(30*time.Second), 10
	for _, rec := range []*rollout.CanaryRecord{start, &aborted} {
		if !routeCarries(storedRoute(t, app, rec), app, rec) {
			t.Errorf("the route applied for %+v does not carry it", *rec)
		}
	}
	if routeCarries(storedRoute(t, app, start), app, &aborted) {
		t.Error("the route of the canary's start, 100 to 0, carries the abort's weight of 0")
	}
	if routeCarries(storedRoute(t, app, nil), app, start) {
		t.Error("the route of no canary carries a canary's record")
	}
}

// TestStableKeptWhileAnyRecordKeepsIt: a look that could not store the record it decided keeps
// the stable pods where either record keeps them; a canary whose start could not be stored has
// no stored record, and the stable Deployment must not take the template under test.
func TestStableKeptWhileAnyRecordKeepsIt(t *testing.T) {
	progressing := &rollout.CanaryRecord{Template: "b", Stable: "a", Phase: rollout.CanaryProgressing}
	moved := &rollout.CanaryRecord{Template: "b", Stable: "a", Phase: rollout.CanaryPromoting, StableMoved: true}
	finishing := &rollout.CanaryRecord{Template: "b", Stable: "a", Phase: rollout.CanaryFinishing}
	for name, tc := range map[string]struct {
		spec    string
		records []*rollout.CanaryRecord
		want    bool
	}{
		"no canary":                                     {spec: "b", records: []*rollout.CanaryRecord{nil, nil}, want: false},
		"a start not stored":                            {spec: "b", records: []*rollout.CanaryRecord{nil, progressing}, want: true},
		"a canary stored, its end not stored":           {spec: "b", records: []*rollout.CanaryRecord{progressing, nil}, want: true},
		"the promotion moved the stable pods":           {spec: "b", records: []*rollout.CanaryRecord{moved, finishing}, want: false},
		"a new template's start after the stable move":  {spec: "c", records: []*rollout.CanaryRecord{moved, progressing}, want: true},
		"a newer template pushed after the stable move": {spec: "c", records: []*rollout.CanaryRecord{moved}, want: true},
		"a newer template pushed while it finishes":     {spec: "c", records: []*rollout.CanaryRecord{finishing}, want: true},
		"the spec's template unknown after the move":    {spec: "", records: []*rollout.CanaryRecord{moved}, want: false},
	} {
		if got := stableKept(tc.spec, tc.records...); got != tc.want {
			t.Errorf("%s: stableKept = %t, want %t", name, got, tc.want)
		}
	}
}
