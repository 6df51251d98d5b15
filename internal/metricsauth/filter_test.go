package metricsauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestReviewFailed: a rejected token (the API server's reason as a plain error, alone or
// aggregated) is the client's problem, answered 401; a review that could not be made is ours,
// answered 500.
func TestReviewFailed(t *testing.T) {
	tokenreviews := schema.GroupResource{Group: "authentication.k8s.io", Resource: "tokenreviews"}
	cases := map[string]struct {
		err  error
		want bool
	}{
		"token rejected":             {errors.New("invalid bearer token"), false},
		"token rejected, aggregated": {utilerrors.NewAggregate([]error{errors.New("invalid bearer token")}), false},
		"manager may not review":     {apierrors.NewForbidden(tokenreviews, "", errors.New("RBAC")), true},
		"API server unreachable":     {&url.Error{Op: "Post", URL: "https://10.0.0.1/apis", Err: errors.New("connection refused")}, true},
		"API server down, wrapped":   {fmt.Errorf("tokenreview: %w", apierrors.NewServiceUnavailable("down")), true},
		"retries ran out":            {wait.ErrorInterrupted(context.DeadlineExceeded), true},
		"aggregated outage":          {utilerrors.NewAggregate([]error{errors.New("x"), apierrors.NewInternalError(errors.New("y"))}), true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := reviewFailed(tc.err); got != tc.want {
				t.Errorf("reviewFailed(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
