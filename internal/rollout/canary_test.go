package rollout

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestCanary(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	steps := []CanaryStep{{Weight: 5}, {Pause: 2 * time.Minute}, {Weight: 50}, {}}
	// rec is a record whose canary is sized for its weight; sized changes the size.
	rec := func(step, weight int32, phase CanaryPhase, startedAgo time.Duration) *CanaryRecord {
		return &CanaryRecord{Template: "v2", Stable: "v1", Step: step, Weight: weight, Size: weight, Phase: phase, StepStarted: now.Add(-startedAgo)}
	}
	with := func(r *CanaryRecord, edit func(*CanaryRecord)) *CanaryRecord { c := *r; edit(&c); return &c }
	sized := func(r *CanaryRecord, size int32) *CanaryRecord {
		return with(r, func(c *CanaryRecord) { c.Size = size })
	}
	moved := func(r *CanaryRecord) *CanaryRecord { return with(r, func(c *CanaryRecord) { c.StableMoved = true }) }
	facts := func(edit func(*CanaryFacts)) CanaryFacts {
		f := CanaryFacts{Spec: Spec{Template: "v2", AutoRollback: true}, Steps: steps, ReadyTemplate: "v1", Now: now, StableServed: true}
		edit(&f)
		return f
	}
	crash := &Failure{Reason: ReasonCrashLoopBackOff, Problem: &Problem{Pod: "web-canary-x", Container: "app", Reason: "CrashLoopBackOff", Message: "back-off 10s"}}
	for _, tc := range []struct {
		name  string
		facts CanaryFacts
		want  *CanaryRecord
	}{
		{"no steps: no canary", facts(func(f *CanaryFacts) { f.Steps = nil }), nil},
		{"a first release has nothing stable: no canary", facts(func(f *CanaryFacts) { f.ReadyTemplate = "" }), nil},
		{"the spec asks for what serves: no canary", facts(func(f *CanaryFacts) { f.Spec.Template = "v1" }), nil},
		{"a new template starts at its first step with no weight", facts(func(f *CanaryFacts) {}),
			&CanaryRecord{Template: "v2", Stable: "v1", Phase: CanaryProgressing, StepStarted: now}},
		{"the spec's template unknown: the record stays", facts(func(f *CanaryFacts) {
			f.Spec.Template, f.Record = "", rec(2, 5, CanaryProgressing, time.Hour)
			f.CanaryReady, f.CanaryListed, f.WeightInForce = true, true, true
		}), rec(2, 5, CanaryProgressing, time.Hour)},
		{"the spec's template unknown: failing pods still abort", facts(func(f *CanaryFacts) {
			f.Spec.Template, f.Record, f.CanaryFailure = "", rec(2, 50, CanaryProgressing, time.Hour), &Failure{Reason: examplev1.ReasonProgressDeadlineExceeded}
		}), with(sized(rec(2, 0, CanaryAborted, 0), 50), func(r *CanaryRecord) {
			r.Reason, r.Message = examplev1.ReasonProgressDeadlineExceeded, "step 3 of 4: the canary's pods fail: ProgressDeadlineExceeded"
		})},
		{"a weight step sizes the canary first", facts(func(f *CanaryFacts) { f.Record = rec(0, 0, CanaryProgressing, time.Second) }),
			sized(rec(0, 0, CanaryProgressing, time.Second), 5)},
		{"a weight waits for the canary's pods", facts(func(f *CanaryFacts) { f.Record = sized(rec(0, 0, CanaryProgressing, time.Second), 5) }),
			sized(rec(0, 0, CanaryProgressing, time.Second), 5)},
		{"a weight is recorded once the canary's pods for it serve", facts(func(f *CanaryFacts) {
			f.Record, f.CanaryReady, f.CanaryListed = sized(rec(0, 0, CanaryProgressing, time.Second), 5), true, true
		}), rec(0, 5, CanaryProgressing, time.Second)},
		{"a weight waits for the canary Service to list its pods", facts(func(f *CanaryFacts) {
			f.Record, f.CanaryReady = sized(rec(0, 0, CanaryProgressing, time.Second), 5), true
		}), sized(rec(0, 0, CanaryProgressing, time.Second), 5)},
		{"promoting: every request to the canary only once its Service lists the pods", facts(func(f *CanaryFacts) {
			f.Record, f.CanaryReady = sized(rec(4, 50, CanaryPromoting, time.Second), 100), true
		}), sized(rec(4, 50, CanaryPromoting, time.Second), 100)},
		{"a recorded weight not yet in force waits", facts(func(f *CanaryFacts) {
			f.Record = rec(0, 5, CanaryProgressing, time.Second)
			f.CanaryReady, f.CanaryListed = true, true
		}),
			rec(0, 5, CanaryProgressing, time.Second)},
		{"a weight in force passes its step", facts(func(f *CanaryFacts) {
			f.Record = rec(0, 5, CanaryProgressing, time.Second)
			f.CanaryReady, f.CanaryListed, f.WeightInForce = true, true, true
		}), rec(1, 5, CanaryProgressing, 0)},
		{"a pause waits its duration", facts(func(f *CanaryFacts) {
			f.Record = rec(1, 5, CanaryProgressing, time.Minute)
			f.CanaryReady, f.CanaryListed = true, true
		}),
			rec(1, 5, CanaryProgressing, time.Minute)},
		{"a pause passes after its duration", facts(func(f *CanaryFacts) {
			f.Record = rec(1, 5, CanaryProgressing, 2*time.Minute)
			f.CanaryReady, f.CanaryListed = true, true
		}),
			rec(2, 5, CanaryProgressing, 0)},
		{"a pause without a duration waits for the user", facts(func(f *CanaryFacts) { f.Record = rec(3, 50, CanaryProgressing, time.Minute) }),
			rec(3, 50, CanaryPaused, time.Minute)},
		{"resume passes a pause without a duration", facts(func(f *CanaryFacts) {
			f.Record = rec(3, 50, CanaryPaused, time.Minute)
			f.Control, f.Token = ControlResume, "r1"
		}), with(rec(4, 50, CanaryPromoting, 0), func(r *CanaryRecord) { r.Control = "r1" })},
		{"a control acted on does not act again", facts(func(f *CanaryFacts) {
			f.Record = with(rec(3, 50, CanaryPaused, time.Minute), func(r *CanaryRecord) { r.Control = "r1" })
			f.Control, f.Token = ControlResume, "r1"
		}), with(rec(3, 50, CanaryPaused, time.Minute), func(r *CanaryRecord) { r.Control = "r1" })},
		{"pause stops the steps", facts(func(f *CanaryFacts) {
			f.Record = rec(1, 5, CanaryProgressing, time.Hour)
			f.Control, f.Token = ControlPause, "p1"
		}), with(rec(1, 5, CanaryPaused, time.Hour), func(r *CanaryRecord) { r.Control = "p1" })},
		{"resume continues a timed pause where it was", facts(func(f *CanaryFacts) {
			f.Record = rec(1, 5, CanaryPaused, time.Minute)
			f.Control, f.Token = ControlResume, "r2"
		}), with(rec(1, 5, CanaryProgressing, time.Minute), func(r *CanaryRecord) { r.Control = "r2" })},
		{"every step passed: promoting", facts(func(f *CanaryFacts) { f.Record = rec(4, 50, CanaryProgressing, time.Second) }),
			rec(4, 50, CanaryPromoting, 0)},
		{"promote skips the rest, and sizes the canary as the stable Deployment", facts(func(f *CanaryFacts) {
			f.Record = rec(1, 5, CanaryProgressing, time.Second)
			f.Control, f.Token = ControlPromote, "go"
		}), with(sized(rec(1, 5, CanaryPromoting, 0), 100), func(r *CanaryRecord) { r.Control = "go" })},
		{"promoting: the canary sized as the stable Deployment first", facts(func(f *CanaryFacts) {
			f.Record = rec(4, 50, CanaryPromoting, time.Second)
			f.CanaryReady, f.CanaryListed = true, true
		}), sized(rec(4, 50, CanaryPromoting, time.Second), 100)},
		{"promoting: every request to the canary once it runs the stable's pods", facts(func(f *CanaryFacts) {
			f.Record = sized(rec(4, 50, CanaryPromoting, time.Second), 100)
			f.CanaryReady, f.CanaryListed = true, true
		}), rec(4, 100, CanaryPromoting, time.Second)},
		{"promoting: a weight of 100 not yet in force keeps the stable Deployment where it is", facts(func(f *CanaryFacts) {
			f.Record = rec(4, 100, CanaryPromoting, time.Second)
			f.CanaryReady, f.CanaryListed = true, true
		}), rec(4, 100, CanaryPromoting, time.Second)},
		{"promoting: the stable Deployment moves once every request goes to the canary", facts(func(f *CanaryFacts) {
			f.Record = rec(4, 100, CanaryPromoting, time.Second)
			f.CanaryReady, f.CanaryListed, f.WeightInForce = true, true, true
		}), moved(rec(4, 100, CanaryPromoting, time.Second))},
		{"promoting: waits for the stable Deployment to complete the template and readyTemplate to name it", facts(func(f *CanaryFacts) {
			f.Record = moved(rec(4, 100, CanaryPromoting, time.Second))
			f.CanaryReady, f.CanaryListed, f.WeightInForce = true, true, true
		}), moved(rec(4, 100, CanaryPromoting, time.Second))},
		{"promoted: every request back to the stable Deployment, now on the template", facts(func(f *CanaryFacts) {
			f.Record = moved(rec(4, 100, CanaryPromoting, time.Second))
			f.ReadyTemplate = "v2"
			f.CanaryReady, f.CanaryListed, f.WeightInForce = true, true, true
		}), moved(sized(rec(4, 0, CanaryFinishing, 0), 100))},
		{"promoted: waits for the stable pods' Service to select the template", facts(func(f *CanaryFacts) {
			f.Record = moved(rec(4, 100, CanaryPromoting, time.Second))
			f.ReadyTemplate = "v2"
			f.CanaryReady, f.CanaryListed, f.WeightInForce, f.StableServed = true, true, true, false
		}), moved(rec(4, 100, CanaryPromoting, time.Second))},
		{"a promotion the stable Deployment completed is not aborted", facts(func(f *CanaryFacts) {
			f.Record = rec(4, 100, CanaryPromoting, time.Second)
			f.ReadyTemplate = "v2"
			f.Analysis = AnalysisFailed
		}), rec(4, 100, CanaryPromoting, time.Second)},
		{"a check is not read while the canary has no weight", facts(func(f *CanaryFacts) {
			f.Record = sized(rec(0, 0, CanaryProgressing, time.Second), 5)
			f.CanaryReady, f.CanaryListed, f.Analysis = true, true, AnalysisInconclusive
		}), rec(0, 5, CanaryProgressing, time.Second)},
		{"finishing waits for its weight of 0 in force", facts(func(f *CanaryFacts) {
			f.Record = sized(rec(4, 0, CanaryFinishing, time.Second), 100)
			f.ReadyTemplate = "v2"
		}), sized(rec(4, 0, CanaryFinishing, time.Second), 100)},
		{"finished", facts(func(f *CanaryFacts) {
			f.Record = sized(rec(4, 0, CanaryFinishing, time.Second), 100)
			f.ReadyTemplate, f.WeightInForce = "v2", true
		}), nil},
		{"the canary's pods failing abort it", facts(func(f *CanaryFacts) { f.Record = rec(2, 50, CanaryProgressing, time.Second); f.CanaryFailure = crash }),
			with(sized(rec(2, 0, CanaryAborted, 0), 50), func(r *CanaryRecord) {
				r.Reason = ReasonCrashLoopBackOff
				r.Message = "step 3 of 4: the canary's pods fail: CrashLoopBackOff (pod web-canary-x, container app): back-off 10s"
			})},
		{"a failed check aborts, also while promoting", facts(func(f *CanaryFacts) {
			f.Record = rec(4, 100, CanaryPromoting, time.Second)
			f.Analysis, f.AnalysisMessage = AnalysisFailed, `check "success-rate": 0.93, not >= 0.99 (2 of 1 failures allowed)`
		}), with(sized(rec(4, 0, CanaryAborted, 0), 100), func(r *CanaryRecord) {
			r.Reason = ReasonCanaryAnalysisFailed
			r.Message = `step 4 of 4: check "success-rate": 0.93, not >= 0.99 (2 of 1 failures allowed)`
		})},
		{"an abort after the stable pods moved keeps the canary's weight until they are back", facts(func(f *CanaryFacts) {
			f.Record = moved(rec(4, 100, CanaryPromoting, time.Second))
			f.Analysis, f.AnalysisMessage = AnalysisFailed, "check failed"
		}), with(moved(rec(4, 100, CanaryAborted, 0)), func(r *CanaryRecord) {
			r.Reason, r.Message = ReasonCanaryAnalysisFailed, "step 4 of 4: check failed"
		})},
		{"an abort after the stable pods moved and came back sends them every request", facts(func(f *CanaryFacts) {
			f.Record = moved(rec(4, 100, CanaryPromoting, time.Second))
			f.Analysis, f.AnalysisMessage, f.StableRestored = AnalysisFailed, "check failed", true
		}), with(sized(rec(4, 0, CanaryAborted, 0), 100), func(r *CanaryRecord) {
			r.Reason, r.Message = ReasonCanaryAnalysisFailed, "step 4 of 4: check failed"
		})},
		{"an aborted promotion's weight waits for the stable pods", facts(func(f *CanaryFacts) {
			f.Record = moved(rec(4, 100, CanaryAborted, time.Second))
			f.WeightInForce = true
		}), moved(rec(4, 100, CanaryAborted, time.Second))},
		{"an aborted promotion's weight goes to 0, as a step of its own, once the stable pods are back", facts(func(f *CanaryFacts) {
			f.Record = moved(rec(4, 100, CanaryAborted, time.Second))
			f.WeightInForce, f.StableRestored = true, true
		}), sized(rec(4, 0, CanaryAborted, 0), 100)},
		{"an aborted promotion's weight goes back also while the spec's template is unknown", facts(func(f *CanaryFacts) {
			f.Record = moved(rec(4, 100, CanaryAborted, time.Second))
			f.Spec.Template, f.StableRestored = "", true
		}), sized(rec(4, 0, CanaryAborted, 0), 100)},
		{"a new template after the stable pods moved: the canary keeps every request until they are back", facts(func(f *CanaryFacts) {
			f.Record = moved(rec(4, 100, CanaryPromoting, time.Second))
			f.Spec.Template = "v3"
			f.CanaryReady, f.CanaryListed, f.WeightInForce = true, true, true
		}), moved(rec(4, 100, CanaryPromoting, time.Second))},
		{"a new template after the stable pods moved: the weight goes to 0 once they are back", facts(func(f *CanaryFacts) {
			f.Record = moved(rec(4, 100, CanaryPromoting, time.Second))
			f.Spec.Template = "v3"
			f.CanaryReady, f.CanaryListed, f.WeightInForce, f.StableRestored = true, true, true, true
		}), sized(rec(4, 0, CanaryPromoting, 0), 100)},
		{"a new template while the promotion finishes waits for its weight of 0", facts(func(f *CanaryFacts) {
			f.Record = moved(sized(rec(4, 0, CanaryFinishing, time.Second), 100))
			f.Spec.Template, f.ReadyTemplate = "v3", "v2"
		}), moved(sized(rec(4, 0, CanaryFinishing, time.Second), 100))},
		{"a new template once the finished promotion's weight of 0 is in force starts from it", facts(func(f *CanaryFacts) {
			f.Record = moved(sized(rec(4, 0, CanaryFinishing, time.Second), 100))
			f.Spec.Template, f.ReadyTemplate, f.WeightInForce = "v3", "v2", true
		}), &CanaryRecord{Template: "v3", Stable: "v2", Phase: CanaryProgressing, StepStarted: now}},
		{"a check that cannot be evaluated advances nothing", facts(func(f *CanaryFacts) {
			f.Record = rec(1, 5, CanaryProgressing, time.Hour)
			f.Analysis = AnalysisInconclusive
		}), rec(1, 5, CanaryProgressing, time.Hour)},
		{"abort by the user", facts(func(f *CanaryFacts) {
			f.Record = rec(3, 50, CanaryPaused, time.Second)
			f.Control, f.Token = ControlAbort, "stop"
		}), with(sized(rec(3, 0, CanaryAborted, 0), 50), func(r *CanaryRecord) {
			r.Control, r.Reason, r.Message = "stop", ReasonCanaryAbortedByUser, "step 4 of 4: aborted by the user"
		})},
		{"an aborted canary keeps its pods until its weight of 0 is in force", facts(func(f *CanaryFacts) {
			f.Record = sized(rec(2, 0, CanaryAborted, time.Second), 50)
			f.CanaryReady, f.CanaryListed = true, true
		}), sized(rec(2, 0, CanaryAborted, time.Second), 50)},
		{"an aborted canary's pods go once its weight of 0 is in force", facts(func(f *CanaryFacts) {
			f.Record = sized(rec(2, 0, CanaryAborted, time.Second), 50)
			f.WeightInForce = true
		}), rec(2, 0, CanaryAborted, time.Second)},
		{"an aborted canary holds", facts(func(f *CanaryFacts) {
			f.Record = rec(2, 0, CanaryAborted, time.Hour)
			f.CanaryReady, f.CanaryListed, f.WeightInForce = true, true, true
			f.Control, f.Token = ControlResume, "again"
		}), rec(2, 0, CanaryAborted, time.Hour)},
		{"a new reconcile request starts an aborted canary again", facts(func(f *CanaryFacts) {
			f.Record = rec(2, 0, CanaryAborted, time.Hour)
			f.Spec.Request = "retry"
		}), &CanaryRecord{Template: "v2", Stable: "v1", Request: "retry", Phase: CanaryProgressing, StepStarted: now}},
		{"a new template mid-canary first takes the weight to 0, keeping the canary's pods", facts(func(f *CanaryFacts) {
			f.Record = rec(2, 50, CanaryProgressing, time.Hour)
			f.Spec.Template = "v3"
		}), func() *CanaryRecord { r := rec(2, 0, CanaryProgressing, 0); r.Size = 50; return r }()},
		{"a new template mid-canary waits while the weight of 0 is not in force", facts(func(f *CanaryFacts) {
			f.Record = func() *CanaryRecord { r := rec(2, 0, CanaryProgressing, time.Second); r.Size = 50; return r }()
			f.Spec.Template = "v3"
		}), func() *CanaryRecord { r := rec(2, 0, CanaryProgressing, time.Second); r.Size = 50; return r }()},
		{"a new template mid-canary starts at the first step once the weight of 0 is in force", facts(func(f *CanaryFacts) {
			f.Record = func() *CanaryRecord { r := rec(2, 0, CanaryProgressing, time.Second); r.Size = 50; return r }()
			f.Spec.Template = "v3"
			f.WeightInForce = true
		}), &CanaryRecord{Template: "v3", Stable: "v1", Phase: CanaryProgressing, StepStarted: now}},
		{"back to the template that serves: the weight goes to 0 first", facts(func(f *CanaryFacts) {
			f.Record = rec(2, 50, CanaryProgressing, time.Hour)
			f.Spec.Template = "v1"
		}), func() *CanaryRecord { r := rec(2, 0, CanaryProgressing, 0); r.Size = 50; return r }()},
		{"back to the template that serves: the canary ends once its weight of 0 is in force", facts(func(f *CanaryFacts) {
			f.Record = func() *CanaryRecord { r := rec(2, 0, CanaryProgressing, time.Second); r.Size = 50; return r }()
			f.Spec.Template = "v1"
			f.WeightInForce = true
		}), nil},
		{"the steps removed: the canary ends", facts(func(f *CanaryFacts) {
			f.Record = rec(2, 50, CanaryProgressing, time.Hour)
			f.Steps = nil
		}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Canary(tc.facts)
			switch {
			case tc.want == nil && got != nil:
				t.Fatalf("got %+v, want no canary", *got)
			case tc.want != nil && got == nil:
				t.Fatalf("got no canary, want %+v", *tc.want)
			case tc.want != nil && *got != *tc.want:
				t.Fatalf("got  %+v\nwant %+v", *got, *tc.want)
			}
			if tc.facts.Record != nil && got != nil && *got == *tc.facts.Record && got != tc.facts.Record {
				t.Errorf("an unchanged record is returned as a copy: the caller could not tell there is nothing to store")
			}
		})
	}
}

