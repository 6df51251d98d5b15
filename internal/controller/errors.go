package controller

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/status"
)

// slowRetry is how often a MyApp blocked by something the user must fix looks again. Such
// problems are mostly fixed through the MyApp, which triggers a reconcile at once, but not
// always: a same-named object we do not own carries none of our labels, so no watch reports
// its deletion, and a quota that refused a child may be raised.
const slowRetry = time.Minute

// predecessorRetry is how soon a MyApp whose name is still held by children of a deleted
// predecessor looks again, in case the garbage collector's deletions are not seen.
const predecessorRetry = 5 * time.Second

// notOwnedError: an object with a child's name exists and the MyApp does not control it.
type notOwnedError struct{ kind, name string }

func (e *notOwnedError) Error() string {
	return fmt.Sprintf("%s %s exists and is not owned by this MyApp; the operator leaves it untouched. "+
		"Delete or rename it, or rename the MyApp", e.kind, e.name)
}

// predecessorError: a child's name is held by the child of an earlier MyApp of the same
// name (deleted, then created again), which the garbage collector is about to remove.
type predecessorError struct{ kind, name string }

func (e *predecessorError) Error() string {
	return fmt.Sprintf("%s %s still belongs to an earlier MyApp of this name; waiting for the garbage collector to remove it",
		e.kind, e.name)
}

// migrationStuckError: the selector migration from 0.2.0 did not finish within its deadline.
type migrationStuckError struct{ message string }

func (e *migrationStuckError) Error() string { return e.message }

// applyError: the API server failed a change to a child.
type applyError struct {
	kind, name string
	err        error
}

func (e *applyError) Error() string { return fmt.Sprintf("applying %s %s: %v", e.kind, e.name, e.err) }
func (e *applyError) Unwrap() error { return e.err }

// failure is how the reconciler reacts to an error: what the status says and how it retries.
type failure struct {
	status.Failure
	// waiting failures are work under way rather than problems.
	waiting bool
	// transient errors are returned to controller-runtime, which retries with backoff.
	transient bool
	// retryAfter, when set, schedules one more look without treating the error as transient.
	retryAfter time.Duration
	// detail is the API server's own message, for the Warning event, when the status
	// message says the problem in the operator's words.
	detail string
}

// classify maps an error to a failure. The messages it puts in the status are stable for a
// given problem; the raw error goes to the event and the log.
func classify(err error) failure {
	var (
		invalid     *desired.InvalidSpecError
		notOwned    *notOwnedError
		predecessor *predecessorError
		applyErr    *applyError
		stuck       *migrationStuckError
		noGateway   *gatewayAPIMissingError
		noMonitors  *podMonitorsMissingError
		noCerts     *certManagerMissingError
	)
	switch {
	case errors.As(err, &invalid):
		return failure{Failure: status.Failure{Reason: examplev1.ReasonInvalidSpec, Message: invalid.Error(), Terminal: true}}
	case errors.As(err, &predecessor):
		return failure{
			Failure:    status.Failure{Reason: examplev1.ReasonWaitingForPredecessor, Message: predecessor.Error()},
			waiting:    true,
			retryAfter: predecessorRetry,
		}
	case errors.As(err, &stuck):
		return failure{
			Failure:    status.Failure{Reason: examplev1.ReasonMigrationDeadlineExceeded, Message: stuck.Error(), Terminal: true},
			retryAfter: slowRetry,
		}
	case errors.As(err, &noGateway):
		// Installing the Gateway API fires no event the operator watches: its probe looks
		// again and reconciles every MyApp once it finds it; a CRD removed after the operator
		// found it, and installed again, is seen at the MyApp's retry.
		return failure{
			Failure:    status.Failure{Reason: examplev1.ReasonGatewayAPINotInstalled, Message: noGateway.Error(), Terminal: true},
			retryAfter: gatewayAPIRetry,
		}
	case errors.As(err, &noMonitors):
		// Served without: reconcileServedWithout makes it Degraded. The CRDs' probe
		// reconciles every MyApp once it finds them.
		return failure{
			Failure:    status.Failure{Reason: examplev1.ReasonPrometheusOperatorNotInstalled, Message: noMonitors.Error(), Terminal: true},
			retryAfter: podMonitorRetry,
		}
	case errors.As(err, &noCerts):
		// The CRDs' probe reconciles every MyApp once it finds them.
		return failure{
			Failure:    status.Failure{Reason: examplev1.ReasonCertManagerNotInstalled, Message: noCerts.Error(), Terminal: true},
			retryAfter: certificateRetry,
		}
	case errors.As(err, &notOwned):
		return failure{
			Failure:    status.Failure{Reason: examplev1.ReasonChildNotOwned, Message: notOwned.Error(), Terminal: true},
			retryAfter: slowRetry,
		}
	case errors.As(err, &applyErr) && isRefusal(err):
		// The API server or an admission policy refused the child as the MyApp describes it:
		// sending the same request again cannot help.
		return failure{
			Failure: status.Failure{
				Reason:   examplev1.ReasonChildRejected,
				Message:  rejectionMessage(applyErr.kind, applyErr.name, err),
				Terminal: true,
			},
			retryAfter: slowRetry,
			detail:     applyErr.Error(),
		}
	case errors.As(err, &applyErr):
		return failure{
			Failure: status.Failure{
				Reason:  examplev1.ReasonApplyFailed,
				Message: fmt.Sprintf("Could not apply %s %s; retrying", applyErr.kind, applyErr.name),
			},
			transient: true,
		}
	default:
		return failure{
			Failure:   status.Failure{Reason: examplev1.ReasonApplyFailed, Message: "Could not read the MyApp's children; retrying"},
			transient: true,
		}
	}
}

