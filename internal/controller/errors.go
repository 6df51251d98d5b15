package controller

import (
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

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
	case errors.As(err, &notOwned):
		return failure{
			Failure:    status.Failure{Reason: examplev1.ReasonChildNotOwned, Message: notOwned.Error(), Terminal: true},
			retryAfter: slowRetry,
		}
	case errors.As(err, &applyErr) && (apierrors.IsInvalid(err) || apierrors.IsForbidden(err)):
		// The API server or an admission policy refused the child as the MyApp describes it:
		// retrying the same request cannot help. Its message is stable for the same input.
		var st apierrors.APIStatus
		msg := err.Error()
		if errors.As(err, &st) {
			msg = st.Status().Message
		}
		return failure{
			Failure: status.Failure{
				Reason:   examplev1.ReasonChildRejected,
				Message:  fmt.Sprintf("The API server rejected %s %s: %s", applyErr.kind, applyErr.name, status.StableAdmissionMessage(msg)) + status.RejectionHint(applyErr.kind, msg),
				Terminal: true,
			},
			retryAfter: slowRetry,
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
