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

func TestSingleFailsWhenMissing(t *testing.T) {
	if _, err := single(nil, "process_resident_memory_bytes", nil); err == nil {
		t.Error("a missing metric must be an error, not 0")
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
