// Package traffic sends a steady stream of GET requests to one URL, as an application's
// clients do, and reports how many failed: the real-node suites measure with it that a rollout
// or an upgrade drops no request.
package traffic

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Stream sends a steady stream of GET requests to one URL and counts the answers. Each
// request opens a new connection, so that the Service routes every request afresh to one of
// the pods it has at that moment.
type Stream struct {
	url      string
	host     string // the Host header, when not the URL's host
	interval time.Duration
	limit    int // the stream stops after this many requests, even if nobody stops it

	stopOnce sync.Once
	stopped  chan struct{}
	done     chan struct{}
	inFlight sync.WaitGroup

	mu         sync.Mutex
	sent       int
	failed     int
	lastOK     time.Time
	longestGap time.Duration // the longest time without a successful answer
	failures   []string      // the first few, for the report
	answers    []Answer      // every answer, failed or not, in the order they came
}

// Answer is one request's outcome: when it was answered (or failed) and the first line of a
// 200 answer's body, which names the version of the app that answered.
type Answer struct {
	At     time.Time
	Line   string
	Failed bool
}

// Report is what a stream saw.
type Report struct {
	URL          string
	Sent, Failed int
	LongestGap   time.Duration
	// Truncated is true when the stream reached its request limit before it was stopped: the
	// end of the story was not covered.
	Truncated bool
	Failures  []string
	// Answers are every request's outcome.
	Answers []Answer
}

// Between is what the report's requests answered from from to to: how many got a 200 whose
// first line starts with prefix, how many another 200, and how many failed.
func (r Report) Between(from, to time.Time, prefix string) (matched, other, failed int) {
	for _, a := range r.Answers {
		switch {
		case a.At.Before(from) || a.At.After(to):
		case a.Failed:
			failed++
		case strings.HasPrefix(a.Line, prefix):
			matched++
		default:
			other++
		}
	}
	return matched, other, failed
}

func (r Report) String() string {
	s := fmt.Sprintf("%s: %d requests sent, %d failed, longest time without an answer %s",
		r.URL, r.Sent, r.Failed, r.LongestGap.Round(time.Millisecond))
	if len(r.Failures) > 0 {
		s += "; first failures: " + strings.Join(r.Failures, "; ")
	}
	return s
}

// The client gives a request five seconds. The test app answers in microseconds, but on a
// machine whose two cores also run the other lanes of make test-all, a request may wait a
// second or two for the CPU (of the edge, kube-proxy's rules, the app) and still be answered:
// it was served, late. A request sent to a pod that is gone still fails within that time: the
// kernel gives up on an address nobody answers ARP for after about three seconds (no route to
// host), and a refused connection fails at once; the report's longest gap shows a slow answer.
var trafficClient = &http.Client{
	Timeout:   5 * time.Second,
	Transport: &http.Transport{DisableKeepAlives: true},
}

// Start sends perSecond requests a second to url, each independent of the others, for at most
// limit.
func Start(url string, perSecond int, limit time.Duration) *Stream {
	return StartHost(url, "", perSecond, limit)
}

// StartHost is Start with host as every request's Host header, as a client that resolved the
// host's name to a gateway's address sends it.
func StartHost(url, host string, perSecond int, limit time.Duration) *Stream {
	t := &Stream{
		url: url, host: host, interval: time.Second / time.Duration(perSecond), limit: perSecond * int(limit/time.Second),
		stopped: make(chan struct{}), done: make(chan struct{}), lastOK: time.Now(),
	}
	go t.run()
	return t
}

func (t *Stream) run() {
	defer close(t.done)
	tick := time.NewTicker(t.interval)
	defer tick.Stop()
	for range t.limit {
		select {
		case <-t.stopped:
			return
		case <-tick.C:
		}
		t.mu.Lock()
		t.sent++
		t.mu.Unlock()
		t.inFlight.Add(1)
		go func() {
			defer t.inFlight.Done()
			t.record(answer(t.url, t.host))
		}()
	}
}

// Get asks url once, on a new connection, and fails unless the answer is a 200 read whole.
func Get(url string) error { return GetHost(url, "") }

// GetHost is Get with host as the Host header; empty, the URL's host is sent.
func GetHost(url, host string) error {
	_, err := answer(url, host)
	return err
}

// answer asks url once with host as the Host header and returns the first line of a 200
// answer read whole.
func answer(url, host string) (string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	req.Host = host
	resp, err := trafficClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	line, _, _ := strings.Cut(string(body), "\n")
	return line, nil
}

func (t *Stream) record(line string, err error) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.answers = append(t.answers, Answer{At: now, Line: line, Failed: err != nil})
	if err != nil {
		t.failed++
		if len(t.failures) < 5 {
			t.failures = append(t.failures, now.Format("15:04:05.000")+" "+err.Error())
		}
		return
	}
	if gap := now.Sub(t.lastOK); gap > t.longestGap {
		t.longestGap = gap
	}
	t.lastOK = now
}

// Stop ends the stream, waits for the requests in flight and reports.
func (t *Stream) Stop() Report {
	truncated := false
	select {
	case <-t.done:
		truncated = true
	default:
	}
	t.stopOnce.Do(func() { close(t.stopped) })
	<-t.done
	t.inFlight.Wait()
	r := t.Report()
	r.Truncated = truncated
	return r
}

// Report is what the stream saw so far; it goes on.
func (t *Stream) Report() Report {
	t.mu.Lock()
	defer t.mu.Unlock()
	// The time since the last answer counts too: a stream that ends in silence had a gap.
	gap := t.longestGap
	if since := time.Since(t.lastOK); since > gap {
		gap = since
	}
	target := t.url
	if t.host != "" {
		target += " (Host: " + t.host + ")"
	}
	return Report{URL: target, Sent: t.sent, Failed: t.failed, LongestGap: gap,
		Failures: append([]string(nil), t.failures...), Answers: append([]Answer(nil), t.answers...)}
}
