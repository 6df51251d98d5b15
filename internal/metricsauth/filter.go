// Package metricsauth guards the manager's metrics endpoint the way Kubernetes' own components
// guard theirs: the API server authenticates the caller's bearer token (TokenReview) and
// authorizes a GET of the path (SubjectAccessReview, e.g. the metrics-reader ClusterRole).
//
// It differs from controller-runtime's filters.WithAuthenticationAndAuthorization in one
// answer: a token the API server rejects (malformed, expired, of a deleted service account)
// gets 401 Unauthorized, as kube-apiserver answers it, where controller-runtime answers 500.
// A 500 would page whoever watches scrape errors for what is a client's mistake. 500 stays for
// what is ours or the API server's: a TokenReview or SubjectAccessReview that cannot be made.
package metricsauth

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Cache lifetimes and retries of the reviews. The retry backoff is the one kube-apiserver's
// delegated authentication options default to (k8s.io/apiserver server/options,
// DefaultAuthWebhookRetryBackoff: 500 ms, factor 1.5, jitter 0.2, 5 steps).
const (
	tokenCacheTTL  = time.Minute
	reviewTimeout  = 10 * time.Second
	allowCacheTTL  = 5 * time.Minute
	denyCacheTTL   = 30 * time.Second
	retryStartWait = 500 * time.Millisecond
)

func retryBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: retryStartWait, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// WithAuthenticationAndAuthorization is a metricsserver.Options FilterProvider.
func WithAuthenticationAndAuthorization(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationv1.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationv1.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	authenticator, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		CacheTTL:                 tokenCacheTTL,
		TokenAccessReviewClient:  authn,
		TokenAccessReviewTimeout: reviewTimeout,
		WebhookRetryBackoff:      retryBackoff(),
	}.New()
	if err != nil {
		return nil, fmt.Errorf("creating the metrics authenticator: %w", err)
	}
	authorizerImpl, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: authz,
		AllowCacheTTL:             allowCacheTTL,
		DenyCacheTTL:              denyCacheTTL,
		WebhookRetryBackoff:       retryBackoff(),
	}.New()
	if err != nil {
		return nil, fmt.Errorf("creating the metrics authorizer: %w", err)
	}

	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			res, ok, err := authenticator.AuthenticateRequest(req)
			switch {
			case err != nil && reviewFailed(err):
				log.Error(err, "Cannot authenticate a metrics request: the TokenReview failed")
				http.Error(w, "Authentication failed", http.StatusInternalServerError)
				return
			case err != nil || !ok:
				// The error of a rejected token is the API server's reason ("invalid bearer
				// token"), never the token itself.
				log.V(4).Info("Refused an unauthenticated metrics request", "reason", err)
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			user := res.User.GetName()
			decision, reason, err := authorizerImpl.Authorize(req.Context(), authorizer.AttributesRecord{
				User: res.User, Verb: strings.ToLower(req.Method), Path: req.URL.Path,
			})
			if err != nil {
				log.Error(err, "Cannot authorize a metrics request: the SubjectAccessReview failed", "user", user)
				http.Error(w, "Authorization failed", http.StatusInternalServerError)
				return
			}
			if decision != authorizer.DecisionAllow {
				log.V(4).Info("Refused an unauthorized metrics request", "user", user, "reason", reason)
				http.Error(w, fmt.Sprintf("Forbidden: %s may not %s %s", user, strings.ToLower(req.Method), req.URL.Path),
					http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, req)
		}), nil
	}, nil
}

// reviewFailed tells a TokenReview that could not be made (an API error, a transport error, a
// timeout) from a token the API server reviewed and rejected, whose error is a plain message.
func reviewFailed(err error) bool {
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			if reviewFailed(e) {
				return true
			}
		}
		return false
	}
	var status apierrors.APIStatus
	var urlErr *url.Error
	var netErr net.Error
	return errors.As(err, &status) || errors.As(err, &urlErr) || errors.As(err, &netErr) || wait.Interrupted(err)
}