// isRefusal tells whether the API server refused a request for what it asks, so that the
// same request fails again until the MyApp, a policy or a quota changes. It reads the
// answer's reason and status code, never its message.
//
// Validation answers Invalid, admission Forbidden (quotas, Pod Security, policies) or what
// a webhook chose; a body the API server cannot read is BadRequest or RequestEntityTooLarge.
// A server-side apply that cannot be made into a typed object (a list keyed by a field that
// holds the same key twice) fails without a reason, with code 500: a failure of the API
// server itself, of etcd or of a webhook call carries a reason (InternalError, Timeout,
// ServiceUnavailable, TooManyRequests), and an answer from a proxy in between gets
// InternalError from the client. Should such a 500 ever be passing, the slow retry of a
// refusal brings the MyApp back within a minute.
func isRefusal(err error) bool {
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsRequestEntityTooLargeError(err) {
		return true
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	s := st.Status()
	return s.Reason == metav1.StatusReasonUnknown && s.Code == http.StatusInternalServerError
}

// maxCauses is how many refused fields a ChildRejected message names.
const maxCauses = 5

// rejectionMessage says which child the API server refused and why, built from the
// refusal's structured fields only: its reason, and the field and type of each cause. A
// future API server that rewords its messages therefore leaves the status as it is; the
// API server's own message goes to the Warning event and the log.
func rejectionMessage(kind, name string, err error) string {
	msg := fmt.Sprintf("The API server rejected %s %s", kind, name)
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return msg
	}
	s := st.Status()
	var causes []string
	seen := map[string]bool{}
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if d := describeCause(kind, c); d != "" && !seen[d] {
				seen[d] = true
				causes = append(causes, d)
			}
		}
	}
	// The API server lists causes in the order its validation meets them; sorted, the
	// message does not depend on that order.
	sort.Strings(causes)
	switch {
	case len(causes) > maxCauses:
		msg += ": " + strings.Join(causes[:maxCauses], "; ") + fmt.Sprintf("; and %d more", len(causes)-maxCauses)
	case len(causes) > 0:
		msg += ": " + strings.Join(causes, "; ")
	case s.Reason == metav1.StatusReasonForbidden:
		msg += ": an admission check of the namespace forbids it (a ResourceQuota, a LimitRange, Pod Security " +
			"or an admission policy); the ChildRejected event says which"
	case s.Reason == metav1.StatusReasonUnknown && s.Code == http.StatusInternalServerError:
		msg += ": the API server cannot process the request made from the MyApp's spec (such as a list " +
			"whose items must differ by a key holding one key twice); the ChildRejected event says where"
	case s.Reason == metav1.StatusReasonInvalid:
		msg += ": a validation or an admission policy refused it without naming a field; the ChildRejected event says why"
	default:
		msg += fmt.Sprintf(" (%s)", reasonOf(s))
	}
	return msg
}

