package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1ac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/analysis"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/metrics"
	"github.com/example/myapp-operator/internal/rollout"
	"github.com/example/myapp-operator/internal/status"
)

// Canary releases (docs/design/canary.md). What to do is internal/rollout's step machine
// (rollout.Canary), decided from stored facts and the clock; this file gathers its facts,
// records its answer in the MyApp's status before anything follows it, and builds the
// children from the record alone:
//
//  1. the facts: the canary Deployment and its pods (rollout.CanaryPods), the HTTPRoute's
//     weights and whether the Gateway's controller accepted them, the manual control
//     annotation, and the metric checks due (internal/analysis), measured against the
//     manager's Prometheus;
//  2. the record (status.canary), with the measurements, written guarded by the MyApp's
//     resourceVersion: a MyApp changed since refuses it, and the next reconcile decides again;
//  3. the children, from the record: the stable Deployment keeps the template that serves
//     until the promotion moves it (rollout.StableTakesTemplate), the canary Deployment runs
//     the spec's template sized for the recorded share, and the route splits the requests by
//     the recorded weight.

// canaryTemplateAnnotation records on the canary Deployment the digest of the template it was
// applied with (in rollout.Spec.Template's terms): the step machine judges its pods only while
// it carries the template under test.
const canaryTemplateAnnotation = "myapp.example.com/canary-template"

// canaryWeightAnnotation records on the HTTPRoute which canary record its weights were built
// from (canaryWeightTag). A cache that lags behind the operator's writes can show an older
// route whose weights equal the recorded ones, a split of 100 to 0 from before the canary
// took a weight, say, while the route as stored sends the canary a share; the recorded weight
// is in force only on a route that carries this record's tag.
const canaryWeightAnnotation = "myapp.example.com/canary-weight-of"

// canaryWeightTag names a canary record's weight on the route: a digest of what sets the
// weight (the template, the request, the phase, the step, the weight, the promotion's move and
// when the step began). It changes with every change of the weight, and no later record of the
// same canary has an earlier one's tag with a different weight between: within a step the
// weight only rises, and every move back to 0 (an abort, the promotion's finish) starts a phase
// of its own.
func canaryWeightTag(rec *rollout.CanaryRecord) string {
	if rec == nil {
		return ""
	}
	return status.Digest(fmt.Sprintf("%s|%s|%s|%d|%d|%t|%d", rec.Template, rec.Request, rec.Phase, rec.Step, rec.Weight,
		rec.StableMoved, rec.StepStarted.Unix()))[:16]
}

// canaryLook is what one reconcile decided of a MyApp's canary release.
type canaryLook struct {
	plan *desired.CanaryPlan
	// record is the canary as recorded, nil when none runs; status is the same as stored.
	record *rollout.CanaryRecord
	status *examplev1.CanaryStatus
	// stable is the intent of the template the stable Deployment keeps (readyTemplate's), nil
	// when it takes the spec's.
	stable *corev1ac.PodTemplateSpecApplyConfiguration
	// unavailable says that the spec asks for metric checks and the manager has no Prometheus.
	unavailable bool
	// inconclusive is the message of metric checks that cannot be evaluated, "" otherwise.
	inconclusive string
	// stableReplicas is what the canary's replicas are computed from.
	stableReplicas int32
	// spec is the digest of the spec's template (rollout.Spec.Template), "" while unknown.
	spec string
}

// decideCanary decides the MyApp's canary for this reconcile when ok (the rollout decision's
// facts were gathered, no selector migration runs), records it in out and obs, and returns it.
func (r *MyAppReconciler) decideCanary(ctx context.Context, app *examplev1.MyApp, obs *status.Observed, out *outcome,
	cached *appsv1.Deployment, intent *appsv1ac.DeploymentApplyConfiguration, p *pilot, ok bool) *canaryLook {
	obs.Canary = &status.Canary{Status: app.Status.Canary}
	if !ok {
		return nil
	}
	look, err := r.canaryBefore(ctx, app, cached, intent, p, out)
	out.add(r, app, obs, err)
	obs.Canary = look.observation(app)
	out.canary = look
	return look
}

