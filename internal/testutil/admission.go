package testutil

import (
	"context"
	"fmt"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/myapp-operator/internal/admission"
	"github.com/example/myapp-operator/internal/ssa"
)

// InstallAdmissionPolicy applies the operator's admission policy and its binding, as the
// operator does when it starts, and waits until the API server enforces it: the policy is
// loaded by an informer of the API server, a moment after it is stored.
func InstallAdmissionPolicy(ctx context.Context, c client.Client) error {
	if err := ssa.Apply(ctx, c, admission.Policy(), &admissionregistrationv1.ValidatingAdmissionPolicy{}, "myapp-operator", true); err != nil {
		return fmt.Errorf("applying the admission policy: %w", err)
	}
	if err := ssa.Apply(ctx, c, admission.Binding(), &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, "myapp-operator", true); err != nil {
		return fmt.Errorf("applying the admission policy's binding: %w", err)
	}
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "MyApp",
		"metadata": map[string]any{"namespace": "default", "name": "admission-policy-probe"},
		"spec": map[string]any{"image": "nginx", "podSecurityContext": map[string]any{
			"sysctls": []any{map[string]any{"name": "Not_A_Sysctl", "value": "1"}}}},
	}}
	deadline := time.Now().Add(time.Minute)
	for {
		err := c.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		if apierrors.IsInvalid(err) && strings.Contains(err.Error(), "sysctl name") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the API server does not enforce the admission policy after a minute: creating a MyApp with an invalid sysctl name answered %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
