package rollout

import (
	"fmt"
	"time"
)

// The canary step machine of docs/design/canary.md. It decides, from the recorded canary and
// stored facts, the canary record to store next; the children (the canary Deployment's
// replicas, the route's weights, the stable Deployment's template) are built from the record
// alone, so that what the cluster is told always follows what was recorded first.

// CanaryStep is one step of a canary: a weight, or a pause.
type CanaryStep struct {
	// Weight, above 0, is the percentage of requests the step sends to the canary.
	Weight int32
	// Pause, for a step without a weight, is how long the step waits; zero waits until the
	// user resumes or promotes.
	Pause time.Duration
}

// CanaryPhase is where a canary is.
type CanaryPhase string

const (
	// CanaryProgressing: the steps advance.
	CanaryProgressing CanaryPhase = "Progressing"
	// CanaryPaused: the canary waits for the user (a pause step without a duration, or a
	// pause the user asked for); its weight and analysis stay.
	CanaryPaused CanaryPhase = "Paused"
	// CanaryPromoting: every step passed (or the user promoted): the canary takes every
	// request, then the stable Deployment moves to its template.
	CanaryPromoting CanaryPhase = "Promoting"
	// CanaryFinishing: the stable Deployment completed the canary's template and takes every
	// request again; the canary is scaled to zero once its weight of 0 is in force.
	CanaryFinishing CanaryPhase = "Finishing"
	// CanaryAborted: a check failed or the user aborted; every request goes to the stable
	// template and the canary has no pod. It is held like a rollback: until the spec's
	// template or the reconcile request changes.
	CanaryAborted CanaryPhase = "Aborted"
)

// Reasons a canary is aborted for, beside a Failure's reason (the canary's pods failing as the
// auto-pilot recognises, or the canary Deployment's progress deadline, which is the canary's
// deadline to become available).
const (
	// ReasonCanaryAnalysisFailed: a metric check failed more often than its limit allows, or
	// could not be evaluated under a policy that aborts.
	ReasonCanaryAnalysisFailed = "CanaryAnalysisFailed"
	// ReasonCanaryAbortedByUser: the user asked for an abort.
	ReasonCanaryAbortedByUser = "CanaryAbortedByUser"
)

// CanaryRecord is the canary as recorded in the MyApp's status; the children are built from it.
type CanaryRecord struct {
	// Template is the pod-template-hash digest of the template under test (Spec.Template's
	// terms); Stable is the template the stable Deployment keeps until promotion (the
	// readyTemplate when the canary started).
	Template, Stable string
	// Request is the reconcile request the canary runs under: a new one restarts an aborted
	// canary.
	Request string
	// Step is the index of the current step; len(steps) once every step passed.
	Step int32
	// Weight is the percentage of requests the route is to send to the canary.
	Weight int32
	// Size is the weight the canary's pods are sized for: the canary's replicas are built from
	// Size, the route from Weight. Size rises before Weight (the pods for a share exist before
	// the share is sent to them) and falls only once a Weight of 0 is in force (no request
	// meets a pod that is going away), so Weight never exceeds Size.
	Size int32
	// StableMoved says that the stable Deployment was given the canary's template: in a
	// promotion, once every request goes to the canary's pods. It is recorded before the stable
	// Deployment is changed, so that a look that no longer sees that weight in force (a route
	// made again, a Gateway that answers late) does not turn the stable pods back.
	StableMoved bool
	// StepStarted is when the current step (or phase) began.
	StepStarted time.Time
	// Phase is where the canary is.
	Phase CanaryPhase
	// Control is the last manual control acted on (its digest), so that one annotation acts once.
	Control string
	// Reason and Message say why an aborted canary was aborted, naming the step and the check.
	Reason, Message string
}

// CanaryControl is a manual control: the value of the control annotation.
type CanaryControl string

const (
	// ControlPromote skips the remaining steps.
	ControlPromote CanaryControl = "promote"
	// ControlAbort aborts the canary.
	ControlAbort CanaryControl = "abort"
	// ControlPause pauses the steps.
	ControlPause CanaryControl = "pause"
	// ControlResume resumes paused steps, past a pause step without a duration.
	ControlResume CanaryControl = "resume"
)

// AnalysisOutcome is what the metric checks say of the canary so far.
type AnalysisOutcome int

const (
	// AnalysisPassing: no check failed beyond its limit.
	AnalysisPassing AnalysisOutcome = iota
	// AnalysisFailed: a check failed beyond its limit, or could not be evaluated under a
	// policy that aborts.
	AnalysisFailed
	// AnalysisInconclusive: a check could not be evaluated under a policy that waits: the
	// steps do not advance until it can be, and the status says so. It is never a pass.
	AnalysisInconclusive
)