// TestCanaryRandomLooks drives the step machine through random facts and checks what must hold
// of every record it asks to store, whatever the order of events.
func TestCanaryRandomLooks(t *testing.T) {
	for seed := range uint64(2000) {
		r := rand.New(rand.NewPCG(seed, 41))
		now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		steps := make([]CanaryStep, 1+r.IntN(5))
		w := int32(0)
		for i := range steps {
			if r.IntN(2) == 0 && w < 100 {
				w += 1 + int32(r.IntN(int(100-w)))
				steps[i].Weight = w
			} else if r.IntN(2) == 0 {
				steps[i].Pause = time.Duration(r.IntN(3)) * time.Minute
			}
		}
		var rec *CanaryRecord
		ready := "v1"
		for look := range 60 {
			now = now.Add(time.Duration(r.IntN(90)) * time.Second)
			f := CanaryFacts{Spec: Spec{Template: []string{"v2", "v2", "v2", "v3", "v1", ""}[r.IntN(6)], Request: []string{"", "", "again"}[r.IntN(3)]},
				Steps: steps, ReadyTemplate: ready, Record: rec, Now: now,
				CanaryReady: r.IntN(3) > 0, CanaryListed: r.IntN(3) > 0, WeightInForce: r.IntN(3) > 0, StableServed: r.IntN(3) > 0,
				StableRestored: r.IntN(3) > 0,
				Analysis:       AnalysisOutcome(r.IntN(8) / 6 * (1 + r.IntN(2)))}
			if r.IntN(10) == 0 {
				f.Control = []CanaryControl{ControlPromote, ControlAbort, ControlPause, ControlResume}[r.IntN(4)]
				f.Token = string(f.Control) + string(rune('a'+look))
			}
			if r.IntN(20) == 0 {
				f.CanaryFailure = &Failure{Reason: examplev1.ReasonImagePullBackOff}
			}
			next := Canary(f)
			if broken := canaryBroken(steps, rec, f, next); broken != "" {
				t.Fatalf("seed %d look %d: %s (facts %+v)", seed, look, broken, f)
			}
			// The stable Deployment completes a promoted template at some look, and readyTemplate
			// then names it.
			if StableTakesTemplate(next, f.Spec.Template) && r.IntN(4) == 0 {
				ready = next.Template
			}
			rec = next
		}
	}
}

