package main

import (
	"reflect"
	"testing"
)

func TestParseSamples(t *testing.T) {
	body := []byte(`# HELP apiserver_request_total Counter of apiserver requests.
# TYPE apiserver_request_total counter
` + `apiserver_request_total{code="201",component="apiserver",dry_run="",group="apps",resource="deployments",` +
		`scope="resource",subresource="",verb="APPLY",version="v1"} 1000
` + `apiserver_request_total{code="200",resource="myapps",subresource="status",verb="PATCH",` +
		`note="a \"quoted\", \\ value"} 2e+03
apiserver_request_total_other{code="200"} 5
go_memstats_heap_inuse_bytes 1.2345e+07
`)
	cases := map[string]struct {
		names []string
		want  []sample
	}{
		"labels, escapes and exponents": {
			names: []string{"apiserver_request_total"},
			want: []sample{
				{Name: "apiserver_request_total", Value: 1000, Labels: map[string]string{"code": "201", "component": "apiserver",
					"dry_run": "", "group": "apps", "resource": "deployments", "scope": "resource", "subresource": "", "verb": "APPLY",
					"version": "v1"}},
				{Name: "apiserver_request_total", Value: 2000, Labels: map[string]string{"code": "200", "resource": "myapps",
					"subresource": "status", "verb": "PATCH", "note": `a "quoted", \ value`}},
			},
		},
		"no labels": {
			names: []string{"go_memstats_heap_inuse_bytes"},
			want:  []sample{{Name: "go_memstats_heap_inuse_bytes", Value: 12345000, Labels: map[string]string{}}},
		},
		"absent": {names: []string{"process_resident_memory_bytes"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseSamples(body, tc.names...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A page the benchmark cannot read is a figure it cannot measure: each of these fails rather
// than yield the samples before the fault or none. (Lines of metrics not asked for are not
// parsed; a page with none of the metrics asked for gives no samples, which single reports.)
func TestParseSamplesFailsOnAPageItCannotRead(t *testing.T) {
	cases := map[string]string{
		"unclosed labels":              "apiserver_request_total{code=\"200\" 5\n",
		"a value that is not a number": "apiserver_request_total{code=\"200\"} five\n",
		"a page cut mid-line":          "apiserver_request_total{code=\"200\"} 5\napiserver_request_total{code=\"2",
		"a malformed line after good ones": "apiserver_request_total{code=\"200\"} 5\n" +
			"apiserver_request_total{code=\"201\" 5\n",
		"a second TYPE for a metric": "# TYPE apiserver_request_total counter\n# TYPE apiserver_request_total gauge\n" +
			"apiserver_request_total 5\n",
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			if got, err := parseSamples([]byte(body), "apiserver_request_total"); err == nil {
				t.Errorf("parsed %q into %+v, want an error", body, got)
			}
		})
	}
}

// A figure comes from a metric that is there; one that is not is an error, never 0.
func TestSingle(t *testing.T) {
	body := []byte(`# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="myapp",result="success"} 7
controller_runtime_reconcile_total{controller="myapp",result="error"} 2
controller_runtime_reconcile_total{controller="other",result="success"} 100
# TYPE workqueue_depth gauge
workqueue_depth{name="myapp"} 0
go_goroutines 12
`)
	samples, err := parseSamples(body, "controller_runtime_reconcile_total", "workqueue_depth")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		name    string
		match   map[string]string
		want    float64
		wantErr bool
	}{
		"the sum over the matching labels": {name: "controller_runtime_reconcile_total",
			match: map[string]string{"controller": "myapp"}, want: 9},
		"one series":                             {name: "controller_runtime_reconcile_total", match: map[string]string{"controller": "myapp", "result": "error"}, want: 2},
		"a gauge at 0 is a figure":               {name: "workqueue_depth", match: map[string]string{"name": "myapp"}, want: 0},
		"a metric not on the page":               {name: "process_resident_memory_bytes", wantErr: true},
		"no series with those labels":            {name: "workqueue_depth", match: map[string]string{"name": "other"}, wantErr: true},
		"a metric on the page but not asked for": {name: "go_goroutines", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := single(samples, tc.name, tc.match)
			if tc.wantErr {
				if err == nil {
					t.Errorf("got %v, want an error: a missing metric must not read as 0", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	for name, body := range map[string]string{"empty": "", "not metrics": "<html>Forbidden</html>\n"} {
		samples, err := parseSamples([]byte(body), "process_resident_memory_bytes")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, err := single(samples, "process_resident_memory_bytes", nil); err == nil {
			t.Errorf("a page %s gave %v, want an error, not a figure", name, got)
		}
	}
}

// A histogram comes out as Prometheus stores it, so a figure can be taken from its _count or
// _sum; the parser sees the family's lines with its TYPE, not loose samples.
func TestParseSamplesHistogram(t *testing.T) {
	body := []byte(`# HELP apiserver_request_duration_seconds Response latency.
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{verb="GET",le="0.1"} 2
apiserver_request_duration_seconds_bucket{verb="GET",le="+Inf"} 3
apiserver_request_duration_seconds_sum{verb="GET"} 0.45
apiserver_request_duration_seconds_count{verb="GET"} 3
# TYPE apiserver_request_total counter
apiserver_request_total{verb="GET"} 3
`)
	samples, err := parseSamples(body, "apiserver_request_duration_seconds")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{"apiserver_request_duration_seconds_count": 3,
		"apiserver_request_duration_seconds_sum": 0.45} {
		if got, err := single(samples, name, map[string]string{"verb": "GET"}); err != nil || got != want {
			t.Errorf("%s: got %v, %v; want %v", name, got, err, want)
		}
	}
	if got, err := single(samples, "apiserver_request_duration_seconds_bucket", map[string]string{"le": "0.1"}); err != nil || got != 2 {
		t.Errorf("the 0.1 s bucket: got %v, %v; want 2", got, err)
	}
	if _, err := single(samples, "apiserver_request_total", nil); err == nil {
		t.Error("a metric not asked for was returned")
	}
}

func TestOperatorDelta(t *testing.T) {
	before := requestCounts{
		{Verb: "APPLY", Resource: "deployments", Code: "201"}: 5,
	}
	after := requestCounts{
		{Verb: "APPLY", Resource: "deployments", Code: "201"}:                   15,
		{Verb: "POST", Resource: "myapps", Code: "201"}:                         10, // the benchmark's creates
		{Verb: "PATCH", Resource: "myapps", Subresource: "status", Code: "200"}: 10,
		{Verb: "POST", Resource: "ipaddresses", Code: "201"}:                    10, // the API server's own
		{Verb: "GET", Resource: "horizontalpodautoscalers", Code: "404"}:        3,
		{Verb: "POST", Resource: "events", Code: "201"}:                         4,
	}
	got := operatorDelta(before, after)
	want := requestCounts{
		{Verb: "APPLY", Resource: "deployments", Code: "201"}:                   10,
		{Verb: "PATCH", Resource: "myapps", Subresource: "status", Code: "200"}: 10,
		{Verb: "GET", Resource: "horizontalpodautoscalers", Code: "404"}:        3,
		{Verb: "POST", Resource: "events", Code: "201"}:                         4,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if m := got.total(isMutatingChild); m != 20 {
		t.Errorf("mutating requests: got %v, want 20", m)
	}
	if g := got.total(isLiveGet); g != 3 {
		t.Errorf("live GETs: got %v, want 3", g)
	}
}
