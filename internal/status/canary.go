package status

import (
	"fmt"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// Canary is what the reconciler knows of a MyApp's canary release (spec.canary): the record
// it stored, and what keeps the analysis from judging.
type Canary struct {
	// Status is status.canary as recorded, nil when no canary is.
	Status *examplev1.CanaryStatus
	// Steps is how many steps spec.canary has.
	Steps int
	// Unavailable says that spec.canary asks for metric checks and the manager has no
	// Prometheus to evaluate them; Held, that a new template waits for a canary because of it.
	Unavailable, Held bool
	// Inconclusive is why a metric check of the canary cannot be evaluated, "" when each can.
	Inconclusive string
}

// canaryStalled is the Stalled problem of the canary: aborted, or a release held for want of
// a Prometheus to judge it; nil otherwise.
func canaryStalled(c *Canary) *Failure {
	switch {
	case c == nil:
		return nil
	case c.Status != nil && c.Status.Phase == "Aborted":
		went := "every request went back to the stable pods"
		if c.Status.Weight > 0 {
			// An abort after the promotion moved the stable pods (docs/design/canary.md).
			went = fmt.Sprintf("its pods take %d%% of the requests until the stable pods, returning to the template that serves, all run again", c.Status.Weight)
		}
		return &Failure{Reason: examplev1.ReasonCanaryAborted, Terminal: true,
			Message: "The canary release was aborted and " + went + ": " + c.Status.Message +
				". It holds until the spec asks for another pod template or a reconcile is requested"}
	case c.Unavailable && c.Held:
		return &Failure{Reason: examplev1.ReasonCanaryAnalysisUnavailable, Terminal: true, Message: unavailableMessage}
	}
	return nil
}

// canaryDegraded is the problem the canary runs in spite of: a check that cannot be evaluated,
// or metric checks no Prometheus will evaluate at the next release.
func canaryDegraded(c *Canary) *Failure {
	switch {
	case c == nil:
		return nil
	case c.Inconclusive != "":
		return &Failure{Reason: examplev1.ReasonCanaryAnalysisInconclusive,
			Message: "The canary's steps wait: " + c.Inconclusive}
	case c.Unavailable:
		return &Failure{Reason: examplev1.ReasonCanaryAnalysisUnavailable, Message: unavailableMessage}
	}
	return nil
}

const unavailableMessage = "spec.canary.analysis.metrics asks for metric checks and the manager has no Prometheus to " +
	"evaluate them (its --canary-prometheus-url flag): no canary can start, and a new pod template waits"

// canaryProgress is what a canary under way says of the rollout: its reason and message.
func canaryProgress(c *Canary) (active bool, reason, message string) {
	if c == nil || c.Status == nil {
		return false, "", ""
	}
	s := c.Status
	step := min(int(s.Step)+1, c.Steps)
	switch s.Phase {
	case "Progressing":
		return true, examplev1.ReasonCanaryProgressing,
			fmt.Sprintf("Canary release: step %d of %d, %d%% of the requests to the new pod template", step, c.Steps, s.Weight)
	case "Paused":
		return true, examplev1.ReasonCanaryPaused,
			fmt.Sprintf("Canary release paused at step %d of %d, %d%% of the requests to the new pod template: annotate %s=resume or promote to go on",
				step, c.Steps, s.Weight, examplev1.CanaryControlAnnotation)
	case "Promoting", "Finishing":
		return true, examplev1.ReasonCanaryPromoting,
			fmt.Sprintf("Promoting the canary release: %d%% of the requests to its pods while the stable pods move to its template", s.Weight)
	}
	return false, "", ""
}

// canaryUnderWay makes r say what a canary under way says: the stable pods serve, and the
// spec's template is not everywhere yet.
func (r *rollout) canaryUnderWay(c *Canary) {
	if active, reason, message := canaryProgress(c); active {
		r.ready, r.readyReason, r.readyMessage = false, reason, message
		r.busy, r.busyReason, r.busyMessage = true, reason, message
	}
}
