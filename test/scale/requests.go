package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"k8s.io/client-go/rest"
)

// requestKey is one series of the API server's apiserver_request_total, without the labels
// that do not matter here (group, version, scope, component, dry_run).
type requestKey struct {
	Verb, Resource, Subresource, Code string
}

func (k requestKey) resourceName() string {
	if k.Subresource != "" {
		return k.Resource + "/" + k.Subresource
	}
	return k.Resource
}

// requestCounts is a snapshot of apiserver_request_total.
type requestCounts map[requestKey]float64

// operatorResources are the resources only the operator touches while it runs: nothing else
// in envtest writes or reads them (there is no controller manager), and the benchmark's own
// requests to them happen before the snapshot the operator's are counted from. MyApps are
// special: the benchmark creates them, the operator only reads them and writes their status.
var operatorResources = map[string]bool{
	"deployments": true, "services": true, "horizontalpodautoscalers": true,
	"poddisruptionbudgets": true, "networkpolicies": true, "replicasets": true, "events": true, "myapps": true, configMapsResource: true,
}

// isOperatorRequest tells whether a series counts requests the operator sends.
func isOperatorRequest(k requestKey) bool {
	switch {
	case !operatorResources[k.Resource]:
		return false
	case k.Resource == "myapps":
		// The benchmark creates the MyApps; the operator never does.
		return k.Subresource != "" || k.Verb != "POST"
	case k.Resource == configMapsResource:
		// The config run's ConfigMaps are the benchmark's creates and updates; the operator
		// applies (and deletes) only its files ConfigMaps.
		return k.Verb != "POST" && k.Verb != "PUT"
	}
	return true
}

// mutatingVerbs are the verbs that change an object, as apiserver_request_total spells them:
// POST is a create, PUT an update, APPLY a server-side apply.
var mutatingVerbs = map[string]bool{
	"APPLY": true, "PATCH": true, "POST": true, "PUT": true, "DELETE": true, "DELETECOLLECTION": true,
}

// apiServerScraper reads the API server's own /metrics as the admin user.
type apiServerScraper struct {
	http *http.Client
	url  string
}

func newAPIServerScraper(cfg *rest.Config) (*apiServerScraper, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &apiServerScraper{http: hc, url: strings.TrimSuffix(cfg.Host, "/") + "/metrics"}, nil
}

func (s *apiServerScraper) scrape(ctx context.Context) (requestCounts, error) {
	body, err := httpGet(ctx, s.http, s.url)
	if err != nil {
		return nil, fmt.Errorf("scraping the API server's metrics: %w", err)
	}
	samples, err := parseSamples(body, "apiserver_request_total")
	if err != nil {
		return nil, fmt.Errorf("parsing the API server's metrics: %w", err)
	}
	if len(samples) == 0 {
		return nil, fmt.Errorf("the API server's /metrics has no apiserver_request_total")
	}
	out := requestCounts{}
	for _, sm := range samples {
		for _, l := range []string{"verb", "resource", "code"} {
			if _, ok := sm.Labels[l]; !ok {
				return nil, fmt.Errorf("apiserver_request_total has no %q label: %v", l, sm.Labels)
			}
		}
		k := requestKey{Verb: sm.Labels["verb"], Resource: sm.Labels["resource"],
			Subresource: sm.Labels["subresource"], Code: sm.Labels["code"]}
		out[k] += sm.Value
	}
	return out, nil
}

func httpGet(ctx context.Context, hc *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %.200s", url, resp.Status, body)
	}
	return body, nil
}

// operatorDelta returns what the operator's series grew by from before to after.
func operatorDelta(before, after requestCounts) requestCounts {
	out := requestCounts{}
	for k, v := range after {
		if !isOperatorRequest(k) {
			continue
		}
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// total sums the series that pass keep (all when keep is nil).
func (c requestCounts) total(keep func(requestKey) bool) float64 {
	var sum float64
	for k, v := range c {
		if keep == nil || keep(k) {
			sum += v
		}
	}
	return sum
}

// sortedKeys orders the series by resource, then verb, then code.
func (c requestCounts) sortedKeys() []requestKey {
	keys := make([]requestKey, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.resourceName() != b.resourceName() {
			return a.resourceName() < b.resourceName()
		}
		if a.Verb != b.Verb {
			return a.Verb < b.Verb
		}
		return a.Code < b.Code
	})
	return keys
}

func isMutatingChild(k requestKey) bool { return mutatingVerbs[k.Verb] && k.Resource != eventsResource }
func isLiveGet(k requestKey) bool       { return k.Verb == "GET" && k.Resource != eventsResource }
func isEvent(k requestKey) bool         { return k.Resource == eventsResource }

// configMapsResource is the resource of ConfigMaps in the API server's request counts.
const configMapsResource = "configmaps"

// eventsResource is the resource of core/v1 Events in the API server's request counts.
const eventsResource = "events"