// canaryBefore decides the MyApp's canary for this reconcile, before its Deployments are
// applied: nil when the MyApp asks for none and none is recorded. cached is the stable
// Deployment as cached (nil when there is none), intent the spec's, p the rollout decision's
// facts.
func (r *MyAppReconciler) canaryBefore(ctx context.Context, app *examplev1.MyApp, cached *appsv1.Deployment,
	intent *appsv1ac.DeploymentApplyConfiguration, p *pilot, out *outcome) (*canaryLook, error) {
	plan, planErr := desired.CanaryPlanOf(app)
	prev, tallies := canaryRecordOf(app.Status.Canary)
	if plan == nil && prev == nil {
		return nil, planErr
	}
	now := r.now()
	look := &canaryLook{plan: plan, record: prev, status: app.Status.Canary, stableReplicas: stableReplicas(intent, cached),
		spec: p.facts.Spec.Template}
	ready := ""
	if p.facts.TargetStored {
		ready = p.facts.TargetIntent
	}
	f := rollout.CanaryFacts{Spec: p.facts.Spec, ReadyTemplate: ready, Record: prev, Now: now,
		StableRestored: rollout.StableRestored(p.facts.Deployment, app.Status.ReadyTemplate)}
	if plan != nil {
		f.Steps = plan.Steps
		look.unavailable = len(plan.Checks) > 0 && r.CanaryAnalysis == nil
	}
	f.Control, f.Token = canaryControl(app)
	if look.unavailable && prev == nil {
		// No canary can be judged as the spec asks: none starts, and the stable Deployment keeps
		// the template that serves rather than roll the new one out unjudged.
		if ready != "" && f.Spec.Template != "" && f.Spec.Template != ready && p.held == nil {
			return look, r.keepStable(ctx, app, look)
		}
		return look, nil
	}
	if planErr != nil {
		// The spec's canary cannot be read (stored before a rule refused it): the recorded canary
		// holds as it is until the spec is fixed.
		if stableKept(look.spec, prev) {
			if err := r.keepStable(ctx, app, look); err != nil {
				return look, err
			}
		}
		return look, planErr
	}
	if p.held != nil {
		if prev == nil {
			// A rollback holds the spec's template off: no canary of it starts.
			return nil, nil
		}
		if p.held.FailedSpec == prev.Template {
			f.CanaryFailure = &rollout.Failure{Reason: p.held.Reason}
		}
	}
	if prev != nil {
		var err error
		if tallies, err = r.canaryJudges(ctx, app, look, tallies, &f, out); err != nil {
			return look, err
		}
	}
	next, err := r.confirmRise(ctx, app, f, look.stableReplicas, out)
	if err != nil {
		return look, err
	}
	if next == nil || prev == nil || next.Template != prev.Template || next.Request != prev.Request {
		tallies = nil
	}
	out.retryWithin(canaryRecheck(plan, next, now))
	recorded := canaryStatusOf(next, tallies, plan)
	if !equality.Semantic.DeepEqual(recorded, app.Status.Canary) {
		if err := r.recordCanary(ctx, app, recorded); err != nil {
			// Nothing follows an answer that is not recorded: the children stay as the stored
			// record says.
			return r.holdRecorded(ctx, app, look, next, err)
		}
		r.canaryEvents(app, plan, prev, next)
	}
	look.record, look.status = next, recorded
	if stableKept(look.spec, next) {
		return look, r.keepStable(ctx, app, look)
	}
	return look, nil
}

// stableKept tells whether a look that acts on these canary records, the spec asking for the
// template spec, keeps the stable Deployment on the template that serves: when any of them
// does not let the stable pods take the spec's template.
func stableKept(spec string, records ...*rollout.CanaryRecord) bool {
	for _, rec := range records {
		if rec != nil && !rollout.StableTakesTemplate(rec, spec) {
			return true
		}
	}
	return false
}

// keepStable makes the look keep the stable Deployment on the template that serves: the
// operator's stored intent of readyTemplate (nil when it is not stored).
func (r *MyAppReconciler) keepStable(ctx context.Context, app *examplev1.MyApp, look *canaryLook) error {
	stable, err := r.targetIntent(ctx, app, app.Status.ReadyTemplate)
	look.stable = stable
	return err
}

// canaryJudges gathers the facts of the recorded canary (look.record) for the step machine:
// its pods, the route's weights, and the metric checks, measuring those due. It returns the
// checks' tallies with the measurements taken.
func (r *MyAppReconciler) canaryJudges(ctx context.Context, app *examplev1.MyApp, look *canaryLook,
	tallies map[string]analysis.Tally, f *rollout.CanaryFacts, out *outcome) (map[string]analysis.Tally, error) {
	prev, plan := look.record, look.plan
	retry, current, err := r.canaryPodFacts(ctx, app, prev, look.stableReplicas, f)
	if err != nil {
		return tallies, err
	}
	out.retryWithin(retry)
	if err := r.routeFacts(ctx, app, prev, current, desired.CanaryReplicas(look.stableReplicas, prev.Size), look.stableReplicas, f); err != nil {
		return tallies, err
	}
	tallies, due := r.measure(ctx, app, plan, prev, tallies, f.Now)
	out.retryWithin(due)
	if plan == nil || len(plan.Checks) == 0 {
		return tallies, nil
	}
	if r.CanaryAnalysis == nil {
		f.Analysis, f.AnalysisMessage = rollout.AnalysisInconclusive, "the manager has no Prometheus to evaluate the metric checks"
	} else {
		f.Analysis, f.AnalysisMessage = analysis.Verdict(plan.Checks, tallies, prev.StepStarted)
	}
	if f.Analysis == rollout.AnalysisInconclusive && prev.Weight > 0 {
		look.inconclusive = f.AnalysisMessage
	}
	return tallies, nil
}

