package controller

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		"refused by a webhook that gives a code and no reason": {
			err:        &applyError{kind: "Deployment", name: "web", err: statusError(metav1.Status{Code: http.StatusForbidden, Message: "denied"})},
			reason:     examplev1.ReasonChildRejected,
			retryLater: true,
		},
		"a request the API server cannot read": {
			err:        &applyError{kind: "Deployment", name: "web", err: apierrors.NewBadRequest("bad")},
			reason:     examplev1.ReasonChildRejected,
			retryLater: true,
		},
		"an apply the API server cannot make into a typed object (a list-map key twice)": {
			err:        &applyError{kind: "Deployment", name: "web", err: statusError(metav1.Status{Code: http.StatusInternalServerError, Message: "duplicate entries"})},
			reason:     examplev1.ReasonChildRejected,
			retryLater: true,
		},
		"an internal error of the API server or a webhook call": {
			err:       &applyError{kind: "Deployment", name: "web", err: apierrors.NewInternalError(errors.New("webhook unreachable"))},
			reason:    examplev1.ReasonApplyFailed,
			transient: true,
		},
		"a timeout": {
			err:       &applyError{kind: "Deployment", name: "web", err: apierrors.NewServerTimeout(deployments, "patch", 1)},
			reason:    examplev1.ReasonApplyFailed,
			transient: true,
		},
		"too many requests": {
			err:       &applyError{kind: "Deployment", name: "web", err: apierrors.NewTooManyRequests("slow down", 1)},
			reason:    examplev1.ReasonApplyFailed,
			transient: true,
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

// statusError is an answer of the API server as client-go hands it over.
func statusError(s metav1.Status) error {
	s.Status = metav1.StatusFailure
	return &apierrors.StatusError{ErrStatus: s}
}

// TestRejectionMessage: the ChildRejected message names the child and each refused field,
// with the MyApp field it comes from, from the refusal's structured fields only: the same
// refusal worded otherwise gives the same message.
func TestRejectionMessage(t *testing.T) {
	deployment := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	cases := map[string]struct {
		err  error
		want string
	}{
		"invalid, with causes in the API server's order": {
			err: apierrors.NewInvalid(deployment, "web", field.ErrorList{
				field.Invalid(field.NewPath("spec", "template", "spec", "topologySpreadConstraints").Index(0).Child("maxSkew"), 0, "must be greater than zero"),
				field.Required(field.NewPath("spec", "template", "spec", "containers").Index(0).Child("resources", "limits"), "Limit must be set"),
			}),
			want: "The API server rejected Deployment web: " +
				"spec.template.spec.containers[0].resources.limits (from the MyApp's spec.resources.limits) is required; " +
				"spec.template.spec.topologySpreadConstraints[0].maxSkew (from the MyApp's spec.topologySpreadConstraints[0].maxSkew) has an invalid value",
		},
		"refused by a policy naming a field, without a cause type": {
			err: statusError(metav1.Status{Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid, Message: "denied by policy",
				Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Field: "spec.template.metadata.labels", Message: "no"}}}}),
			want: "The API server rejected Deployment web: spec.template.metadata.labels (from the MyApp's spec.podLabels) is refused",
		},
		"forbidden by a quota": {
			err: apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web",
				errors.New("exceeded quota: q, requested: count/deployments.apps=1, used: count/deployments.apps=3, limited: count/deployments.apps=3")),
			want: "The API server rejected Deployment web: an admission check of the namespace forbids it (a ResourceQuota, " +
				"a LimitRange, Pod Security or an admission policy); the ChildRejected event says which",
		},
		"an apply the API server cannot make into a typed object": {
			err: statusError(metav1.Status{Code: http.StatusInternalServerError,
				Message: `failed to create typed patch object: .spec.template.spec.topologySpreadConstraints: duplicate entries for key [topologyKey="zone"]`}),
			want: "The API server rejected Deployment web: the API server cannot process the request made from the MyApp's spec " +
				"(such as a list whose items must differ by a key holding one key twice); the ChildRejected event says where",
		},
		"a request it cannot read": {
			err:  apierrors.NewBadRequest("cannot decode"),
			want: "The API server rejected Deployment web (BadRequest)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			f := classify(&applyError{kind: "Deployment", name: "web", err: tc.err})
			g.Expect(f.Reason).To(Equal(examplev1.ReasonChildRejected))
			g.Expect(f.Message).To(Equal(tc.want))
			// The API server's own words go to the Warning event.
			g.Expect(f.detail).To(ContainSubstring(tc.err.Error()))

			// The same refusal in other words: the status stays as it is.
			var st apierrors.APIStatus
			g.Expect(errors.As(tc.err, &st)).To(BeTrue())
			reworded := st.Status()
			reworded.Message = strings.ToUpper(reworded.Message) + " (reworded)"
			if reworded.Details != nil {
				d := *reworded.Details
				d.Causes = append([]metav1.StatusCause{}, d.Causes...)
				for i := range d.Causes {
					d.Causes[i].Message = "reworded"
				}
				// Reversed: the message must not depend on the order the API server lists causes in.
				for i, j := 0, len(d.Causes)-1; i < j; i, j = i+1, j-1 {
					d.Causes[i], d.Causes[j] = d.Causes[j], d.Causes[i]
				}
				reworded.Details = &d
			}
			g.Expect(classify(&applyError{kind: "Deployment", name: "web", err: &apierrors.StatusError{ErrStatus: reworded}}).Message).
				To(Equal(f.Message))
		})
	}
}