// canaryBroken names the rule the record next breaks, "" when it breaks none.
func canaryBroken(steps []CanaryStep, rec *CanaryRecord, f CanaryFacts, next *CanaryRecord) string {
	if next == nil {
		// Removing the steps ends the canary at once: the route no longer splits.
		if rec != nil && rec.Size > 0 && (rec.Weight != 0 || !f.WeightInForce) && len(f.Steps) > 0 {
			return fmt.Sprintf("the canary ended while the route may still send its pods requests (%+v)", *rec)
		}
		return ""
	}
	switch {
	case next.Weight < 0 || next.Weight > 100:
		return fmt.Sprintf("weight %d", next.Weight)
	case next.Phase == CanaryAborted && next.Weight != 0 && (!next.StableMoved || rec == nil || next.Weight != rec.Weight):
		return fmt.Sprintf("an aborted canary keeps weight %d, not the weight of a promotion that moved the stable pods", next.Weight)
	case next.Weight > next.Size:
		return fmt.Sprintf("weight %d above the %d the canary's pods are sized for", next.Weight, next.Size)
	case (f.CanaryFailure != nil || f.Analysis == AnalysisFailed && rec != nil && rec.Weight > 0) && next.Weight != 0 &&
		next.Phase != CanaryFinishing && (next.Phase != CanaryPromoting || f.ReadyTemplate != next.Template) &&
		(!next.StableMoved || f.StableRestored):
		return fmt.Sprintf("a failed canary keeps weight %d (%+v)", next.Weight, *next)
	case next.Template == next.Stable:
		return fmt.Sprintf("a canary of the stable template %q", next.Template)
	case next.Phase == CanaryAborted && (next.Reason == "" || !strings.HasPrefix(next.Message, "step ")):
		return fmt.Sprintf("an abort without its reason or step: %+v", *next)
	}
	if rec == nil {
		return ""
	}
	return canaryStepBroken(steps, rec, f, next)
}