// CanaryFacts is what the step machine reads.
type CanaryFacts struct {
	// Spec is what the MyApp's spec asks.
	Spec Spec
	// Steps are the spec's canary steps; none means the MyApp asks for no canary.
	Steps []CanaryStep
	// ReadyTemplate is status.readyTemplate: the template that serves.
	ReadyTemplate string
	// Record is the canary recorded in the status, or nil.
	Record *CanaryRecord
	// Control is the manual control annotation's value and Token a digest of it with the
	// generation it was set at, "" when there is none.
	Control CanaryControl
	Token   string
	// CanaryReady says that the canary Deployment observed Record.Template and runs the pods
	// Record.Size asks for, available.
	CanaryReady bool
	// CanaryListed says that the canary Service's EndpointSlices list those pods ready: the
	// Gateway sends a share to the endpoints its controller reads there, and an available pod
	// the slices do not list yet takes no request (the edge answers 503). Without a Gateway
	// the Service is kube-proxy's alone and the share is the pods': it holds with CanaryReady.
	CanaryListed bool
	// CanaryFailure is the canary Deployment's failure once due, by Judge's rules (its pods'
	// problems past the grace, or its progress deadline, which carries the canary's deadline
	// to become available), or nil.
	CanaryFailure *Failure
	// WeightInForce says that the route carries Record.Weight and the Gateway's own controller
	// accepted it; without a Gateway, that CanaryReady holds.
	WeightInForce bool
	// StableServed says that the stable pods' Service selects the pods of readyTemplate, as
	// stored, and its EndpointSlices list them ready: a promotion gives the stable pods the
	// requests back only once they do. Without a Gateway there is no such Service, and it holds.
	StableServed bool
	// StableRestored says that every pod the stable Deployment asks for runs readyTemplate
	// and is ready again: the deployment controller observed the Deployment back on it, every
	// pod of it available (StableRestored), and with a Gateway its Service's EndpointSlices
	// list that many ready pods of it. A canary whose promotion moved
	// the stable pods (StableMoved), aborted or given up for a newer template, keeps its
	// weight until they are back: the stable pods' Service may list none of them meanwhile.
	StableRestored bool
	// Analysis is the metric checks' outcome for the record's template, and AnalysisMessage
	// names the check and its last value. The checks are measured only while the canary has
	// a weight (a canary nobody calls has nothing to measure): at weight 0 it is not read.
	Analysis        AnalysisOutcome
	AnalysisMessage string
	// Now is the clock at this look.
	Now time.Time
}

// Canary is the canary record to store next: nil when no canary runs (none is asked for, the
// spec asks for the template that serves, or a canary finished), the record unchanged when
// nothing is to change. The caller stores a changed record before it acts on it, and builds
// the children from the stored record only.
//
// A canary compares a new template with one that serves: it starts when the spec asks for a
// template other than readyTemplate and readyTemplate exists (a first release has nothing
// stable to keep serving and rolls out as today). A new template mid-canary starts it again at
// its first step; a return to readyTemplate, or removing the steps, ends it (the stable
// Deployment then does what the spec says, as without a canary). An aborted canary holds, as a
// rollback does, until the spec's template or the reconcile request changes.
func Canary(f CanaryFacts) *CanaryRecord {
	rec := f.Record
	// A promotion makes the canary's template readyTemplate before the canary ends: the stable
	// Deployment completes it, then takes every request back.
	promoted := rec != nil && rec.Template == f.Spec.Template && (rec.Phase == CanaryPromoting || rec.Phase == CanaryFinishing)
	switch {
	case f.Spec.Template == "":
		return unknownSpec(rec, f)
	case len(f.Steps) == 0:
		return nil
	case !promoted && (f.ReadyTemplate == "" || f.Spec.Template == f.ReadyTemplate):
		return drained(rec, f, nil)
	case rec == nil || f.Spec.Template != rec.Template:
		return drained(rec, f, start(f))
	case rec.Phase == CanaryAborted && f.Spec.Request != rec.Request:
		return drained(rec, f, start(f))
	case rec.Phase == CanaryAborted:
		return aborted(rec, f)
	case rec.Phase == CanaryFinishing:
		if f.WeightInForce {
			return nil
		}
		return rec
	}
	next := *rec
	if f.Token != "" && f.Token != rec.Control {
		next.Control = f.Token
		if f.Control == ControlAbort {
			return abort(next, f, ReasonCanaryAbortedByUser, "aborted by the user")
		}
		control(&next, f)
	}
	if rec.Weight == 0 {
		f.Analysis = AnalysisPassing
	}
	if failed := checked(next, f); failed != nil {
		return failed
	}
	if f.Analysis != AnalysisInconclusive {
		// Nothing advances on a check that cannot be evaluated.
		advance(&next, f)
	}
	if next == *rec {
		return rec
	}
	return &next
}

