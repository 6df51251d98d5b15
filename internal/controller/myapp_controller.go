// Package controller holds the MyApp reconciler: it fetches a MyApp, applies the children
// computed by package desired with server-side apply, and writes the status computed by
// package status, once, when it changed.
package controller

import (
	"context"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/status"
)

// FieldOwner is the field manager of every change the operator applies.
const FieldOwner = "myapp-operator"

// MyAppReconciler brings a MyApp's Deployment, Service and HorizontalPodAutoscaler to the
// state its spec asks for and reports what it observed in the MyApp's status.
type MyAppReconciler struct {
	// Client reads from the manager's cache, which holds only objects labelled as ours.
	client.Client
	// APIReader reads from the API server; it finds same-named objects the cache cannot see.
	APIReader client.Reader
	// Recorder records events on the MyApp. They are core/v1 Events: `kubectl describe` and
	// `kubectl events` show them, and OLM's bundle checks accept their RBAC rule.
	Recorder record.EventRecorder
}

// +kubebuilder:rbac:groups=example.com,resources=myapps,verbs=get;list;watch
// +kubebuilder:rbac:groups=example.com,resources=myapps/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=example.com,resources=myapps/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconcile applies the MyApp's children and updates its status.
func (r *MyAppReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	app := &examplev1.MyApp{}
	if err := r.Get(ctx, req.NamespacedName, app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !app.DeletionTimestamp.IsZero() {
		// The garbage collector removes the children through their owner references.
		return ctrl.Result{}, nil
	}

	obs := status.Observed{
		Selector: labels.SelectorFromSet(desired.SelectorLabels(app)).String(),
	}
	result, err := r.applyChildren(ctx, app, &obs)
	if serr := r.patchStatus(ctx, app, obs); serr != nil {
		return ctrl.Result{}, errors.Join(err, serr)
	}
	return result, err
}

// applyChildren applies the Service, the Deployment and the autoscaler in turn and stops at
// the first failure, which it records in obs. It returns an error only for failures worth
// retrying with backoff.
func (r *MyAppReconciler) applyChildren(ctx context.Context, app *examplev1.MyApp, obs *status.Observed) (ctrl.Result, error) {
	deployment, err := desired.Deployment(app)
	if err != nil {
		return r.fail(ctx, app, obs, err)
	}
	if err := r.applyChild(ctx, app, desired.Service(app), &corev1.Service{}); err != nil {
		return r.fail(ctx, app, obs, err)
	}

	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	hpaExists, err := r.getChild(ctx, app, app.Name, hpa)
	var notOwned *notOwnedError
	if errors.As(err, &notOwned) && !desired.AutoscalingEnabled(app) {
		// Someone else's autoscaler of that name: none is wanted, and it is not ours to delete.
		hpaExists, err = false, nil
	}
	if err != nil {
		return r.fail(ctx, app, obs, err)
	}
	if desired.AutoscalingEnabled(app) && !hpaExists {
		if err := r.handOverReplicas(ctx, app); err != nil {
			return r.fail(ctx, app, obs, err)
		}
	}

	live := &appsv1.Deployment{}
	if err := r.applyChild(ctx, app, deployment, live); err != nil {
		return r.fail(ctx, app, obs, err)
	}
	obs.Deployment = live

	if want := desired.HorizontalPodAutoscaler(app); want != nil {
		err = r.applyChild(ctx, app, want, hpa)
	} else if hpaExists {
		err = r.deleteChild(ctx, app, hpa)
	}
	if err != nil {
		return r.fail(ctx, app, obs, err)
	}
	return ctrl.Result{}, nil
}

// fail turns an error into the failure the status reports and an event, and decides
// whether to retry: transient errors return for backoff, errors the user must fix do not.
func (r *MyAppReconciler) fail(ctx context.Context, app *examplev1.MyApp, obs *status.Observed, err error) (ctrl.Result, error) {
	f := classify(err)
	obs.Failure = &f.Failure
	r.Recorder.Event(app, corev1.EventTypeWarning, f.Reason, err.Error())
	if f.retryAfter > 0 {
		return ctrl.Result{RequeueAfter: f.retryAfter}, nil
	}
	if f.transient {
		log.FromContext(ctx).Error(err, "Reconcile failed, retrying", "reason", f.Reason)
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// patchStatus computes the status from the observation and writes it only if it changed.
func (r *MyAppReconciler) patchStatus(ctx context.Context, app *examplev1.MyApp, obs status.Observed) error {
	next := status.Compute(app, obs, metav1.Now())
	if equality.Semantic.DeepEqual(app.Status, next) {
		return nil
	}
	patch := client.MergeFrom(app.DeepCopy())
	app.Status = next
	if err := r.Status().Patch(ctx, app, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

// SetupWithManager registers the reconciler. The MyApp is watched for spec changes only
// (its own status writes must not trigger it); the children are watched for every change,
// so that edits, deletions and status updates of a child reach its MyApp.
func (r *MyAppReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&examplev1.MyApp{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&autoscalingv2.HorizontalPodAutoscaler{}).
		Named("myapp").
		Complete(r)
}