// canaryStepBroken names the rule the step from rec to next breaks, "" when it breaks none.
func canaryStepBroken(steps []CanaryStep, rec *CanaryRecord, f CanaryFacts, next *CanaryRecord) string {
	if broken := movedStepBroken(rec, f, next); broken != "" {
		return broken
	}
	switch {
	case rec.Phase == CanaryPromoting && rec.Template == next.Template && next.Phase == CanaryFinishing && f.ReadyTemplate != next.Template:
		return "a promotion finished before readyTemplate named its template"
	case rec.Phase == CanaryFinishing && f.Spec.Template == rec.Template && next.Phase == CanaryProgressing:
		return "a finished promotion started its canary again"
	case next.Template == rec.Template && next.Phase != CanaryAborted && next.Weight > rec.Weight &&
		next.Weight != 100 && !weightOfAStep(steps, next.Weight):
		return fmt.Sprintf("weight %d is no step's", next.Weight)
	case !rec.StableMoved && next.StableMoved && (next.Weight != 100 || !f.WeightInForce || next.Template != rec.Template):
		return fmt.Sprintf("the stable Deployment moved to the canary's template while the stable pods may take requests (%+v)", *next)
	case next.Weight > rec.Weight && !f.CanaryReady:
		return fmt.Sprintf("the weight rose to %d with the canary's pods not serving", next.Weight)
	case next.Weight > rec.Weight && !f.CanaryListed:
		return fmt.Sprintf("the weight rose to %d before the canary Service listed its pods", next.Weight)
	case next.Weight > rec.Weight && next.Weight > rec.Size:
		return fmt.Sprintf("the weight rose to %d before the canary was sized for it (%d)", next.Weight, rec.Size)
	case next.Size < rec.Size && (rec.Weight != 0 || !f.WeightInForce):
		return fmt.Sprintf("the canary's pods shrank to %d while the route may still send them requests (%+v)", next.Size, *rec)
	}
	return ""
}

