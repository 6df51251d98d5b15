package catalog

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// traffic sends a steady stream of GET requests to one URL, as the clients of an application
// do, and counts the answers. Each request opens a new connection, so that the Service routes
// every request afresh to one of the pods it has at that moment.
type traffic struct {
	url      string
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
}

// trafficReport is what a stream saw.
type trafficReport struct {
	URL          string
	Sent, Failed int
	LongestGap   time.Duration
	// Truncated is true when the stream reached its request limit before it was stopped: the
	// end of the story was not covered.
	Truncated bool
	Failures  []string
}

func (r trafficReport) String() string {
	s := fmt.Sprintf("%s: %d requests sent, %d failed, longest time without an answer %s",
		r.URL, r.Sent, r.Failed, r.LongestGap.Round(time.Millisecond))
	if len(r.Failures) > 0 {
		s += "; first failures: " + strings.Join(r.Failures, "; ")
	}
	return s
}

// The client gives a request a second: the test app answers in microseconds, so a request
// that takes longer has met a connection no pod accepts.
var trafficClient = &http.Client{
	Timeout:   time.Second,
	Transport: &http.Transport{DisableKeepAlives: true},
}

// startTraffic sends perSecond requests a second to url, each independent of the others, for
// at most limit.
func startTraffic(url string, perSecond int, limit time.Duration) *traffic {
	t := &traffic{
		url: url, interval: time.Second / time.Duration(perSecond), limit: perSecond * int(limit/time.Second),
		stopped: make(chan struct{}), done: make(chan struct{}), lastOK: time.Now(),
	}
	go t.run()
	return t
}

func (t *traffic) run() {
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
			t.record(t.get())
		}()
	}
}

func (t *traffic) get() error {
	resp, err := trafficClient.Get(t.url)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if _, err := io.ReadAll(resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", t.url, resp.Status)
	}
	return nil
}

func (t *traffic) record(err error) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
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

// stop ends the stream, waits for the requests in flight and reports.
func (t *traffic) stop() trafficReport {
	truncated := false
	select {
	case <-t.done:
		truncated = true
	default:
	}
	t.stopOnce.Do(func() { close(t.stopped) })
	<-t.done
	t.inFlight.Wait()
	t.mu.Lock()
	defer t.mu.Unlock()
	// The time since the last answer counts too: a stream that ends in silence had a gap.
	gap := t.longestGap
	if since := time.Since(t.lastOK); since > gap {
		gap = since
	}
	return trafficReport{URL: t.url, Sent: t.sent, Failed: t.failed, LongestGap: gap, Truncated: truncated,
		Failures: append([]string(nil), t.failures...)}
}
