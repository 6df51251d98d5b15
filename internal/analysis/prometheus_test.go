package analysis

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestPrometheusQuery checks the reading of the answers of Prometheus's HTTP API
// (https://prometheus.io/docs/prometheus/latest/querying/api/#instant-queries); the e2e suite
// queries a real Prometheus.
func TestPrometheusQuery(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
		want       float64
		err        string
	}{
		{"a vector of one sample", `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1764331200,"0.995"]}]}}`, 200, 0.995, ""},
		{"a scalar", `{"status":"success","data":{"resultType":"scalar","result":[1764331200,"12"]}}`, 200, 12, ""},
		{"no sample", `{"status":"success","data":{"resultType":"vector","result":[]}}`, 200, 0, ErrNoSample.Error()},
		{"two samples", `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"1"},"value":[1,"1"]},{"metric":{"a":"2"},"value":[1,"2"]}]}}`, 200, 0, "returned 2 samples"},
		{"NaN", `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"NaN"]}]}}`, 200, 0, "returned NaN"},
		{"a matrix", `{"status":"success","data":{"resultType":"matrix","result":[]}}`, 200, 0, "returned a matrix"},
		{"a bad query", `{"status":"error","errorType":"bad_data","error":"parse error"}`, 400, 0, "parse error"},
		{"a server error", `oops`, 503, 0, "querying Prometheus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/v1/query" {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			p, err := NewPrometheus(srv.URL, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Query(context.Background(), "up", time.Now())
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("got error %v, want one with %q", err, tc.err)
			case tc.err == "" && got != tc.want:
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPrometheusDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	p, err := NewPrometheus(srv.URL, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Query(context.Background(), "up", time.Now()); err == nil || errors.Is(err, ErrNoSample) {
		t.Fatalf("a Prometheus that does not answer gave %v", err)
	}
}