// holdRecorded is the look of a reconcile whose record, decided, could not be written: the
// children follow the canary stored before it, and the stable Deployment keeps the template
// that serves if either record keeps it. A canary whose start could not be recorded (the user
// changed the MyApp between the look's read and its write) has no stored record, and the spec's
// template would otherwise roll the stable pods unjudged.
func (r *MyAppReconciler) holdRecorded(ctx context.Context, app *examplev1.MyApp, look *canaryLook,
	decided *rollout.CanaryRecord, recordErr error) (*canaryLook, error) {
	look.record, _ = canaryRecordOf(app.Status.Canary)
	look.status = app.Status.Canary
	if stableKept(look.spec, look.record, decided) {
		if err := r.keepStable(ctx, app, look); err != nil {
			return look, err
		}
	}
	return look, recordErr
}

// stableReplicas is the stable Deployment's count the canary is sized from: the spec's when the
// operator sets it, else the stored Deployment's (the autoscaler's), 1 when neither is known.
func stableReplicas(intent *appsv1ac.DeploymentApplyConfiguration, cached *appsv1.Deployment) int32 {
	switch {
	case intent != nil && intent.Spec != nil && intent.Spec.Replicas != nil:
		return *intent.Spec.Replicas
	case cached != nil && cached.Spec.Replicas != nil:
		return *cached.Spec.Replicas
	}
	return 1
}

// canaryPodFacts reads the canary Deployment for the step machine: whether it runs the pods
// the recorded size asks for, available, and the failure of its pods once due. retry is how
// soon a problem within its grace becomes due; current is the pod-template-hash of the canary
// Deployment's current ReplicaSet, "" while it is not known.
func (r *MyAppReconciler) canaryPodFacts(ctx context.Context, app *examplev1.MyApp, rec *rollout.CanaryRecord, stable int32,
	f *rollout.CanaryFacts) (retry time.Duration, current string, err error) {
	d := &appsv1.Deployment{}
	found, err := r.cachedChild(ctx, app, desired.CanaryName(app), d)
	if err != nil || !found || r.pods == nil || !r.replicaSetsSynced(ctx) {
		return 0, "", err
	}
	sets, _, err := r.replicaSetsOf(ctx, app)
	if err != nil {
		return 0, "", err
	}
	facts := r.canaryFacts(d, sets, rec)
	// The volume sources a template waits for are the stable Deployment's to report; a canary
	// whose pods wait for one fails at its deadline to become available.
	if facts.Problems, err = r.rolloutProblems(ctx, app, d, ""); err != nil {
		return 0, "", err
	}
	f.CanaryReady, f.CanaryFailure, retry = rollout.CanaryPods(facts, desired.CanaryReplicas(stable, rec.Size))
	if f.CanaryFailure != nil && f.CanaryFailure.Problem != nil {
		f.CanaryFailure.Problem.Message = truncate(f.CanaryFailure.Problem.Message, 1024)
	}
	return retry, facts.Deployment.Current, nil
}

// confirmRise is the step machine's record for the facts f, the stored record (f.Record) when
// it moves requests to pods the API server does not show serving: a weight that rises (the
// canary Deployment must run its pods available, and the canary Service's EndpointSlices list
// them), and a promotion that gives the stable pods the requests back (their Service's
// EndpointSlices list them). Those facts are read from caches, and a cache that lags can show
// an older state that served: a canary Deployment that ran more pods, slices that listed pods
// of the same template from an earlier canary of it. A move is confirmed with the API server,
// as a rollback is. A return of the requests to the stable pods a promotion moved, aborted or
// given up for a newer template, needs them all back (f.StableRestored): unconfirmed, the
// record is decided again without that fact, so that an abort is still recorded.
func (r *MyAppReconciler) confirmRise(ctx context.Context, app *examplev1.MyApp, f rollout.CanaryFacts,
	stable int32, out *outcome) (*rollout.CanaryRecord, error) {
	prev, next := f.Record, rollout.Canary(f)
	if prev == nil || next == nil {
		return next, nil
	}
	if prev.StableMoved && next.Weight < prev.Weight && next.Phase != rollout.CanaryFinishing {
		back, err := r.stableRestoredLive(ctx, app, stable)
		if err != nil || back {
			return next, err
		}
		out.retryWithin(statusConflictRetry)
		f.StableRestored = false
		return rollout.Canary(f), nil
	}
	var serves bool
	var err error
	switch {
	case next.Weight > prev.Weight:
		serves, err = r.canaryServesLive(ctx, app, prev, stable)
	case next.Phase == rollout.CanaryFinishing && prev.Phase != rollout.CanaryFinishing && r.splitsByRoute(app):
		serves, err = r.listsLive(ctx, app, desired.StableName(app), app.Status.ReadyTemplate, 1)
	default:
		return next, nil
	}
	if err != nil || serves {
		return next, err
	}
	out.retryWithin(statusConflictRetry)
	return prev, nil
}