// unknownSpec is the record while the spec's template is unknown: nothing advances, as with
// a held rollback; a canary whose pods or checks fail still stops taking requests, and an
// abort goes on (the requests go back to the stable pods once they are back).
func unknownSpec(rec *CanaryRecord, f CanaryFacts) *CanaryRecord {
	switch {
	case rec != nil && rec.Phase == CanaryAborted && rec.Weight > 0:
		return returned(rec, f)
	case rec == nil || rec.Phase == CanaryAborted || rec.Phase == CanaryFinishing:
		return rec
	}
	if failed := checked(*rec, f); failed != nil {
		return failed
	}
	return rec
}

// aborted is the record of an aborted canary that holds: after an abort of a promotion that
// moved the stable pods, its weight goes to 0 once they are all back; once a weight of 0 is in
// force, every request goes to the stable pods again and the canary's pods may go.
func aborted(rec *CanaryRecord, f CanaryFacts) *CanaryRecord {
	switch {
	case rec.Weight > 0:
		return returned(rec, f)
	case rec.Size > 0 && f.WeightInForce:
		next := *rec
		next.Size = 0
		return &next
	}
	return rec
}

// control carries out a manual control other than an abort.
func control(next *CanaryRecord, f CanaryFacts) {
	switch f.Control {
	case ControlPromote:
		if next.Phase != CanaryPromoting {
			next.Phase, next.StepStarted = CanaryPromoting, f.Now
		}
	case ControlPause:
		if next.Phase == CanaryProgressing {
			next.Phase = CanaryPaused
		}
	case ControlResume:
		if next.Phase == CanaryPaused {
			next.Phase = CanaryProgressing
			if s := int(next.Step); s < len(f.Steps) && f.Steps[s].Weight == 0 && f.Steps[s].Pause == 0 {
				next.Step, next.StepStarted = next.Step+1, f.Now
			}
		}
	}
}

// checked is next aborted when the canary's pods or its checks failed, nil otherwise. Once the
// stable Deployment completed the canary's template (readyTemplate moved to it), a promotion
// is not aborted: a template that completed its rollout is not rolled back.
func checked(next CanaryRecord, f CanaryFacts) *CanaryRecord {
	switch {
	case next.Phase == CanaryPromoting && f.ReadyTemplate == next.Template:
		return nil
	case f.CanaryFailure != nil:
		return abort(next, f, f.CanaryFailure.Reason, failureMessage(f.CanaryFailure))
	case f.Analysis == AnalysisFailed:
		return abort(next, f, ReasonCanaryAnalysisFailed, f.AnalysisMessage)
	}
	return nil
}

// failureMessage names the canary's failure and, for a pod problem, the pod and container.
func failureMessage(fail *Failure) string {
	if p := fail.Problem; p != nil {
		return fmt.Sprintf("the canary's pods fail: %s (pod %s, container %s): %s", fail.Reason, p.Pod, p.Container, p.Message)
	}
	return "the canary's pods fail: " + fail.Reason
}

// start is a canary of the spec's template at its first step, the stable Deployment keeping
// readyTemplate.
func start(f CanaryFacts) *CanaryRecord {
	return &CanaryRecord{
		Template: f.Spec.Template, Stable: f.ReadyTemplate, Request: f.Spec.Request,
		Phase: CanaryProgressing, StepStarted: f.Now, Control: f.Token,
	}
}

// drained is then (a new canary, or none) once the canary recorded before it (rec) takes no
// request. The canary Deployment runs one template: its pods go (to a new template, or away)
// only when a weight of 0 is in force for rec, so that no request meets a pod that is going
// away. Until then the record keeps rec's canary, its template and its pods, and takes its
// weight to 0, as a step of its own (it begins now, so that the route tells it from the records
// before it). A promotion that moved the stable pods gives them the template that serves back
// (the spec no longer asks for the record's template, so StableTakesTemplate says no) and
// keeps its weight until they are all back (returned).
func drained(rec *CanaryRecord, f CanaryFacts, then *CanaryRecord) *CanaryRecord {
	switch {
	case rec == nil || rec.Size == 0 || (rec.Weight == 0 && f.WeightInForce):
		return then
	case rec.Weight == 0:
		return rec
	}
	return returned(rec, f)
}

// returned takes rec's weight to 0, as a step of its own, unless its promotion moved the
// stable pods and they are not all back: then rec stays as it is, its canary taking the
// requests meanwhile.
func returned(rec *CanaryRecord, f CanaryFacts) *CanaryRecord {
	if rec.StableMoved && !f.StableRestored {
		return rec
	}
	next := *rec
	next.Weight, next.StableMoved, next.StepStarted = 0, false, f.Now
	return &next
}

