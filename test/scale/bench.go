package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

const (
	rawNamespace      = "bench-raw"
	operatorNamespace = "bench-operator"
)

// options are the benchmark's flags.
type options struct {
	Sizes         []int
	Quiet         time.Duration // the window after settling in which no request is expected
	SettleQuiet   time.Duration // how long without an operator request counts as settled
	Poll          time.Duration // how often the API server's metrics are read while settling
	SettleTimeout time.Duration
	Manager       managerSettings
	Profiles      string // folder for the manager's heap profiles; empty keeps none
	Churn         churnOptions
}

// result is what one size measured.
type result struct {
	N              int
	Raw            time.Duration // the raw baseline: 2N applies from a client
	Create         time.Duration // creating the N MyApps
	Settle         time.Duration // first create until the operator's last request
	SettleChildren time.Duration // first create until its last request other than an event
	Requests       requestCounts // the operator's requests from first create to settled
	Quiet          requestCounts // the operator's requests in the quiet window
	QuietWindow    time.Duration
	Before         managerStats // the manager with its caches synced, before any MyApp
	Settled        managerStats
	After          managerStats  // at the end of the quiet window
	ScrapeDuration time.Duration // mean time of one read of the API server's metrics
	APIServer      string
}

// runSize measures one size on a fresh envtest.
func runSize(ctx context.Context, opts options, managerBin string, n int) (res result, err error) {
	res = result{N: n, QuietWindow: opts.Quiet}
	dir, err := os.MkdirTemp("", "bench-scale-"+strconv.Itoa(n)+"-")
	if err != nil {
		return res, err
	}
	log.Printf("N=%d: starting envtest (files in %s)", n, dir)
	c, err := startCluster(dir)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, c.stop()) }()
	res.APIServer = c.version
	scraper, err := newAPIServerScraper(c.adminCfg)
	if err != nil {
		return res, err
	}
	for _, ns := range []string{rawNamespace, operatorNamespace} {
		if err := c.createNamespace(ctx, ns); err != nil {
			return res, err
		}
	}

	log.Printf("N=%d: raw baseline: %d Deployments and %d Services from a client, %d at a time", n, n, n, concurrency)
	if res.Raw, err = rawBaseline(ctx, c.admin, rawNamespace, n); err != nil {
		return res, err
	}
	if err := expectCount(ctx, c.admin, rawNamespace, n); err != nil {
		return res, fmt.Errorf("raw baseline: %w", err)
	}
	log.Printf("N=%d: raw baseline took %s", n, res.Raw.Round(time.Millisecond))

	// The manager watches only its namespace: the raw baseline's objects carry the operator's
	// labels, and would otherwise sit in its cache and in its memory figures.
	mgr, err := startManager(managerBin, c.kubeconfig, filepath.Join(dir, "manager.log"), opts.Manager,
		"WATCH_NAMESPACE="+operatorNamespace)
	if err != nil {
		return res, err
	}
	defer mgr.stop()
	if err := measureOperator(ctx, opts, c, scraper, mgr, &res); err != nil {
		return res, fmt.Errorf("N=%d: %w (manager log: %s)", n, err, mgr.logPath)
	}
	if err := verifyConverged(ctx, c.admin, n); err != nil {
		return res, fmt.Errorf("N=%d: %w", n, err)
	}
	_ = os.RemoveAll(dir)
	return res, nil
}

// measureOperator creates the MyApps, waits for the operator to settle and then watches a
// quiet window.
func measureOperator(ctx context.Context, opts options, c *cluster, scraper *apiServerScraper,
	mgr *managerProcess, res *result) error {
	if err := mgr.waitReady(ctx, 2*time.Minute); err != nil {
		return err
	}
	// Its caches have synced; wait for its start-up lists and watches to be counted too.
	before, err := waitQuiet(ctx, scraper, opts.Poll, 2*time.Second, time.Minute)
	if err != nil {
		return fmt.Errorf("waiting for the manager's start-up requests to end: %w", err)
	}
	if res.Before, err = mgr.stats(ctx); err != nil {
		return err
	}

	log.Printf("N=%d: creating %d MyApps, %d at a time, and waiting for the operator to settle", res.N, res.N, concurrency)
	start := time.Now()
	created := make(chan error, 1)
	go func() {
		err := createMyApps(ctx, c.admin, operatorNamespace, res.N)
		res.Create = time.Since(start)
		created <- err
	}()
	settled, err := waitSettled(ctx, opts, scraper, mgr, before, created, res)
	if err != nil {
		return err
	}
	res.Settle = settled.last.Sub(start)
	res.SettleChildren = settled.lastNonEvent.Sub(start)
	res.Requests = operatorDelta(before, settled.counts)
	if res.Settled, err = mgr.stats(ctx); err != nil {
		return err
	}
	log.Printf("N=%d: settled after %s; watching a quiet window of %s",
		res.N, res.Settle.Round(time.Millisecond), opts.Quiet)

	select {
	case <-time.After(opts.Quiet):
	case <-ctx.Done():
		return ctx.Err()
	}
	after, err := scraper.scrape(ctx)
	if err != nil {
		return err
	}
	res.Quiet = operatorDelta(settled.counts, after)
	if res.After, err = mgr.stats(ctx); err != nil {
		return err
	}
	return saveProfiles(opts.Profiles, res)
}