// canaryServesLive reads the canary Deployment from the API server and tells whether it runs,
// available, the pods the recorded size asks for, of the template under test, and, where a
// Gateway sends the canary its share, whether the canary Service's EndpointSlices as stored
// list them.
func (r *MyAppReconciler) canaryServesLive(ctx context.Context, app *examplev1.MyApp, rec *rollout.CanaryRecord, stable int32) (bool, error) {
	d, sets, err := r.liveDeployment(ctx, app, desired.CanaryName(app))
	if d == nil || err != nil {
		return false, err
	}
	facts := r.canaryFacts(d, sets, rec)
	want := desired.CanaryReplicas(stable, rec.Size)
	if ready, _, _ := rollout.CanaryPods(facts, want); !ready {
		return false, nil
	}
	if !r.splitsByRoute(app) {
		return true, nil
	}
	return r.listsLive(ctx, app, desired.CanaryName(app), facts.Deployment.Current, want)
}

// stableRestoredLive tells whether the stable pods are all back (rollout.CanaryFacts
// .StableRestored), read from the API server: the stable Deployment runs every pod of
// readyTemplate, available, and with a Gateway the stable pods' Service's EndpointSlices list
// want ready pods of it.
func (r *MyAppReconciler) stableRestoredLive(ctx context.Context, app *examplev1.MyApp, want int32) (bool, error) {
	d, sets, err := r.liveDeployment(ctx, app, app.Name)
	if d == nil || err != nil {
		return false, err
	}
	if !rollout.StableRestored(deploymentFacts(d, ownedSets(sets, d), ""), app.Status.ReadyTemplate) {
		return false, nil
	}
	if !r.splitsByRoute(app) {
		return true, nil
	}
	return r.listsLive(ctx, app, desired.StableName(app), app.Status.ReadyTemplate, want)
}

// liveDeployment reads the named Deployment from the API server, and the MyApp's ReplicaSets
// from the pod cache: nil when it does not exist or the MyApp does not control it.
func (r *MyAppReconciler) liveDeployment(ctx context.Context, app *examplev1.MyApp, name string) (*appsv1.Deployment, []metav1.PartialObjectMetadata, error) {
	d := &appsv1.Deployment{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: name}, d); err != nil {
		return nil, nil, client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(d, app) {
		return nil, nil, nil
	}
	sets, _, err := r.replicaSetsOf(ctx, app)
	if err != nil {
		return nil, nil, err
	}
	return d, sets, nil
}

// splitsByRoute says that the MyApp's requests reach its pods through an HTTPRoute, which
// splits them between the canary's Services by the recorded weight; otherwise the MyApp's
// Service sends to every pod, and a canary's share is its pods'.
func (r *MyAppReconciler) splitsByRoute(app *examplev1.MyApp) bool {
	return desired.ExposureOf(app, r.ExposeDefaults).Route && r.gateway.isServed()
}

// listsLive tells whether the Service's EndpointSlices, read from the API server, list every
// ready pod of the template hash, and at least least of them (listing.servesAll).
func (r *MyAppReconciler) listsLive(ctx context.Context, app *examplev1.MyApp, service, hash string, least int32) (bool, error) {
	l, known, err := r.serviceListing(ctx, r.APIReader, app, service, hash)
	return known && l.servesAll(least), err
}

// canaryFacts are the canary Deployment d's facts for the step machine (rollout.CanaryPods),
// judged against the record's template.
func (r *MyAppReconciler) canaryFacts(d *appsv1.Deployment, sets []metav1.PartialObjectMetadata, rec *rollout.CanaryRecord) rollout.Facts {
	return rollout.Facts{
		Spec:       rollout.Spec{Template: rec.Template},
		Deployment: deploymentFacts(d, ownedSets(sets, d), d.Annotations[canaryTemplateAnnotation]),
		Now:        r.now(), Grace: r.rolloutFailureGrace(),
	}
}