// abort ends next with every request on the stable template; the canary keeps its pods until
// that weight of 0 is in force (Canary, in the Aborted phase), then has none. A promotion that
// moved the stable pods gives them the template that serves back (an aborted record never lets
// them take its template) and keeps its weight until they are all back: sending the requests
// to a Service that lists none of them would fail every one.
func abort(next CanaryRecord, f CanaryFacts, reason, message string) *CanaryRecord {
	next.Phase, next.StepStarted = CanaryAborted, f.Now
	if !next.StableMoved || f.StableRestored {
		next.Weight, next.StableMoved = 0, false
	}
	next.Reason = reason
	next.Message = fmt.Sprintf("step %d of %d: %s", min(int(next.Step)+1, len(f.Steps)), len(f.Steps), message)
	return &next
}

// advance moves next on as far as the facts allow in this look: one transition, since every
// transition is recorded before the children follow it.
func advance(next *CanaryRecord, f CanaryFacts) {
	switch next.Phase {
	case CanaryProgressing:
		s := int(next.Step)
		if s >= len(f.Steps) {
			next.Phase, next.StepStarted = CanaryPromoting, f.Now
			return
		}
		step := f.Steps[s]
		switch {
		case step.Weight > next.Size:
			// The canary is sized for the step's weight first.
			next.Size = step.Weight
		case step.Weight > 0 && next.Weight != step.Weight:
			// The weight moves only once the canary's pods for it serve, listed by its Service.
			if f.CanaryReady && f.CanaryListed {
				next.Weight = step.Weight
			}
		case step.Weight > 0:
			if f.WeightInForce && f.CanaryReady {
				next.Step, next.StepStarted = next.Step+1, f.Now
			}
		case step.Pause == 0:
			next.Phase = CanaryPaused
		case f.Now.Sub(next.StepStarted) >= step.Pause:
			next.Step, next.StepStarted = next.Step+1, f.Now
		}
	case CanaryPromoting:
		switch {
		case next.Size != 100:
			// The canary is sized as the stable Deployment first.
			next.Size = 100
		case next.Weight != 100:
			if f.CanaryReady && f.CanaryListed {
				next.Weight = 100
			}
		case !next.StableMoved:
			// Every request goes to the canary's pods: the stable Deployment may move to its
			// template, and no request meets a stable pod that goes away.
			if f.WeightInForce {
				next.StableMoved = true
			}
		case f.WeightInForce && f.ReadyTemplate == next.Template && f.StableServed:
			// The stable Deployment completed the template and it is recorded as readyTemplate:
			// every request goes back to it.
			next.Phase, next.Weight, next.StepStarted = CanaryFinishing, 0, f.Now
		}
	}
}

// CanaryPods reads the canary Deployment for the step machine (CanaryFacts.CanaryReady and
// CanaryFailure): f is the canary Deployment's facts, f.Spec.Template the template under test
// and want the replicas the recorded size asks for. It is ready once the deployment controller
// observed it carrying that template and every one of its want pods is of it and available.
// Its failure is Judge's, on the pods of its current template: the same problems and grace, or
// its progress deadline (the canary's availableWithin); unlike a rollout's, a canary that
// became available is still judged, since its pods must serve through every step. recheck is
// how soon a problem within its grace becomes due.
func CanaryPods(f Facts, want int32) (ready bool, fail *Failure, recheck time.Duration) {
	d := f.Deployment
	if f.Spec.Template == "" || !observed(d) || d.Applied != f.Spec.Template {
		return false, nil, 0
	}
	ready = d.Replicas == want && runsAll(d)
	fail, recheck = failure(f)
	return ready, fail, recheck
}

// StableRestored is CanaryFacts.StableRestored's part of the Deployment: the stable Deployment d, as
// the deployment controller observed it, runs every pod it asks for of the template hash
// (readyTemplate's pod-template-hash), available, and no pod of another template.
func StableRestored(d *Deployment, hash string) bool {
	return hash != "" && observed(d) && d.Current == hash && runsAll(d)
}

// runsAll tells whether the Deployment d asks for pods and runs every one of them of its
// current template, available, and none of another.
func runsAll(d *Deployment) bool {
	return d.Replicas > 0 && d.StatusReplicas == d.UpdatedReplicas && d.UpdatedReplicas >= d.Replicas &&
		d.AvailableReplicas >= d.Replicas
}

// StableTakesTemplate tells whether the stable Deployment takes the canary's template, which
// is the spec's (spec, Spec.Template's terms; "" while unknown): once a promotion moved it
// (StableMoved), and while the promotion finishes. Otherwise, while a canary is recorded, it
// keeps the template that serves: also when the spec moved on from the promotion's template,
// whose canary is then drained (the record keeps StableMoved until the stable pods are back).
func StableTakesTemplate(rec *CanaryRecord, spec string) bool {
	return rec != nil && (spec == "" || spec == rec.Template) &&
		(rec.Phase == CanaryFinishing || (rec.Phase == CanaryPromoting && rec.StableMoved))
}
