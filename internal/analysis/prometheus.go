package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Querier evaluates a PromQL instant query to one number.
type Querier interface {
	Query(ctx context.Context, query string, at time.Time) (float64, error)
}

// Prometheus is a Querier of a Prometheus server's HTTP API.
type Prometheus struct {
	api     promv1.API
	timeout time.Duration
}

// NewPrometheus is the Querier of the Prometheus at address (http://host:port), each query
// given timeout.
func NewPrometheus(address string, timeout time.Duration) (*Prometheus, error) {
	c, err := promapi.NewClient(promapi.Config{Address: address})
	if err != nil {
		return nil, fmt.Errorf("the Prometheus address %q: %w", address, err)
	}
	return &Prometheus{api: promv1.NewAPI(c), timeout: timeout}, nil
}

// ErrNoSample: the query returned no sample (no requests yet, or a label that matches nothing).
// It is never a pass: a check of a canary nobody called has measured nothing.
var ErrNoSample = errors.New("the query returned no sample")

// Query evaluates query at the given time to one number: a scalar, or a vector of exactly one
// sample. Anything else, NaN or ±Inf included, is an error: a check compares one number.
func (p *Prometheus) Query(ctx context.Context, query string, at time.Time) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	val, _, err := p.api.Query(ctx, query, at, promv1.WithTimeout(p.timeout))
	if err != nil {
		return 0, fmt.Errorf("querying Prometheus: %w", err)
	}
	var v float64
	switch r := val.(type) {
	case *model.Scalar:
		v = float64(r.Value)
	case model.Vector:
		switch len(r) {
		case 0:
			return 0, ErrNoSample
		case 1:
			v = float64(r[0].Value)
		default:
			return 0, fmt.Errorf("the query returned %d samples; a check needs one (aggregate it, e.g. with sum)", len(r))
		}
	default:
		return 0, fmt.Errorf("the query returned a %s; a check needs a scalar or a vector of one sample", val.Type())
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("the query returned %v", v)
	}
	return v, nil
}

// Expand replaces the placeholders of a check's query: {{namespace}} and {{name}} with the
// MyApp's namespace and name, and {{canary}} with the canary's Service's name.
func Expand(query, namespace, name string) string {
	return strings.NewReplacer("{{namespace}}", namespace, "{{name}}", name, "{{canary}}", name+"-canary").Replace(query)
}
