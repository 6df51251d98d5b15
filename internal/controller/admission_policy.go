package controller

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	admissionregistrationv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/example/myapp-operator/internal/admission"
	"github.com/example/myapp-operator/internal/ssa"
)

// AdmissionPolicyReconciler keeps the operator's admission policy and its binding
// (internal/admission) as this version of the operator builds them: it applies both when the
// manager starts, and again when either is changed or deleted. A bundle cannot ship them (OLM
// installs only the kinds it knows), so the operator does, whichever way it was installed.
// Its grant, on these two names only, is config/rbac/admission_policy_role.yaml: a
// ClusterRole of its own, as the objects are cluster-scoped while the bundle grants the
// manager's other rules per namespace.
type AdmissionPolicyReconciler struct {
	Client client.Client
}

// policyRequest is the one request this controller handles: the policy and the binding share
// their name.
var policyRequest = reconcile.Request{NamespacedName: types.NamespacedName{Name: admission.Name}}

// Reconcile applies whichever of the two does not hold what the operator would apply.
// Reading them from the cache, a steady state sends no request.
func (r *AdmissionPolicyReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	if err := applyUnlessCarried(ctx, r.Client, policy, admission.Policy(), admissionregistrationv1ac.ExtractValidatingAdmissionPolicy); err != nil {
		return reconcile.Result{}, fmt.Errorf("the admission policy %s: %w", admission.Name, err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	if err := applyUnlessCarried(ctx, r.Client, binding, admission.Binding(), admissionregistrationv1ac.ExtractValidatingAdmissionPolicyBinding); err != nil {
		return reconcile.Result{}, fmt.Errorf("the admission policy binding %s: %w", admission.Name, err)
	}
	return reconcile.Result{}, nil
}

// applyUnlessCarried reads obj, by cfg's name, from the cache and applies cfg, forced, unless
// obj already carries it under the operator's field manager.
func applyUnlessCarried[T client.Object, AC runtime.ApplyConfiguration](ctx context.Context, c client.Client, obj T, cfg AC, extract ssa.Extractor[T, AC]) error {
	err := c.Get(ctx, client.ObjectKey{Name: ssa.NameOf(cfg)}, obj)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	default:
		same, err := ssa.Carries(obj, cfg, extract, FieldOwner)
		if err != nil || same {
			return err
		}
	}
	log.FromContext(ctx).Info("Applying the admission policy", "kind", fmt.Sprintf("%T", obj), "name", ssa.NameOf(cfg))
	uid := obj.GetUID()
	err = ssa.Apply(ctx, c, cfg, obj, FieldOwner, true)
	if !apierrors.IsInvalid(err) || uid == "" {
		return err
	}
	// A hand edit that a forced apply cannot undo: validationActions is a set, so applying Deny
	// over a hand-set Warn asks for both, which the API server refuses. The object is the
	// operator's alone: it starts again from nothing.
	log.FromContext(ctx).Info("Replacing the admission policy: applying over a hand edit was refused", "kind", fmt.Sprintf("%T", obj), "name", ssa.NameOf(cfg), "error", err.Error())
	if err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return err
	}
	return ssa.Apply(ctx, c, cfg, obj, FieldOwner, true)
}

// SetupWithManager runs the controller on the elected leader, like the MyApp controller.
func (r *AdmissionPolicyReconciler) SetupWithManager(mgr manager.Manager) error {
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == admission.Name })
	toPolicy := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{policyRequest}
	})
	return builder.ControllerManagedBy(mgr).
		Named("admissionpolicy").
		Watches(&admissionregistrationv1.ValidatingAdmissionPolicy{}, toPolicy, builder.WithPredicates(ours)).
		Watches(&admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, toPolicy, builder.WithPredicates(ours)).
		// Neither may exist yet, and then no watch event comes: one request at the start.
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			q.Add(policyRequest)
			return nil
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(r)
}