// routeFacts reads whether the recorded weight is in force, whether the canary Service lists
// the canary's pods (current, the canary Deployment's template; wantPods, the recorded size's)
// and whether the stable pods' Service selects and lists readyTemplate's pods: through a
// Gateway, from the HTTPRoute, the Services and their EndpointSlices as stored and the
// Gateway's controller's word on the route's generation; without one, the share is the
// canary's pods among the MyApp's, in force once they are ready (a weight of 0 always is: no
// route sends them anything).
func (r *MyAppReconciler) routeFacts(ctx context.Context, app *examplev1.MyApp, rec *rollout.CanaryRecord, current string, wantPods, stablePods int32,
	f *rollout.CanaryFacts) error {
	if !r.splitsByRoute(app) {
		f.WeightInForce, f.StableServed, f.CanaryListed = rec.Weight == 0 || f.CanaryReady, true, f.CanaryReady
		return nil
	}
	want := desired.ExposureOf(app, r.ExposeDefaults)
	if f.CanaryReady {
		canary, _, err := r.serviceListing(ctx, r.pods, app, desired.CanaryName(app), current)
		if err != nil {
			return err
		}
		f.CanaryListed = canary.servesAll(wantPods)
	}
	svc := &corev1.Service{}
	found, err := r.cachedChild(ctx, app, desired.StableName(app), svc)
	if err != nil {
		return err
	}
	if f.StableServed = found && app.Status.ReadyTemplate != "" &&
		svc.Spec.Selector[appsv1.DefaultDeploymentUniqueLabelKey] == app.Status.ReadyTemplate; f.StableServed {
		stable, _, err := r.serviceListing(ctx, r.pods, app, desired.StableName(app), app.Status.ReadyTemplate)
		if err != nil {
			return err
		}
		f.StableServed, f.StableRestored = stable.servesAll(1), f.StableRestored && stable.servesAll(stablePods)
	} else {
		f.StableRestored = false
	}
	route := &gatewayv1.HTTPRoute{}
	if found, err = r.readChild(ctx, r.routes, app, app.Name, route); err != nil || !found {
		return err
	}
	if !routeCarries(route, app, rec) {
		return nil
	}
	now := r.now()
	by, err := r.gateway.controllerOf(ctx, want.Gateway, now)
	if err != nil {
		log.FromContext(ctx).Error(err, "Could not tell which controller speaks for the Gateway; counting every controller's entry")
	}
	problem, _ := status.RouteProblem(route, want.Gateway, by, appliedAt(route), now)
	f.WeightInForce = problem == nil
	return nil
}

// canaryRoute is the HTTPRoute of a MyApp whose route splits for a canary: the weights of the
// record (none: 0 to the canary) and, with a record, its tag (canaryWeightAnnotation).
func canaryRoute(app *examplev1.MyApp, gw examplev1.GatewayReference, rec *rollout.CanaryRecord) *gatewayv1ac.HTTPRouteApplyConfiguration {
	weight := int32(0)
	if rec != nil {
		weight = rec.Weight
	}
	route := desired.CanaryHTTPRoute(app, gw, weight)
	if tag := canaryWeightTag(rec); tag != "" {
		route.WithAnnotations(map[string]string{canaryWeightAnnotation: tag})
	}
	return route
}

// routeCarries tells whether the route as read carries the record's weight: its one rule
// splits between the stable and the canary Services by that weight, and it was built from
// that record (canaryWeightAnnotation).
func routeCarries(route *gatewayv1.HTTPRoute, app *examplev1.MyApp, rec *rollout.CanaryRecord) bool {
	stableWeight, canaryWeight, split := routeWeights(route, desired.StableName(app), desired.CanaryName(app))
	return split && stableWeight == 100-rec.Weight && canaryWeight == rec.Weight &&
		route.Annotations[canaryWeightAnnotation] == canaryWeightTag(rec)
}

// routeWeights reads the weights of the route's backends to the stable and the canary Services;
// split is false unless its one rule sends to those two and nothing else.
func routeWeights(route *gatewayv1.HTTPRoute, stable, canary string) (stableWeight, canaryWeight int32, split bool) {
	if len(route.Spec.Rules) != 1 || len(route.Spec.Rules[0].BackendRefs) != 2 {
		return 0, 0, false
	}
	seen := 0
	for _, b := range route.Spec.Rules[0].BackendRefs {
		w := int32(1)
		if b.Weight != nil {
			w = *b.Weight
		}
		switch string(b.Name) {
		case stable:
			stableWeight, seen = w, seen|1
		case canary:
			canaryWeight, seen = w, seen|2
		}
	}
	return stableWeight, canaryWeight, seen == 3
}