// movedStepBroken names the rule of a promotion that moved the stable pods the step from rec
// to next breaks, "" when it breaks none.
func movedStepBroken(rec *CanaryRecord, f CanaryFacts, next *CanaryRecord) string {
	switch {
	case !rec.StableMoved:
	case next.Weight < rec.Weight && next.Phase != CanaryFinishing && !f.StableRestored:
		return fmt.Sprintf("the requests went back to the stable pods a promotion moved before they were all back (%+v)", *next)
	case next.Template == rec.Template && StableTakesTemplate(rec, f.Spec.Template) && !StableTakesTemplate(next, f.Spec.Template) &&
		next.Weight != 0 && next.Phase != CanaryAborted:
		return fmt.Sprintf("the stable pods the promotion moved were turned back while it goes on (%+v)", *next)
	}
	return ""
}

func weightOfAStep(steps []CanaryStep, w int32) bool {
	for _, s := range steps {
		if s.Weight == w {
			return true
		}
	}
	return false
}

// TestCanaryPods is the reading of the canary Deployment: ready only once the deployment
// controller observed the template under test with every pod the size asks for available, and
// judged, ready or not, by its current template's pods.
func TestCanaryPods(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	serving := func(mut func(d *Deployment)) *Deployment {
		d := &Deployment{Generation: 3, ObservedGeneration: 3, Replicas: 2, StatusReplicas: 2, UpdatedReplicas: 2,
			AvailableReplicas: 2, Current: "c1", Applied: "T"}
		if mut != nil {
			mut(d)
		}
		return d
	}
	crash := Problem{Template: "c1", Pod: "web-canary-1", Container: "app", Reason: "CrashLoopBackOff", FirstSeen: now.Add(-time.Minute)}
	cases := map[string]struct {
		d        *Deployment
		problems []Problem
		want     int32
		spec     string
		ready    bool
		fail     string
		recheck  bool
	}{
		"every pod of the template available":         {d: serving(nil), want: 2, ready: true},
		"no Deployment yet":                           {d: nil, want: 2},
		"the template unknown":                        {d: serving(nil), want: 2, spec: "-"},
		"not observed yet":                            {d: serving(func(d *Deployment) { d.Generation = 4 }), want: 2},
		"paused":                                      {d: serving(func(d *Deployment) { d.Paused = true }), want: 2},
		"no ReplicaSet at its revision known":         {d: serving(func(d *Deployment) { d.Current = "" }), want: 2},
		"it carries another template":                 {d: serving(func(d *Deployment) { d.Applied = "U" }), want: 2},
		"sized for fewer pods than the share asks":    {d: serving(nil), want: 3},
		"sized for more pods than the share asks":     {d: serving(func(d *Deployment) { d.Replicas = 3 }), want: 2},
		"an old pod still runs":                       {d: serving(func(d *Deployment) { d.StatusReplicas = 3 }), want: 2},
		"one pod not available":                       {d: serving(func(d *Deployment) { d.AvailableReplicas = 1 }), want: 2},
		"a size of no pod is never ready":             {d: serving(func(d *Deployment) { d.Replicas, d.StatusReplicas, d.UpdatedReplicas, d.AvailableReplicas = 0, 0, 0, 0 }), want: 0},
		"its pods crash past the grace, though ready": {d: serving(nil), problems: []Problem{crash}, want: 2, ready: true, fail: "CrashLoopBackOff"},
		"a crash within the grace is looked at again": {d: serving(func(d *Deployment) { d.AvailableReplicas = 1 }), problems: []Problem{{Template: "c1", Reason: "CrashLoopBackOff", FirstSeen: now}}, want: 2, recheck: true},
		"another template's pods are not its problem": {d: serving(nil), problems: []Problem{{Template: "c0", Reason: "CrashLoopBackOff", FirstSeen: now.Add(-time.Hour)}}, want: 2, ready: true},
		"its deadline passed: not available in time":  {d: serving(func(d *Deployment) { d.AvailableReplicas, d.DeadlineExceeded = 1, true }), want: 2, fail: examplev1.ReasonProgressDeadlineExceeded},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			spec := "T"
			if c.spec == "-" {
				spec = ""
			}
			ready, fail, recheck := CanaryPods(Facts{Spec: Spec{Template: spec}, Deployment: c.d, Problems: c.problems,
				Now: now, Grace: 30 * time.Second}, c.want)
			if ready != c.ready {
				t.Errorf("ready = %v, want %v", ready, c.ready)
			}
			got := ""
			if fail != nil {
				got = fail.Reason
			}
			if got != c.fail {
				t.Errorf("failure = %q, want %q", got, c.fail)
			}
			if (recheck > 0) != c.recheck {
				t.Errorf("recheck = %v, want one: %v", recheck, c.recheck)
			}
		})
	}
}