// TestRejectionMessageNamesAtMostSomeFields: a refusal with many causes names the first few,
// in a stable order, and says how many more there are.
func TestRejectionMessageNamesAtMostSomeFields(t *testing.T) {
	g := NewWithT(t)
	var errs field.ErrorList
	for i := 0; i < maxCauses+3; i++ {
		errs = append(errs, field.Invalid(field.NewPath("spec", "template", "spec", "tolerations").Index(i).Child("effect"), "x", "bad"))
	}
	f := classify(&applyError{kind: "Deployment", name: "web", err: apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", errs)})
	g.Expect(f.Message).To(HaveSuffix("; and 3 more"))
	g.Expect(strings.Count(f.Message, "has an invalid value")).To(Equal(maxCauses))
}

// TestMayBeUnserved: the answers an API server that no longer serves HTTPRoutes gives (404
// for the resource, as client-go reports it, or no REST mapping) send the reconciler to
// discovery; a refusal or any other failure does not.
func TestMayBeUnserved(t *testing.T) {
	routes := schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "httproutes"}
	cases := map[string]struct {
		err  error
		want bool
	}{
		"no error": {nil, false},
		"the resource is not served": {&applyError{kind: kindRoute, name: "web",
			err: apierrors.NewGenericServerResponse(http.StatusNotFound, "patch", routes, "web", "", 0, true)}, true},
		"no REST mapping for the kind":    {&meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: routes.Group, Kind: kindRoute}}, true},
		"a refusal":                       {&applyError{kind: kindRoute, name: "web", err: apierrors.NewForbidden(routes, "web", errors.New("no"))}, false},
		"another failure":                 {errors.New("connection refused"), false},
		"a route cache that never synced": {fmt.Errorf("reading HTTPRoute web: %w", &notSyncedError{what: "HTTPRoutes"}), true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(mayBeUnserved(c.err)).To(Equal(c.want))
		})
	}
}

// TestRoutesListed: discovery's answer for the Gateway API's group version says HTTPRoutes
// are served only when it lists them; a NotFound or a list without them says they are not; a
// failure that says nothing about them (a refusal, a timeout) counts as served.
func TestRoutesListed(t *testing.T) {
	gv := schema.GroupVersion{Group: "gateway.networking.k8s.io", Version: "v1"}
	withRoutes := &metav1.APIResourceList{GroupVersion: gv.String(), APIResources: []metav1.APIResource{
		{Name: "gateways", Kind: "Gateway"}, {Name: "httproutes", Kind: kindRoute}}}
	withoutRoutes := &metav1.APIResourceList{GroupVersion: gv.String(), APIResources: []metav1.APIResource{
		{Name: "gateways", Kind: "Gateway"}}}
	cases := map[string]struct {
		list *metav1.APIResourceList
		err  error
		want bool
	}{
		"listed":                 {withRoutes, nil, true},
		"the group without them": {withoutRoutes, nil, false},
		"the group not served": {&metav1.APIResourceList{},
			apierrors.NewGenericServerResponse(http.StatusNotFound, "get", schema.GroupResource{}, "", "", 0, true), false},
		"discovery refused":   {&metav1.APIResourceList{}, apierrors.NewForbidden(schema.GroupResource{}, "", errors.New("no")), true},
		"discovery timed out": {&metav1.APIResourceList{}, errors.New("context deadline exceeded"), true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(kindListed(c.list, c.err, kindRoute)).To(Equal(c.want))
		})
	}
}