// measure takes the measurements of the metric checks that are due while the canary has a
// weight (a canary nobody calls has nothing to measure), and says how soon the next is due.
func (r *MyAppReconciler) measure(ctx context.Context, app *examplev1.MyApp, plan *desired.CanaryPlan, rec *rollout.CanaryRecord,
	tallies map[string]analysis.Tally, now time.Time) (map[string]analysis.Tally, time.Duration) {
	if plan == nil || len(plan.Checks) == 0 || rec.Weight == 0 || r.CanaryAnalysis == nil ||
		rec.Phase == rollout.CanaryAborted || rec.Phase == rollout.CanaryFinishing {
		return tallies, 0
	}
	next := make(map[string]analysis.Tally, len(plan.Checks))
	var soonest time.Duration
	for _, c := range plan.Checks {
		t := tallies[c.Name]
		if due := analysis.Due(c, t, rec.StepStarted); !now.Before(due) {
			v, err := r.CanaryAnalysis.Query(ctx, c.Query, now)
			if err != nil {
				err = fmt.Errorf("%s", truncate(err.Error(), 1024))
			}
			t = analysis.Record(c, t, now, v, err)
			outcome := metrics.OutcomePass
			switch {
			case err != nil:
				outcome = metrics.OutcomeError
			case !analysis.Holds(c.Operator, v, c.Threshold):
				outcome = metrics.OutcomeFail
			}
			r.Metrics.CanaryMeasured(client.ObjectKeyFromObject(app), c.Name, outcome)
		}
		next[c.Name] = t
		if wait := analysis.Due(c, t, rec.StepStarted).Sub(now); soonest == 0 || wait < soonest {
			soonest = max(wait, time.Second)
		}
	}
	return next, soonest
}

// canaryRecheck is how soon the canary must be looked at again with no event to say so: when
// its timed pause ends.
func canaryRecheck(plan *desired.CanaryPlan, rec *rollout.CanaryRecord, now time.Time) time.Duration {
	if plan == nil || rec == nil || rec.Phase != rollout.CanaryProgressing || int(rec.Step) >= len(plan.Steps) {
		return 0
	}
	if p := plan.Steps[rec.Step].Pause; p > 0 && plan.Steps[rec.Step].Weight == 0 {
		return max(rec.StepStarted.Add(p).Sub(now), time.Second)
	}
	return 0
}

// canaryControl reads the manual control annotation: the control, and a digest of the whole
// value that the record keeps once it acted on it. A value that names no control acts on
// nothing.
func canaryControl(app *examplev1.MyApp) (rollout.CanaryControl, string) {
	value, ok := app.Annotations[examplev1.CanaryControlAnnotation]
	if !ok {
		return "", ""
	}
	control, _, _ := strings.Cut(strings.TrimSpace(value), "/")
	switch c := rollout.CanaryControl(control); c {
	case rollout.ControlPromote, rollout.ControlAbort, rollout.ControlPause, rollout.ControlResume:
		return c, status.Digest(value)
	}
	return "", ""
}

// recordCanary writes status.canary, guarded by the MyApp's resourceVersion: the canary's next
// step is stored before anything acts on it.
func (r *MyAppReconciler) recordCanary(ctx context.Context, app *examplev1.MyApp, next *examplev1.CanaryStatus) error {
	return r.recordStatus(ctx, app, "the canary's next step", func(s *examplev1.MyAppStatus) { s.Canary = next })
}

// recordStatus writes what set changes in the MyApp's status, guarded by its resourceVersion,
// before the operator acts on it: a MyApp changed since it was read (or gone) is a staleError,
// looked at again once the cache has caught up. On any failure app is as it was read; what
// names the record in the log.
func (r *MyAppReconciler) recordStatus(ctx context.Context, app *examplev1.MyApp, what string, set func(*examplev1.MyAppStatus)) error {
	before := app.DeepCopy()
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	set(&app.Status)
	if err := r.Status().Patch(ctx, app, patch); err != nil {
		app.Status, app.ResourceVersion = before.Status, before.ResourceVersion
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return &staleError{kind: "MyApp", name: app.Name}
		}
		log.FromContext(ctx).Info("Could not record "+what+"; looking again", "error", err.Error())
		return err
	}
	r.statusWrites.remember(client.ObjectKeyFromObject(app), app.ResourceVersion)
	return nil
}

// canaryEvents records one Normal event per step the canary took; its abort is the status's
// Warning (recordProblem).
func (r *MyAppReconciler) canaryEvents(app *examplev1.MyApp, plan *desired.CanaryPlan, prev, next *rollout.CanaryRecord) {
	steps := 0
	if plan != nil {
		steps = len(plan.Steps)
	}
	switch {
	case next == nil && prev != nil && prev.Phase == rollout.CanaryFinishing:
		r.Recorder.Event(app, corev1.EventTypeNormal, "CanaryPromoted", "The canary was promoted: the stable pods run its template and take every request")
	case next == nil:
	case prev == nil || prev.Template != next.Template || prev.Request != next.Request:
		r.Recorder.Event(app, corev1.EventTypeNormal, "CanaryStarted", fmt.Sprintf("A canary of the new pod template started: %d steps", steps))
	case next.Phase == rollout.CanaryAborted:
	case next.Phase != prev.Phase:
		r.Recorder.Event(app, corev1.EventTypeNormal, "Canary"+string(next.Phase), canaryMessage(next, steps))
	case next.Step != prev.Step || next.Weight != prev.Weight:
		r.Recorder.Event(app, corev1.EventTypeNormal, "CanaryStep", canaryMessage(next, steps))
	}
}

