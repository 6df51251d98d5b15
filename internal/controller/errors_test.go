package controller

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

func TestClassify(t *testing.T) {
	deployments := schema.GroupResource{Group: "apps", Resource: "deployments"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web",
		field.ErrorList{field.Invalid(field.NewPath("spec", "template"), "x", "bad")})

	cases := map[string]struct {
		err        error
		reason     string
		transient  bool
		retryLater bool
	}{
		"invalid spec": {
			err:    &desired.InvalidSpecError{Field: "spec.resources.limits.cpu", Message: "bad"},
			reason: examplev1.ReasonInvalidSpec,
		},
		"not owned": {
			err:        &notOwnedError{kind: "Service", name: "web"},
			reason:     examplev1.ReasonChildNotOwned,
			retryLater: true,
		},
		"child rejected": {
			err:        &applyError{kind: "Deployment", name: "web", err: invalid},
			reason:     examplev1.ReasonChildRejected,
			retryLater: true,
		},
		"forbidden, e.g. by a quota": {
			err:        &applyError{kind: "Deployment", name: "web", err: apierrors.NewForbidden(deployments, "web", errors.New("exceeded quota"))},
			reason:     examplev1.ReasonChildRejected,
			retryLater: true,
		},
		"apply failed for a passing reason": {
			err:       &applyError{kind: "Deployment", name: "web", err: apierrors.NewServiceUnavailable("etcd is slow")},
			reason:    examplev1.ReasonApplyFailed,
			transient: true,
		},
		"read failed": {
			err:       apierrors.NewTimeoutError("slow", 1),
			reason:    examplev1.ReasonApplyFailed,
			transient: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			f := classify(tc.err)
			g.Expect(f.Reason).To(Equal(tc.reason))
			g.Expect(f.Message).NotTo(BeEmpty())
			g.Expect(f.transient).To(Equal(tc.transient))
			if tc.retryLater {
				g.Expect(f.retryAfter).To(BeNumerically(">", 0))
			} else {
				g.Expect(f.retryAfter).To(BeZero())
			}
			if tc.transient {
				// Raw errors go to events and logs; the status message stays stable.
				g.Expect(f.Message).NotTo(ContainSubstring(tc.err.Error()))
			}
		})
	}
}