// causeWords says what each cause type means for the field it names.
var causeWords = map[metav1.CauseType]string{
	metav1.CauseTypeFieldValueRequired:     "is required",
	metav1.CauseTypeFieldValueInvalid:      "has an invalid value",
	metav1.CauseTypeFieldValueNotSupported: "has an unsupported value",
	metav1.CauseTypeForbidden:              "is forbidden",
	metav1.CauseTypeFieldValueDuplicate:    "holds a duplicate",
	metav1.CauseTypeFieldValueNotFound:     "refers to something not found",
	metav1.CauseTypeTooLong:                "is too long",
	metav1.CauseTypeTooMany:                "has too many items",
	metav1.CauseTypeTypeInvalid:            "has the wrong type",
}

// describeCause names a refused field of a child, with the MyApp field it comes from when
// there is one, and what is wrong with it.
func describeCause(kind string, c metav1.StatusCause) string {
	if c.Field == "" {
		if c.Type == "" {
			return ""
		}
		return string(c.Type)
	}
	field := c.Field
	if from := myAppField(kind, c.Field); from != "" {
		field += " (from the MyApp's " + from + ")"
	}
	words, ok := causeWords[c.Type]
	switch {
	case ok:
	case c.Type == "":
		words = "is refused"
	default:
		words = "is refused (" + string(c.Type) + ")"
	}
	return field + " " + words
}

// childFields map where a field of a child comes from in the MyApp, by the child field's
// prefix (desired says how each child is built).
var childFields = map[string][][2]string{
	kindDeployment: {
		{"spec.template.spec.containers[0].resources", "spec.resources"},
		{"spec.template.spec.containers[0].securityContext", "spec.securityContext"},
		{"spec.template.spec.containers[0].readinessProbe", "spec.readinessProbe"},
		{"spec.template.spec.containers[0].livenessProbe", "spec.livenessProbe"},
		{"spec.template.spec.containers[0].startupProbe", "spec.startupProbe"},
		{"spec.template.spec.containers[0].env", "spec.env"},
		{"spec.template.spec.containers[0].command", "spec.command"},
		{"spec.template.spec.containers[0].args", "spec.args"},
		{"spec.template.spec.containers[0].image", "spec.image"},
		{"spec.template.spec.securityContext", "spec.podSecurityContext"},
		{"spec.template.spec.affinity", "spec.affinity"},
		{"spec.template.spec.tolerations", "spec.tolerations"},
		{"spec.template.spec.topologySpreadConstraints", "spec.topologySpreadConstraints"},
		{"spec.template.spec.nodeSelector", "spec.nodeSelector"},
		{"spec.template.spec.imagePullSecrets", "spec.imagePullSecrets"},
		{"spec.template.spec.serviceAccountName", "spec.serviceAccountName"},
		{"spec.template.metadata.labels", "spec.podLabels"},
		{"spec.template.metadata.annotations", "spec.podAnnotations"},
		{"spec.strategy.rollingUpdate", "spec.rollingUpdate"},
	},
	kindService: {
		{"metadata.annotations", "spec.serviceAnnotations"},
		{"spec.type", "spec.serviceType"},
	},
	kindIngress: {
		{"spec.ingressClassName", "spec.expose.ingressClassName"},
		{"spec.rules", "spec.expose.hosts"},
		{"spec.tls", "spec.expose.tls"},
	},
	kindRoute: {
		{"spec.parentRefs", "spec.expose.gateway"},
		{"spec.hostnames", "spec.expose.hosts"},
		{"spec.rules", "spec.expose.path"},
	},
	kindCertificate: {
		{"spec.dnsNames", "spec.expose.hosts"},
		{"spec.secretName", "spec.expose.tls.secretName"},
		{"spec.issuerRef", "spec.expose.tls.issuerRef"},
	},
	kindBudget: {
		{"spec.minAvailable", "spec.podDisruptionBudget.minAvailable"},
		{"spec.maxUnavailable", "spec.podDisruptionBudget.maxUnavailable"},
	},
}

// myAppField is the MyApp field a child's field comes from, or "".
func myAppField(kind, field string) string {
	for _, m := range childFields[kind] {
		if rest, ok := strings.CutPrefix(field, m[0]); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			return m[1] + rest
		}
	}
	return ""
}

// reasonOf names a refusal by its reason, or its code when it has none.
func reasonOf(s metav1.Status) string {
	if s.Reason != metav1.StatusReasonUnknown {
		return string(s.Reason)
	}
	return fmt.Sprintf("HTTP %d", s.Code)
}
