package deploy

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/myapp-operator/internal/admission"
	"github.com/example/myapp-operator/internal/ssa"
)

// TestManagerKeepsOnlyItsAdmissionPolicy installs config/default's cluster-wide RBAC on a
// real API server (envtest) and acts as the manager's ServiceAccount: it must be able to
// create, apply again, list by name and delete its admission policy and binding, as the
// operator's cache and controller do, and not list every policy or create one of another name.
func TestManagerKeepsOnlyItsAdmissionPolicy(t *testing.T) {
	b := buildDefault(t)
	d := b.deployment
	cfg, admin := startAPIServer(t)
	ctx := context.Background()
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: d.Namespace}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range b.others {
		if o.GetKind() == "ClusterRole" || o.GetKind() == "ClusterRoleBinding" {
			if err := admin.Create(ctx, o.DeepCopy()); err != nil {
				t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	}

	asManager := rest.CopyConfig(cfg)
	asManager.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + d.Namespace + ":" + d.Spec.Template.Spec.ServiceAccountName,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + d.Namespace, "system:authenticated"},
	}
	manager, err := client.New(asManager, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	policy, binding := &admissionregistrationv1.ValidatingAdmissionPolicy{}, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	for round, what := range []string{"create", "apply again"} {
		if err := ssa.Apply(ctx, manager, admission.Policy(), policy, "myapp-operator", true); err != nil {
			t.Errorf("%s the admission policy as the manager (round %d): %v", what, round, err)
		}
		if err := ssa.Apply(ctx, manager, admission.Binding(), binding, "myapp-operator", true); err != nil {
			t.Errorf("%s the admission policy's binding as the manager (round %d): %v", what, round, err)
		}
	}
	byName := client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", admission.Name)}
	if err := manager.List(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyList{}, byName); err != nil {
		t.Errorf("listing the admission policy by name as the manager: %v", err)
	}
	if err := manager.List(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{}, byName); err != nil {
		t.Errorf("listing the binding by name as the manager: %v", err)
	}

	// A hand edit a forced apply cannot undo is replaced: delete, then apply.
	for _, obj := range []client.Object{binding, policy} {
		uid := obj.GetUID()
		if err := manager.Delete(ctx, obj, client.Preconditions{UID: &uid}); err != nil {
			t.Errorf("deleting the %T as the manager: %v", obj, err)
		}
	}
	if err := ssa.Apply(ctx, manager, admission.Policy(), policy, "myapp-operator", true); err != nil {
		t.Errorf("applying the admission policy again after deleting it, as the manager: %v", err)
	}

	// What the grant must not allow: every policy, or a policy of another name.
	if err := manager.List(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyList{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing every admission policy as the manager: want Forbidden, got %v", err)
	}
	other := admission.Policy().WithName("someone-elses-policy")
	if err := ssa.Apply(ctx, manager, other, &admissionregistrationv1.ValidatingAdmissionPolicy{}, "myapp-operator", true); !apierrors.IsForbidden(err) {
		t.Errorf("creating an admission policy of another name as the manager: want Forbidden, got %v", err)
	}
}