// canaryMessage says where the canary is.
func canaryMessage(rec *rollout.CanaryRecord, steps int) string {
	switch rec.Phase {
	case rollout.CanaryPromoting:
		return fmt.Sprintf("Promoting the canary: weight %d%%", rec.Weight)
	case rollout.CanaryFinishing:
		return "The stable pods run the canary's template and take the requests back"
	case rollout.CanaryPaused:
		return fmt.Sprintf("Step %d of %d, weight %d%%: paused until resumed or promoted (annotation %s)",
			min(int(rec.Step)+1, steps), steps, rec.Weight, examplev1.CanaryControlAnnotation)
	}
	return fmt.Sprintf("Step %d of %d, weight %d%%", min(int(rec.Step)+1, steps), steps, rec.Weight)
}

// canaryRecordOf reads the record and the tallies the status holds.
func canaryRecordOf(s *examplev1.CanaryStatus) (*rollout.CanaryRecord, map[string]analysis.Tally) {
	if s == nil {
		return nil, nil
	}
	rec := &rollout.CanaryRecord{Template: s.Template, Stable: s.Stable, Request: s.ReconcileRequest, Step: s.Step,
		Weight: s.Weight, Size: s.Size, StableMoved: s.StableMoved, StepStarted: s.StepStarted.Time,
		Phase: rollout.CanaryPhase(s.Phase), Control: s.Control, Reason: s.Reason, Message: s.Message}
	tallies := make(map[string]analysis.Tally, len(s.Analysis))
	for _, c := range s.Analysis {
		t := analysis.Tally{Measured: c.Measured, Failed: c.Failed, Errors: c.Errors, LastValue: c.LastValue,
			LastError: c.LastError, FailedValue: c.FailedValue, Error: c.Error}
		if c.LastTime != nil {
			t.LastAt = c.LastTime.Time
		}
		tallies[c.Name] = t
	}
	return rec, tallies
}

// canaryStatusOf is the status of the record and its tallies, in the order of the plan's checks.
func canaryStatusOf(rec *rollout.CanaryRecord, tallies map[string]analysis.Tally, plan *desired.CanaryPlan) *examplev1.CanaryStatus {
	if rec == nil {
		return nil
	}
	s := &examplev1.CanaryStatus{Template: rec.Template, Stable: rec.Stable, ReconcileRequest: rec.Request, Phase: string(rec.Phase),
		Step: rec.Step, Weight: rec.Weight, Size: rec.Size, StableMoved: rec.StableMoved,
		StepStarted: metav1.NewTime(rec.StepStarted.Truncate(time.Second)), Control: rec.Control, Reason: rec.Reason,
		Message: truncate(rec.Message, maxRollbackMessage)}
	if plan == nil {
		return s
	}
	for _, c := range plan.Checks {
		t, ok := tallies[c.Name]
		if !ok {
			continue
		}
		cs := examplev1.CanaryCheckStatus{Name: c.Name, Measured: t.Measured, Failed: t.Failed, Errors: t.Errors,
			LastValue: t.LastValue, LastError: truncate(t.LastError, 1024), FailedValue: t.FailedValue, Error: truncate(t.Error, 1024)}
		if !t.LastAt.IsZero() {
			cs.LastTime = ptrTo(metav1.NewTime(t.LastAt.Truncate(time.Second)))
		}
		s.Analysis = append(s.Analysis, cs)
	}
	return s
}

// applyCanary applies the canary Deployment the record asks for, or deletes it when no canary
// is recorded. It is built from the spec's Deployment, so it runs the template under test (the
// record restarts when the spec's template changes); while the spec's template is unknown (an
// input could not be read) it stays as it is.
func (r *MyAppReconciler) applyCanary(ctx context.Context, app *examplev1.MyApp, out *outcome, obs *status.Observed,
	look *canaryLook, intent *appsv1ac.DeploymentApplyConfiguration, p *pilot) {
	if look == nil || look.record == nil {
		out.add(r, app, obs, r.deleteChild(ctx, app, &out.changes, &appsv1.Deployment{}, desired.CanaryName(app)))
		return
	}
	specTemplate := ""
	if p != nil {
		specTemplate = p.facts.Spec.Template
	}
	if intent == nil || specTemplate == "" || specTemplate != look.record.Template {
		return
	}
	cfg := desired.CanaryDeployment(app, intent, look.plan, desired.CanaryReplicas(look.stableReplicas, look.record.Size))
	cfg.WithAnnotations(map[string]string{canaryTemplateAnnotation: look.record.Template})
	_, err := applyChild(ctx, r, app, &out.changes, deploymentKind, cfg, nil)
	out.add(r, app, obs, err)
}