// saveProfiles writes the heap profiles taken before the MyApps and after the quiet window.
func saveProfiles(dir string, res *result) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, st := range map[string]managerStats{"before": res.Before, "after": res.After} {
		path := filepath.Join(dir, fmt.Sprintf("heap-n%d-%s.pb.gz", res.N, name))
		if err := os.WriteFile(path, st.HeapProfile, 0o644); err != nil {
			return err
		}
	}
	log.Printf("N=%d: heap profiles in %s (go tool pprof -base heap-n%d-before.pb.gz heap-n%d-after.pb.gz)",
		res.N, dir, res.N, res.N)
	return nil
}

// settledCounts are the operator's request counters once it stopped, and when they last
// moved: all of them, and those other than events.
type settledCounts struct {
	counts             requestCounts
	last, lastNonEvent time.Time
}

// waitSettled polls the API server's request counters until the MyApps are all created, the
// manager's work queue is empty and no operator request was counted for opts.SettleQuiet.
func waitSettled(ctx context.Context, opts options, scraper *apiServerScraper, mgr *managerProcess,
	before requestCounts, created <-chan error, res *result) (settledCounts, error) {
	deadline := time.Now().Add(opts.SettleTimeout)
	s := settledCounts{counts: before, last: time.Now(), lastNonEvent: time.Now()}
	prevScrape := s.last
	var lastTotal, lastNonEvents float64
	createsDone := false
	var scrapeTime time.Duration
	scrapes := 0
	for {
		select {
		case err := <-created:
			if err != nil {
				return s, err
			}
			createsDone = true
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(opts.Poll):
		}
		t0 := time.Now()
		cur, err := scraper.scrape(ctx)
		if err != nil {
			return s, err
		}
		now := time.Now()
		scrapeTime += now.Sub(t0)
		scrapes++
		res.ScrapeDuration = scrapeTime / time.Duration(scrapes)
		// A change happened between the previous read and this one; taking the middle
		// halves the error of taking either end.
		changedAt := prevScrape.Add(t0.Sub(prevScrape) / 2)
		prevScrape = t0
		delta := operatorDelta(before, cur)
		if nonEvents := delta.total(func(k requestKey) bool { return !isEvent(k) }); nonEvents != lastNonEvents {
			lastNonEvents, s.lastNonEvent = nonEvents, changedAt
		}
		if total := delta.total(nil); total != lastTotal {
			lastTotal, s.counts, s.last = total, cur, changedAt
			continue
		}
		if !createsDone || now.Sub(s.last) < opts.SettleQuiet {
			if now.After(deadline) {
				return s, fmt.Errorf("the operator did not stop sending requests within %s", opts.SettleTimeout)
			}
			continue
		}
		busy, err := mgr.busy(ctx)
		if err != nil {
			return s, err
		}
		if !busy {
			return s, nil
		}
	}
}

// waitQuiet waits until the operator's request counters stay still for quiet, and returns
// them.
func waitQuiet(ctx context.Context, scraper *apiServerScraper, poll, quiet, timeout time.Duration,
) (requestCounts, error) {
	deadline := time.Now().Add(timeout)
	last, err := scraper.scrape(ctx)
	if err != nil {
		return nil, err
	}
	lastChange := time.Now()
	for time.Since(lastChange) < quiet {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("requests still counted after %s", timeout)
		}
		time.Sleep(poll)
		cur, err := scraper.scrape(ctx)
		if err != nil {
			return nil, err
		}
		if operatorDelta(last, cur).total(nil) != 0 {
			last, lastChange = cur, time.Now()
		}
	}
	return last, nil
}

// expectCount checks that the namespace holds n Deployments and n Services.
func expectCount(ctx context.Context, c client.Client, namespace string, n int) error {
	deps := &appsv1.DeploymentList{}
	svcs := &corev1.ServiceList{}
	for _, l := range []client.ObjectList{deps, svcs} {
		if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
			return err
		}
	}
	if len(deps.Items) != n || len(svcs.Items) != n {
		return fmt.Errorf("%s holds %d Deployments and %d Services, want %d of each",
			namespace, len(deps.Items), len(svcs.Items), n)
	}
	return nil
}

// verifyConverged checks, after the measurement, that the operator did its job: every MyApp
// has its children and a status for its current generation with a Ready condition.
func verifyConverged(ctx context.Context, c client.Client, n int) error {
	if err := expectCount(ctx, c, operatorNamespace, n); err != nil {
		return fmt.Errorf("the operator settled without converging: %w", err)
	}
	apps := &examplev1.MyAppList{}
	if err := c.List(ctx, apps, client.InNamespace(operatorNamespace)); err != nil {
		return err
	}
	for _, app := range apps.Items {
		ready := meta.FindStatusCondition(app.Status.Conditions, "Ready")
		if app.Status.ObservedGeneration != app.Generation || ready == nil {
			return fmt.Errorf("the operator settled without converging: "+
				"MyApp %s has observedGeneration %d (generation %d) and conditions %v",
				app.Name, app.Status.ObservedGeneration, app.Generation, app.Status.Conditions)
		}
	}
	return nil
}
