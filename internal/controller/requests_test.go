package controller

import (
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/gomega"
)

// managerRequests counts the requests the suite's manager sends to the API server.
var managerRequests requestCounter

// requestCounter counts a client's requests by verb and path, through a wrapped transport:
// what the API server actually receives, not what the code meant to send.
type requestCounter struct {
	mu   sync.Mutex
	seen []string
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		c.mu.Lock()
		c.seen = append(c.seen, req.Method+" "+req.URL.Path+"?"+req.URL.RawQuery)
		c.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// since returns the requests about namespace ns seen after the first n, leaving out the
// informers' watches, which are the cache's, not a reconcile's. Other stories' MyApps, still
// reconciled at every resync, stay out of the count.
func (c *requestCounter) since(n int, ns string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.seen)-n)
	for _, r := range c.seen[n:] {
		if strings.Contains(r, "watch=true") || !strings.Contains(r, "/namespaces/"+ns+"/") {
			continue
		}
		out = append(out, r)
	}
	return out
}

// count is how many requests were seen so far.
func (c *requestCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// expectQuietThroughResyncs waits for the writes about namespace ns to settle: a window of two
// resyncs in which the suite's manager sends nothing about it.
func expectQuietThroughResyncs(ns string) {
	Eventually(func(g Gomega) {
		n := managerRequests.count()
		g.Consistently(func() []string { return managerRequests.since(n, ns) }, 2*resyncPeriod, 200*time.Millisecond).Should(BeEmpty())
	}).WithTimeout(30 * time.Second).Should(Succeed())
}