// keepsStable says that the stable Deployment keeps the template that serves (look.stable) in
// place of the spec's; a look is made only when no selector migration runs.
func (look *canaryLook) keepsStable() bool { return look != nil && look.stable != nil }

// observation is what the status says of the canary; with no look (no canary asked for or
// recorded), the stored record.
func (look *canaryLook) observation(app *examplev1.MyApp) *status.Canary {
	if look == nil {
		return &status.Canary{Status: app.Status.Canary}
	}
	c := &status.Canary{Status: look.status, Unavailable: look.unavailable, Inconclusive: look.inconclusive,
		Held: look.unavailable && look.record == nil && look.stable != nil}
	if look.plan != nil {
		c.Steps = len(look.plan.Steps)
	}
	return c
}

// holdStable applies the stable Deployment (intent, the spec's; d as cached or nil) with the
// template that serves, stable, in place of the spec's, as a held rollback applies its target:
// the operator's intent for that template, so that fields other managers own stay theirs. The
// apply goes over d's version only: one decided from an older cache never undoes a promotion.
func (r *MyAppReconciler) holdStable(ctx context.Context, app *examplev1.MyApp, ch *changes, obs *status.Observed,
	d *appsv1.Deployment, intent *appsv1ac.DeploymentApplyConfiguration, stable *corev1ac.PodTemplateSpecApplyConfiguration, p *pilot) error {
	p.heldIntent = stable
	obs.Deployment, obs.DeploymentStale = d, true
	version := ""
	if d != nil {
		version = d.ResourceVersion
	}
	applied, err := r.applyTarget(ctx, app, ch, intent, stable, nil, guardedAt(version))
	if err != nil {
		return err
	}
	if metav1.IsControlledBy(applied.obj, app) {
		obs.Deployment = applied.obj
	}
	if applied.current {
		p.applied = templateDigest(stable)
	}
	return nil
}

// reconcileCanaryServices applies, for a MyApp with spec.canary exposed through a Gateway, the
// Services the route splits the requests between: the stable pods' (readyTemplate's) and the
// canary's. split says the route is to split, by the record it returns (none: no canary under
// way, 0 to the canary), once both are applied; before a template completed (nothing serves as the
// stable pods yet) the route sends to the MyApp's Service as without a canary, and they go.
func (r *MyAppReconciler) reconcileCanaryServices(ctx context.Context, app *examplev1.MyApp, obs *status.Observed, out *outcome) (rec *rollout.CanaryRecord, split bool) {
	look := out.canary
	if look == nil || look.plan == nil || app.Status.ReadyTemplate == "" {
		r.deleteCanaryServices(ctx, app, obs, out)
		return nil, false
	}
	stableSvc, canarySvc := desired.CanaryServices(app, app.Status.ReadyTemplate)
	_, err := applyChild(ctx, r, app, &out.changes, serviceKind, stableSvc, nil)
	out.add(r, app, obs, err)
	_, cerr := applyChild(ctx, r, app, &out.changes, serviceKind, canarySvc, nil)
	out.add(r, app, obs, cerr)
	if err != nil || cerr != nil {
		return nil, false
	}
	split, err = r.routeSplits(ctx, app)
	out.add(r, app, obs, err)
	return look.record, split
}

// routeSplits says whether the route is to split between the canary's Services: once it does
// as stored, and before that once the stable pods' Service lists every ready pod of
// readyTemplate, and at least one (the MyApp's Service may send to pods of another template
// while readyTemplate's are gone), read from the API server as a move of
// requests is (confirmRise). A route that split stays split: the stable pods' Service keeps
// selecting them.
func (r *MyAppReconciler) routeSplits(ctx context.Context, app *examplev1.MyApp) (bool, error) {
	route := &gatewayv1.HTTPRoute{}
	found, err := r.readChild(ctx, r.routes, app, app.Name, route)
	var notOwned *notOwnedError
	var predecessor *predecessorError
	var notSynced *notSyncedError
	switch {
	case errors.As(err, &notOwned) || errors.As(err, &predecessor) || errors.As(err, &notSynced):
		return false, nil // the route's apply says so
	case err != nil:
		return false, err
	}
	if _, _, split := routeWeights(route, desired.StableName(app), desired.CanaryName(app)); found && split {
		return true, nil
	}
	return r.listsLive(ctx, app, desired.StableName(app), app.Status.ReadyTemplate, 1)
}

// deleteCanaryServices deletes the canary's Services a MyApp no longer splits its route with.
func (r *MyAppReconciler) deleteCanaryServices(ctx context.Context, app *examplev1.MyApp, obs *status.Observed, out *outcome) {
	for _, name := range []string{desired.StableName(app), desired.CanaryName(app)} {
		out.add(r, app, obs, r.deleteChild(ctx, app, &out.changes, &corev1.Service{}, name))
	}
}
