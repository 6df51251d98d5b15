// Package analysis judges a canary by metric checks: PromQL queries evaluated at an interval
// against a Prometheus and compared to a threshold (docs/design/canary.md, "Analysis"). The
// verdict is pure: it reads the checks and their tallies, which the reconciler records in the
// MyApp's status before they count, so that a restart neither repeats nor forgets a
// measurement. A query that cannot be evaluated is never a pass.
package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/example/myapp-operator/internal/rollout"
)

// Check is one metric check, defaulted.
type Check struct {
	// Name names the check in status and messages.
	Name string
	// Query is the PromQL query; Placeholders are replaced in it before it is sent.
	Query string
	// Operator compares the query's value (left) with Threshold (right): <, <=, > or >=.
	Operator string
	// Threshold is the value the query's is compared with.
	Threshold float64
	// Interval is how often the check is evaluated.
	Interval time.Duration
	// FailureLimit is how many failed measurements are tolerated: one more fails the check.
	FailureLimit int32
	// AbortOnError says that a measurement that cannot be taken counts as a failed one; without
	// it, such a measurement holds the steps until one can be taken again.
	AbortOnError bool
}

// Tally is what has been measured of one check for the canary under test, as recorded.
type Tally struct {
	// Measured, Failed and Errors count the measurements taken, those that failed the
	// condition, and those that could not be taken.
	Measured, Failed, Errors int32
	// LastAt is when the last measurement was taken (or attempted); zero when none was.
	LastAt time.Time
	// LastValue is the last value measured; LastError why the last measurement could not be
	// taken, "" when it was.
	LastValue string
	LastError string
	// FailedValue is the value of the last measurement that failed the condition, and Error
	// why the last measurement that could not be taken could not: what a message of a failed
	// check names.
	FailedValue string
	Error       string
}

// Due is when the next measurement of a check is due: one interval after the step began (so
// that the query's window holds requests at the step's weight), then one interval after the
// last one.
func Due(c Check, t Tally, stepStarted time.Time) time.Time {
	if t.LastAt.IsZero() || t.LastAt.Before(stepStarted) {
		return stepStarted.Add(c.Interval)
	}
	return t.LastAt.Add(c.Interval)
}

// Record adds one measurement to the tally: value when err is nil.
func Record(c Check, t Tally, at time.Time, value float64, err error) Tally {
	t.LastAt = at
	if err != nil {
		t.Errors++
		t.LastValue, t.LastError, t.Error = "", err.Error(), err.Error()
		return t
	}
	t.Measured++
	t.LastValue, t.LastError = strconv.FormatFloat(value, 'g', 6, 64), ""
	if !Holds(c.Operator, value, c.Threshold) {
		t.Failed++
		t.FailedValue = t.LastValue
	}
	return t
}

// Holds tells whether value op threshold holds; NaN holds nothing.
func Holds(op string, value, threshold float64) bool {
	if math.IsNaN(value) {
		return false
	}
	switch op {
	case "<":
		return value < threshold
	case "<=":
		return value <= threshold
	case ">":
		return value > threshold
	case ">=":
		return value >= threshold
	}
	return false
}

// Verdict is what the checks say of the canary at a step that began at stepStarted: failed
// once a check failed (or, under AbortOnError, could not be taken) more often than its limit
// allows; inconclusive while a check has no measurement taken since the step began or its
// last could not be taken; passing otherwise. The message names the check that decided.
func Verdict(checks []Check, tallies map[string]Tally, stepStarted time.Time) (rollout.AnalysisOutcome, string) {
	var waiting []string
	for _, c := range checks {
		t := tallies[c.Name]
		bad := t.Failed
		if c.AbortOnError {
			bad += t.Errors
		}
		if bad > c.FailureLimit {
			return rollout.AnalysisFailed, failedMessage(c, t, bad)
		}
		switch {
		case t.LastError != "":
			waiting = append(waiting, fmt.Sprintf("check %q cannot be evaluated: %s", c.Name, t.LastError))
		case t.LastAt.IsZero() || t.LastAt.Before(stepStarted):
			waiting = append(waiting, fmt.Sprintf("check %q has not been measured at this step yet", c.Name))
		}
	}
	if len(waiting) > 0 {
		return rollout.AnalysisInconclusive, strings.Join(waiting, "; ")
	}
	return rollout.AnalysisPassing, ""
}

func failedMessage(c Check, t Tally, bad int32) string {
	var why []string
	if t.Failed > 0 {
		why = append(why, fmt.Sprintf("%s is not %s %s", t.FailedValue, c.Operator, strconv.FormatFloat(c.Threshold, 'g', -1, 64)))
	}
	if c.AbortOnError && t.Errors > 0 {
		why = append(why, "cannot be evaluated: "+t.Error)
	}
	return fmt.Sprintf("check %q failed %d of %d measurements, %d allowed: %s", c.Name, bad, t.Measured+t.Errors,
		c.FailureLimit, strings.Join(why, "; "))
}
