package analysis

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/example/myapp-operator/internal/rollout"
)

func TestHolds(t *testing.T) {
	for _, tc := range []struct {
		op          string
		value, than float64
		want        bool
	}{
		{">=", 0.99, 0.99, true}, {">=", 0.98, 0.99, false}, {">", 0.99, 0.99, false}, {">", 1, 0.99, true},
		{"<=", 0.5, 0.5, true}, {"<=", 0.6, 0.5, false}, {"<", 0.5, 0.5, false}, {"<", 0.4, 0.5, true},
		{">=", math.NaN(), 0, false}, {"<", math.NaN(), 1, false}, {"==", 1, 1, false},
	} {
		if got := Holds(tc.op, tc.value, tc.than); got != tc.want {
			t.Errorf("Holds(%v %s %v) = %v, want %v", tc.value, tc.op, tc.than, got, tc.want)
		}
	}
}

func TestVerdict(t *testing.T) {
	step := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	rate := Check{Name: "success-rate", Operator: ">=", Threshold: 0.99, Interval: 30 * time.Second, FailureLimit: 1}
	strict := Check{Name: "latency", Operator: "<=", Threshold: 0.5, Interval: time.Minute, AbortOnError: true}
	measure := func(c Check, at time.Time, values ...any) Tally {
		var tl Tally
		for i, v := range values {
			when := at.Add(time.Duration(i) * c.Interval)
			switch v := v.(type) {
			case float64:
				tl = Record(c, tl, when, v, nil)
			case error:
				tl = Record(c, tl, when, 0, v)
			}
		}
		return tl
	}
	down := errors.New("querying Prometheus: connection refused")
	for _, tc := range []struct {
		name    string
		checks  []Check
		tallies map[string]Tally
		want    rollout.AnalysisOutcome
		message string
	}{
		{"no checks pass", nil, nil, rollout.AnalysisPassing, ""},
		{"not measured at this step waits", []Check{rate}, nil, rollout.AnalysisInconclusive, `check "success-rate" has not been measured at this step yet`},
		{"measured before this step waits", []Check{rate}, map[string]Tally{"success-rate": measure(rate, step.Add(-time.Minute), 0.999)},
			rollout.AnalysisInconclusive, "not been measured at this step"},
		{"measured and holding passes", []Check{rate}, map[string]Tally{"success-rate": measure(rate, step, 0.999)}, rollout.AnalysisPassing, ""},
		{"one failure within the limit passes", []Check{rate}, map[string]Tally{"success-rate": measure(rate, step, 0.95, 0.999)}, rollout.AnalysisPassing, ""},
		{"past the limit fails, naming the failing value", []Check{rate}, map[string]Tally{"success-rate": measure(rate, step, 0.95, 0.999, 0.93)},
			rollout.AnalysisFailed, `check "success-rate" failed 2 of 3 measurements, 1 allowed: 0.93 is not >= 0.99`},
		{"an error waits by default: never a pass", []Check{rate}, map[string]Tally{"success-rate": measure(rate, step, 0.999, down)},
			rollout.AnalysisInconclusive, `check "success-rate" cannot be evaluated: querying Prometheus: connection refused`},
		{"errors never fail a check that waits on them", []Check{rate}, map[string]Tally{"success-rate": measure(rate, step, down, down, down, 0.999)},
			rollout.AnalysisPassing, ""},
		{"an error fails a check that aborts on errors", []Check{strict}, map[string]Tally{"latency": measure(strict, step, down)},
			rollout.AnalysisFailed, `check "latency" failed 1 of 1 measurements, 0 allowed: cannot be evaluated: querying Prometheus: connection refused`},
		{"the first failing check decides", []Check{rate, strict}, map[string]Tally{
			"success-rate": measure(rate, step, 0.999), "latency": measure(strict, step, 0.7)},
			rollout.AnalysisFailed, `check "latency" failed 1 of 1 measurements, 0 allowed: 0.7 is not <= 0.5`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := Verdict(tc.checks, tc.tallies, step)
			if got != tc.want || !strings.Contains(msg, tc.message) || (tc.message == "") != (msg == "") {
				t.Errorf("got %v %q, want %v %q", got, msg, tc.want, tc.message)
			}
		})
	}
}

func TestDue(t *testing.T) {
	step := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	c := Check{Interval: 30 * time.Second}
	if got := Due(c, Tally{}, step); !got.Equal(step.Add(30 * time.Second)) {
		t.Errorf("a check never measured is due an interval after the step began, got %v", got)
	}
	if got := Due(c, Tally{LastAt: step.Add(-time.Second)}, step); !got.Equal(step.Add(30 * time.Second)) {
		t.Errorf("a check measured before the step is due an interval after it began, got %v", got)
	}
	if got := Due(c, Tally{LastAt: step.Add(time.Minute)}, step); !got.Equal(step.Add(90 * time.Second)) {
		t.Errorf("a measured check is due an interval later, got %v", got)
	}
}

func TestExpand(t *testing.T) {
	got := Expand(`sum(rate(x{service="{{namespace}}-{{canary}}"}[1m])) / {{name}}`, "shop", "web")
	if want := `sum(rate(x{service="shop-web-canary"}[1m])) / web`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
