// Package controller holds the MyApp reconciler: it fetches a MyApp, applies the children
// computed by package desired with server-side apply, and writes the status computed by
// package status, once, when it changed.
package controller

import (
	"context"
	"errors"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/analysis"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/hostclaims"
	"github.com/example/myapp-operator/internal/metrics"
	"github.com/example/myapp-operator/internal/status"
)

// FieldOwner is the field manager of every change the operator applies.
const FieldOwner = "myapp-operator"

// MyAppReconciler brings a MyApp's Deployment, Service, HorizontalPodAutoscaler and
// PodDisruptionBudget to the state its spec asks for and reports what it observed in the
// MyApp's status.
type MyAppReconciler struct {
	// Client reads from the manager's cache, which holds only children labelled as ours and
	// the metadata of ConfigMaps (cache.go).
	client.Client
	// APIReader reads from the API server: a child the cache does not hold, the live
	// managedFields before a replica hand-over, the ReplicaSets of a 0.2.0 Deployment, and the
	// migration mark while a migration looks under way.
	APIReader client.Reader
	// Recorder records events on the MyApp. They are core/v1 Events: `kubectl describe` and
	// `kubectl events` show them, and OLM's bundle checks accept their RBAC rule.
	Recorder record.EventRecorder
	// MaxConcurrentReconciles is how many MyApps are reconciled at once (default 1).
	MaxConcurrentReconciles int
	// WatchNamespaces are the namespaces the manager's cache holds (nil: all); the pods'
	// cache (pods.go) holds the same.
	WatchNamespaces []string
	// Now is the clock of the status and of the deadlines (time.Now when nil).
	Now func() time.Time
	// RolloutFailureGrace is how long a problem of the pods of a new template must last, from
	// when the manager first saw it, before the operator rolls back
	// (status.DefaultRolloutFailureGrace when 0).
	RolloutFailureGrace time.Duration
	// Metrics, when set, receives each MyApp's status as gauges, and forgets a deleted MyApp.
	Metrics *metrics.MyApps
	// ExposeDefaults say how a spec.expose that names neither a Gateway nor an ingress class
	// is exposed (the manager's --expose-gateway and --expose-ingress-class flags).
	ExposeDefaults desired.ExposeDefaults
	// HostSuffixes are the host suffixes each namespace may claim in spec.expose.hosts (the
	// manager's --expose-host-suffixes); the zero value restricts nothing.
	HostSuffixes hostclaims.Suffixes
	// CanaryAnalysis evaluates the metric checks of canary releases (the Prometheus of the
	// manager's --canary-prometheus-url flag); nil when the manager has none, and a MyApp with
	// metric checks then starts no canary (CanaryAnalysisUnavailable).
	CanaryAnalysis analysis.Querier

	pods cache.Cache
	// routes reads the cache of the MyApps' HTTPRoutes, each read bounded (bounded_reads.go),
	// and gateway knows whether the cluster serves them (expose.go).
	routes  client.Reader
	gateway *gatewayAPI
	// podMonitorCache reads the MyApps' PodMonitors from the same cache, each read bounded,
	// and podMonitors knows whether the cluster serves them (podmonitors.go).
	podMonitorCache client.Reader
	podMonitors     *optionalAPI
	// certificateCache reads the MyApps' cert-manager Certificates from the same cache, each
	// read bounded, and certificates knows whether the cluster serves them (certificates.go).
	certificateCache client.Reader
	certificates     *optionalAPI
	// carried remembers which stored children carry their intent (carried.go).
	carried carriedIntents
	// statusWrites remembers the version of each MyApp's last status write (status_writes.go).
	statusWrites statusWrites
	// intents remembers the stored intents of templates that served (revisions.go), and
	// sightings when each problem of the pods was first seen (sightings.go).
	intents   intents
	sightings sightings
	// configDigests remembers the digests of referenced ConfigMaps' data (config.go).
	configDigests configDigests
	// secrets are the metadata-only watches of Secrets, per namespace granted (secrets.go).
	secrets *secretWatches
}

// The verbs below are the ones a code path sends; the ReplicaSet rules and the delete of
// Deployments serve only the selector migration from 0.2.0 (migration.go) and go with it.
// myapps/finalizers update lets the children's owner references set blockOwnerDeletion.

// +kubebuilder:rbac:groups=example.com,resources=myapps,verbs=get;list;watch
// +kubebuilder:rbac:groups=example.com,resources=myapps/status,verbs=patch
// +kubebuilder:rbac:groups=example.com,resources=myapps/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=list;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconcile applies the MyApp's children and updates its status. It is level-triggered: it
// reads the MyApp and its children as they are, whatever event queued it, and a reconcile
// with nothing to do sends no request.
func (r *MyAppReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	app := &examplev1.MyApp{}
	if err := r.Get(ctx, req.NamespacedName, app); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !app.DeletionTimestamp.IsZero() {
		// The garbage collector removes the children through their owner references.
		r.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	if app.Spec.Canary != nil || app.Status.Canary != nil || app.Spec.Expose != nil || app.Status.Exposure != nil {
		// A canary's children follow status.canary, and an exposed MyApp's hosts the claims
		// status.exposure records: decided from a MyApp older than the operator's last write,
		// they would follow a record already replaced (a claim would look unrecorded, and
		// younger than it is).
		switch current, err := r.cacheCurrent(ctx, app); {
		case err != nil:
			return ctrl.Result{}, client.IgnoreNotFound(err)
		case !current:
			return ctrl.Result{RequeueAfter: statusConflictRetry}, nil
		}
	}

	now := r.now()
	obs := status.Observed{
		Selector:         labels.SelectorFromSet(desired.SelectorLabels(app)).String(),
		ReconcileRequest: app.Annotations[examplev1.ReconcileRequestAnnotation],
	}
	if app.Spec.Expose != nil {
		// The claims stay recorded unless judgeClaims decides again: a reconcile that stops
		// before it must not make a held host look new.
		obs.Exposure = app.Status.Exposure.DeepCopy()
	}
	out := &outcome{}
	r.reconcileChildren(ctx, app, &obs, out, now)
	r.reconcileExposure(ctx, app, &obs, out)
	pods, retry, err := r.observePods(ctx, app, obs.Deployment)
	out.add(r, app, &obs, err)
	out.retryWithin(retry)
	obs.Pods = pods
	retry, err = r.autoPilot(ctx, app, &out.changes, &obs, out.deployment, out.pilot)
	out.add(r, app, &obs, err)
	out.retryWithin(retry)
	out.changes.emit(r, app)
	out.retryWithin(status.RecheckAfter(obs, metav1.NewTime(now)))
	switch err := r.patchStatus(ctx, app, obs, now, out.details); {
	case apierrors.IsConflict(err):
		// The cached MyApp was older than the stored one; look again once the cache has it.
		out.retryWithin(statusConflictRetry)
	case err != nil:
		out.errs = append(out.errs, err)
	default:
		r.recordMetrics(app, obs)
	}
	return out.result()
}

// recordMetrics hands the status just written (or found unchanged) to the metrics.
func (r *MyAppReconciler) recordMetrics(app *examplev1.MyApp, obs status.Observed) {
	if r.Metrics == nil {
		return
	}
	var want *int32
	if obs.Deployment != nil {
		want = obs.Deployment.Spec.Replicas
	}
	r.Metrics.Record(app, want)
}

// forget drops what the reconciler keeps of a MyApp that is gone or going: its metrics and
// what its children were known to carry.
func (r *MyAppReconciler) forget(key types.NamespacedName) {
	r.carried.forget(key)
	r.statusWrites.forget(key)
	r.sightings.forget(key)
	r.intents.forget(key)
	if r.Metrics != nil {
		r.Metrics.Forget(key)
	}
}

// statusConflictRetry is how soon a reconcile whose status write met a newer MyApp runs again.
const statusConflictRetry = 200 * time.Millisecond

func (r *MyAppReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// reconcileChildren brings every child to its intent. One child failing does not stop the
// others: each failure is recorded, and the status counts still come from the Deployment.
func (r *MyAppReconciler) reconcileChildren(ctx context.Context, app *examplev1.MyApp, obs *status.Observed, out *outcome, now time.Time) {
	phase, legacy := r.migrationPhase(ctx, app)
	migrating := phase != migrationNone
	// While a 0.2.0 Deployment is replaced, its pods serve and the Deployment observed is
	// not the one the spec asks for in the end: the MyApp is not Ready before the migration
	// has finished.
	defer func() {
		if migrating && obs.Waiting == &migrationWaiting {
			obs.DeploymentStale = true
		}
	}()
	_, err := applyChild(ctx, r, app, &out.changes, serviceKind, desired.Service(app, migrating), nil)
	out.add(r, app, obs, err)
	serviceApplied := err == nil

	cached := &appsv1.Deployment{}
	if found, err := r.cachedChild(ctx, app, app.Name, cached); err != nil || !found {
		cached = nil
	}
	files, hashes, inputsRead, kept := r.templateInputs(ctx, app, out, obs, cached)
	deployment, err := r.deploymentIntent(app, phase == migrationReplacing, cached, hashes)
	out.add(r, app, obs, err)
	p, err := r.rolloutBefore(ctx, app, cached, deployment, inputsRead, kept)
	out.add(r, app, obs, err)
	obs.ReadyTemplate = app.Status.ReadyTemplate
	look := r.decideCanary(ctx, app, obs, out, cached, deployment, p, err == nil && phase == migrationNone)
	held := false
	switch {
	case err != nil:
		// The rollback in force is not known: the Deployment stays as it is until it is.
		obs.RolledBack, obs.Deployment, obs.DeploymentStale, held = app.Status.RolledBack, cached, true, true
		p = nil
	case !inputsRead:
		// Without its inputs the template the spec asks for is not known: a rollback in force
		// stays in force, and the running Deployment stays as it is (below).
		obs.RolledBack = p.held
	case p.held != nil && phase == migrationNone && deployment != nil:
		// The template the spec asks for failed and was rolled back (rollback.go): it is not
		// tried again until the spec asks for another or a reconcile is requested.
		held, err = r.holdRollback(ctx, app, &out.changes, obs, cached, deployment, p)
		out.add(r, app, obs, err)
	case look.keepsStable() && deployment != nil:
		// A canary release keeps the stable pods on the template that serves (canary.go).
		held, err = true, r.holdStable(ctx, app, &out.changes, obs, cached, deployment, look.stable, p)
		out.add(r, app, obs, err)
	}
	out.deployment, out.pilot = deployment, p
	switch {
	case held:
	case phase == migrationOrphaning:
		obs.Deployment = legacy
		if serviceApplied {
			out.add(r, app, obs, r.orphanLegacyDeployment(ctx, app, legacy))
		}
		obs.Waiting = &migrationWaiting
	case deployment != nil && !inputsRead:
		// The running Deployment keeps its template, and its files, until the new files exist
		// and the ConfigMaps it references could be read.
		obs.Deployment, obs.DeploymentStale = cached, true
	case deployment != nil:
		if phase == migrationReplacing && desired.AutoscalingEnabled(app) {
			out.add(r, app, obs, r.keepLegacyCount(ctx, app, deployment))
		}
		d, err := applyChild(ctx, r, app, &out.changes, deploymentKind, deployment, func(*appsv1.Deployment) error {
			if deployment.Spec.Replicas == nil {
				return r.holdReplicas(ctx, app)
			}
			return nil
		}, guarded)
		out.add(r, app, obs, err)
		if metav1.IsControlledBy(d.obj, app) {
			obs.Deployment = d.obj
			obs.DeploymentStale = !d.current
		} else if err != nil {
			obs.Deployment, obs.DeploymentStale = cached, true
		}
		if d.current && p != nil {
			p.applied = p.facts.Spec.Template
		}
		if phase == migrationReplacing {
			retry, err := r.finishMigration(ctx, app, obs, serviceApplied, now)
			out.add(r, app, obs, err)
			out.retryWithin(retry)
			// Finished: the children below take their selector without the 0.2.0 pods, as
			// finishMigration applied them.
			if err == nil && obs.Waiting == nil {
				migrating = false
			}
		}
	default:
		// The spec cannot be built into a Deployment; the one that runs still gives the counts,
		// and does not run the current spec.
		obs.Deployment, obs.DeploymentStale = cached, true
	}

	r.applyCanary(ctx, app, out, obs, look, deployment, p)
	r.reconcileServedWithout(ctx, app, obs, out, migrating, files, p, now)
}

// reconcileServedWithout brings to their intent the children the app serves without: its
// autoscaler, its disruption budget and the deletion of files ConfigMaps no longer mounted.
// Their problems are Degraded while it does (status.Failure.ServedWithout).
func (r *MyAppReconciler) reconcileServedWithout(ctx context.Context, app *examplev1.MyApp, obs *status.Observed, out *outcome,
	migrating bool, files *desired.Files, p *pilot, now time.Time) {
	optional := len(obs.Failures)
	if want := desired.HorizontalPodAutoscaler(app); want != nil {
		h, err := applyChild(ctx, r, app, &out.changes, autoscalerKind, want, nil)
		out.add(r, app, obs, err)
		if metav1.IsControlledBy(h.obj, app) {
			obs.Autoscaler = h.obj
		}
	} else {
		out.add(r, app, obs, r.deleteChild(ctx, app, &out.changes, &autoscalingv2.HorizontalPodAutoscaler{}, app.Name))
	}
	switch want, err := desired.PodDisruptionBudget(app, migrating); {
	case err != nil:
		// The spec cannot be built into a budget: the one applied last, if any, keeps
		// protecting the pods until the user fixes the spec.
		out.add(r, app, obs, err)
	case want != nil:
		_, err := applyChild(ctx, r, app, &out.changes, budgetKind, want, nil)
		out.add(r, app, obs, err)
	default:
		out.add(r, app, obs, r.deleteChild(ctx, app, &out.changes, &policyv1.PodDisruptionBudget{}, app.Name))
	}
	if want := desired.NetworkPolicy(app, migrating); want != nil {
		_, err := applyChild(ctx, r, app, &out.changes, networkPolicyKind, want, nil)
		out.add(r, app, obs, err)
	} else {
		out.add(r, app, obs, r.deleteChild(ctx, app, &out.changes, &networkingv1.NetworkPolicy{}, app.Name))
	}
	r.reconcileMetrics(ctx, app, obs, out)
	var keep []string
	if files != nil {
		keep = append(keep, files.Hash)
	}
	if p != nil && p.heldIntent != nil && p.heldIntent.ObjectMetaApplyConfiguration != nil {
		// The template a rollback holds mounts its own files, which a Deployment made again
		// after its deletion needs before any ReplicaSet of it mounts them.
		keep = append(keep, p.heldIntent.Labels[desired.LabelFiles])
	}
	retry, err := r.collectFiles(ctx, app, &out.changes, obs.Deployment, keep, now)
	out.add(r, app, obs, err)
	out.retryWithin(retry)
	for i := optional; i < len(obs.Failures); i++ {
		obs.Failures[i].ServedWithout = true
	}
}

// templateInputs makes ready what the pod template takes besides the spec: the files
// ConfigMap, which comes before the Deployment that mounts it (a template that mounts a
// ConfigMap the API server did not take would start pods that cannot run), and the hashes of
// the ConfigMaps and Secrets the MyApp rolls out on. read is false when any failed (the failure
// recorded); kept is true while a hash is the running one, kept for a missing ConfigMap or
// Secret: the template the spec asks for is not known then either.
func (r *MyAppReconciler) templateInputs(ctx context.Context, app *examplev1.MyApp, out *outcome, obs *status.Observed,
	cached *appsv1.Deployment) (files *desired.Files, hashes desired.ConfigHashes, read, kept bool) {
	files, filesErr := desired.FilesOf(app)
	read = true
	if filesErr == nil && files != nil {
		err := r.ensureFiles(ctx, app, &out.changes, files)
		out.add(r, app, obs, err)
		read = err == nil
	}
	var keptConfig, keptSecrets bool
	var err error
	hashes.ConfigMaps, keptConfig, err = r.configHash(ctx, app, cached)
	out.add(r, app, obs, err)
	read = read && err == nil
	hashes.Secrets, keptSecrets, err = r.secretHash(ctx, app, cached)
	out.add(r, app, obs, err)
	read = read && err == nil
	return files, hashes, read, keptConfig || keptSecrets
}

// deploymentIntent is the Deployment the MyApp wants, carrying the migration mark while
// migrating, and the replica count and hand-over annotations desired.Replicas decides from
// the MyApp and the Deployment as stored (replicas.go). cached is the Deployment the cache
// holds, or nil.
func (r *MyAppReconciler) deploymentIntent(app *examplev1.MyApp, migrating bool, cached *appsv1.Deployment, hashes desired.ConfigHashes) (*appsv1ac.DeploymentApplyConfiguration, error) {
	deployment, err := desired.Deployment(app, migrating)
	if err != nil {
		return nil, err
	}
	desired.WithConfigHashes(deployment, hashes)
	replicas := desired.Replicas(app, deploymentReplicas(cached))
	deployment.Spec.Replicas = replicas.Replicas
	deployment.WithAnnotations(map[string]string{desired.AnnotationReplicas: replicas.Annotation})
	return deployment, nil
}

// The kinds of children, with the function that reads back what the operator owns of each.
var (
	deploymentKind = childKind[*appsv1.Deployment, *appsv1ac.DeploymentApplyConfiguration]{name: kindDeployment,
		newObj: func() *appsv1.Deployment { return &appsv1.Deployment{} }, extract: appsv1ac.ExtractDeployment}
	serviceKind = childKind[*corev1.Service, *corev1ac.ServiceApplyConfiguration]{name: kindService,
		newObj: func() *corev1.Service { return &corev1.Service{} }, extract: corev1ac.ExtractService}
	autoscalerKind = childKind[*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration]{name: kindAutoscaler,
		newObj:  func() *autoscalingv2.HorizontalPodAutoscaler { return &autoscalingv2.HorizontalPodAutoscaler{} },
		extract: autoscalingv2ac.ExtractHorizontalPodAutoscaler}
	budgetKind = childKind[*policyv1.PodDisruptionBudget, *policyv1ac.PodDisruptionBudgetApplyConfiguration]{name: kindBudget,
		newObj:  func() *policyv1.PodDisruptionBudget { return &policyv1.PodDisruptionBudget{} },
		extract: policyv1ac.ExtractPodDisruptionBudget}
	networkPolicyKind = childKind[*networkingv1.NetworkPolicy, *networkingv1ac.NetworkPolicyApplyConfiguration]{name: kindNetworkPolicy,
		newObj:  func() *networkingv1.NetworkPolicy { return &networkingv1.NetworkPolicy{} },
		extract: networkingv1ac.ExtractNetworkPolicy}
)

// outcome gathers what the children's reconciles met and decides how to retry.
type outcome struct {
	changes    changes
	errs       []error
	retryAfter time.Duration
	// details are the API server's own words for the problems the status states in the
	// operator's, by reason, for the Warning event that reports them.
	details map[string]string
	// deployment is the Deployment the spec asks for, for the auto-pilot (nil when the spec
	// cannot be built into one), and pilot what the auto-pilot gathered before its apply.
	deployment *appsv1ac.DeploymentApplyConfiguration
	pilot      *pilot
	// canary is what this reconcile decided of the MyApp's canary release, nil when it has
	// none (canary.go).
	canary *canaryLook
}

// add records err, if any: in the observation for the status, as a warning event, and as
// the retry it calls for. Transient errors are returned to controller-runtime, which logs
// them once and retries with backoff; errors the user must fix are not (no backoff loop).
func (o *outcome) add(r *MyAppReconciler, app *examplev1.MyApp, obs *status.Observed, err error) {
	if err == nil {
		return
	}
	if stale := (*staleError)(nil); errors.As(err, &stale) {
		// A decision made from a cache older than the stored object: no problem to report,
		// only a look again once the cache has caught up.
		o.retryWithin(statusConflictRetry)
		return
	}
	f := classify(err)
	if f.detail != "" {
		if o.details == nil {
			o.details = map[string]string{}
		}
		if d := o.details[f.Reason]; d != "" {
			f.detail = d + "; " + f.detail
		}
		o.details[f.Reason] = f.detail
	}
	if f.waiting {
		obs.Waiting = &f.Failure
	} else {
		obs.Failures = append(obs.Failures, f.Failure)
	}
	if f.transient {
		// Problems the user must fix get one event when the status reports them
		// (recordProblem); a transient one, one at each failed attempt, with its error.
		r.Recorder.Event(app, corev1.EventTypeWarning, f.Reason, err.Error())
		o.errs = append(o.errs, err)
	}
	o.retryWithin(f.retryAfter)
}

// retryWithin makes the reconcile run again within d at the latest (d = 0: no need).
func (o *outcome) retryWithin(d time.Duration) {
	if d > 0 && (o.retryAfter == 0 || d < o.retryAfter) {
		o.retryAfter = d
	}
}

func (o *outcome) result() (ctrl.Result, error) {
	if len(o.errs) > 0 {
		return ctrl.Result{}, errors.Join(o.errs...)
	}
	return ctrl.Result{RequeueAfter: o.retryAfter}, nil
}

// patchStatus computes the status from the observation and writes it only if it changed. The
// patch carries the resourceVersion it was computed from: a merge patch from a stale copy
// would leave out every field whose new value equals the stale one, and keep a newer, wrong
// value on the server; with the resourceVersion, the API server refuses such a patch
// (Conflict) and the reconcile looks again.
func (r *MyAppReconciler) patchStatus(ctx context.Context, app *examplev1.MyApp, obs status.Observed, now time.Time, details map[string]string) error {
	next := status.Compute(app, obs, metav1.NewTime(now))
	key := client.ObjectKeyFromObject(app)
	unchanged := equality.Semantic.DeepEqual(app.Status, next)
	if unchanged && r.statusWrites.current(key, app.ResourceVersion) {
		return nil
	}
	// Changed, or unchanged from a cached MyApp that may predate the last write: then the
	// patch is empty but for the resourceVersion, and confirms that the cache is current.
	before := app.DeepCopy()
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	app.Status = next
	if err := r.Status().Patch(ctx, app, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.statusWrites.remember(key, app.ResourceVersion)
	if !unchanged {
		r.recordProblem(app, before.Status.Conditions, details)
	}
	return nil
}

// cacheCurrent tells whether the cached MyApp holds the status the operator last wrote. The
// cache may not hold the operator's own last write yet; until the cached version is the one
// that write produced (statusWrites), an empty status patch guarded by the cached
// resourceVersion asks the API server: it conflicts when the cache is stale, and changes
// nothing otherwise.
func (r *MyAppReconciler) cacheCurrent(ctx context.Context, app *examplev1.MyApp) (bool, error) {
	key := client.ObjectKeyFromObject(app)
	if r.statusWrites.current(key, app.ResourceVersion) {
		return true, nil
	}
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	switch err := r.Status().Patch(ctx, app, patch); {
	case apierrors.IsConflict(err):
		return false, nil
	case err != nil:
		return false, err
	}
	r.statusWrites.remember(key, app.ResourceVersion)
	return true, nil
}

// SetupWithManager registers the reconciler. The MyApp is watched for spec changes, reconcile
// requests and resyncs (not for its own status writes); the children for the changes that
// can move the MyApp's status or intent (see predicates.go), the operator's own writes
// included: the reconcile they queue finds nothing to do and sends nothing.
func (r *MyAppReconciler) SetupWithManager(mgr ctrl.Manager) error {
	b, err := r.setupPods(mgr, ctrl.NewControllerManagedBy(mgr))
	if err != nil {
		return err
	}
	c, err := b.
		For(&examplev1.MyApp{}, builder.WithPredicates(myAppChanged)).
		Owns(&appsv1.Deployment{}, builder.WithPredicates(childChanged(deploymentStatusChanged))).
		Owns(&corev1.Service{}, builder.WithPredicates(childChanged(nil))).
		Owns(&autoscalingv2.HorizontalPodAutoscaler{}, builder.WithPredicates(childChanged(autoscalerStatusChanged))).
		Owns(&policyv1.PodDisruptionBudget{}, builder.WithPredicates(childChanged(nil))).
		Owns(&networkingv1.Ingress{}, builder.WithPredicates(childChanged(nil))).
		Owns(&networkingv1.NetworkPolicy{}, builder.WithPredicates(childChanged(nil))).
		Owns(&corev1.ConfigMap{}, builder.OnlyMetadata, builder.WithPredicates(childChanged(nil))).
		Watches(&corev1.ConfigMap{}, r.referencedChanged(configMapsWatched, r.configDigests.forget), builder.OnlyMetadata).
		Watches(&examplev1.MyApp{}, r.hostClaimants()).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.MaxConcurrentReconciles, 1)}).
		Named("myapp").
		Build(r)
	if err != nil {
		return err
	}
	if err := r.setupSecrets(mgr, c); err != nil {
		return err
	}
	return r.setupRoutes(mgr, c)
}
