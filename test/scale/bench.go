package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
	floorNamespace    = "bench-floor"
)

// options are the benchmark's flags.
type options struct {
	Sizes         []int
	Quiet         time.Duration // the window after settling in which no request is expected
	SettleQuiet   time.Duration // how long without an operator request counts as settled
	Poll          time.Duration // how often the manager's metrics are read while settling
	SettleTimeout time.Duration
	Manager       managerSettings
	Profiles      string // folder for the manager's heap profiles; empty keeps none
	Runs          int    // how many times each size is measured; the report shows the median run
	Churn         churnOptions
	Config        []int // numbers of MyApps for the config run; none skips it
	Files         []int // numbers of MyApps for the files run; none skips it
}

// result is what one size measured.
type result struct {
	N               int
	Raw             time.Duration // the raw baseline: 2N applies from a client
	RawCPU          cpuTimes      // CPU each process used during the raw baseline
	Floor           time.Duration // the operator's writes for N MyApps, sent by a client
	FloorCPU        cpuTimes
	FloorSteps      []stepResult  // the floor, one kind of write at a time
	Least           time.Duration // the writes no operator can leave out, per MyApp in order, from a client
	LeastCPU        cpuTimes
	LeastWatched    time.Duration // the least writes with an operator's watches open
	LeastWatchedCPU cpuTimes
	LeastRequests   time.Duration // the least writes watched, with a GET before each child's apply
	LeastReqCPU     cpuTimes
	Create          time.Duration // creating the N MyApps
	Settle          time.Duration // first create until the operator's last request
	SettleCPU       cpuTimes      // CPU each process used from the first create until settled
	Requests        requestCounts // the operator's requests from first create to settled
	Quiet           requestCounts // the operator's requests in the quiet window
	QuietWindow     time.Duration
	Before          managerStats // the manager with its caches synced, before any MyApp
	Settled         managerStats
	After           managerStats  // at the end of the quiet window
	ScrapeDuration  time.Duration // mean time of one read of the manager's metrics while settling
	APIServer       string
	Runs            []runTimes // every run of this size, this one among them, when -runs is above 1
}

// runTimes are one run's wall times of the phases the report compares, so that the report
// can give every run's ratios and the plot every run's spread.
type runTimes struct {
	Raw, Least, LeastWatched, LeastRequests, Settle time.Duration
}

// times are the wall times of r's phases.
func (r result) times() runTimes {
	return runTimes{Raw: r.Raw, Least: r.Least, LeastWatched: r.LeastWatched, LeastRequests: r.LeastRequests,
		Settle: r.Settle}
}

// measureSize runs runSize opts.Runs times and returns the run of the median ratio, with every
// run's ratios, and keeps that run's heap profiles (-profiles). One run's ratio moves with
// whatever else the machine does meanwhile.
func measureSize(ctx context.Context, opts options, managerBin string, n int) (result, error) {
	runs := make([]result, 0, max(opts.Runs, 1))
	for k := range max(opts.Runs, 1) {
		if opts.Runs > 1 {
			log.Printf("N=%d: run %d of %d", n, k+1, opts.Runs)
		}
		res, err := runSize(ctx, opts, managerBin, n, k)
		if err != nil {
			return res, err
		}
		runs = append(runs, res)
	}
	res := medianRun(runs)
	return res, saveProfiles(opts.Profiles, &res)
}

// medianRun is the run whose settled / raw ratio is the median (of an even count, the higher
// middle one: the report does not flatter), carrying every run's ratios when there is more
// than one.
func medianRun(runs []result) result {
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b result) int { return cmp.Compare(a.ratio(), b.ratio()) })
	median := sorted[len(sorted)/2]
	if len(runs) > 1 {
		for _, r := range runs {
			median.Runs = append(median.Runs, r.times())
		}
	}
	return median
}

// runSize measures one size (run: its run's index): the raw baseline, the operator, the floor
// and the three least phases, each on a fresh envtest, so that each starts from the same empty
// API server. (On a shared one, the phase that runs later pays for the objects of the earlier
// ones: the API server's ClusterIP allocator, for one, walks every allocated address on each
// Service create.)
func runSize(ctx context.Context, opts options, managerBin string, n, run int) (res result, err error) {
	res = result{N: n, QuietWindow: opts.Quiet}
	dir, err := os.MkdirTemp("", "bench-scale-"+strconv.Itoa(n)+"-")
	if err != nil {
		return res, err
	}
	if err := onFreshCluster(ctx, filepath.Join(dir, "raw"), rawNamespace, func(c *cluster) error {
		log.Printf("N=%d: raw baseline: %d Deployments and %d Services from a client, %d at a time", n, n, n, concurrency)
		res.APIServer = c.version
		steps, err := rawBaseline(ctx, c.admin, rawNamespace, n)
		if err != nil {
			return err
		}
		res.Raw, res.RawCPU, _, err = c.timedSteps(ctx, "raw baseline", rawNamespace, n, steps)
		return err
	}); err != nil {
		return res, err
	}

	var template examplev1.MyAppStatus
	if err := onFreshCluster(ctx, filepath.Join(dir, "operator"), operatorNamespace, func(c *cluster) error {
		scraper, err := newAPIServerScraper(c.adminCfg)
		if err != nil {
			return err
		}
		mgr, err := startManager(managerBin, c.kubeconfig, filepath.Join(dir, "manager.log"), opts.Manager,
			"WATCH_NAMESPACE="+operatorNamespace)
		if err != nil {
			return err
		}
		defer mgr.stop()
		c.cpu.add(procManager, mgr.cmd.Process.Pid)
		if err := measureOperator(ctx, opts, c, scraper, mgr, &res); err != nil {
			return fmt.Errorf("at N=%d: %w (manager log: %s)", n, err, mgr.logPath)
		}
		if template, err = verifyConverged(ctx, c.admin, n); err != nil {
			return fmt.Errorf("at N=%d: %w", n, err)
		}
		return nil
	}); err != nil {
		return res, err
	}

	if err := onFreshCluster(ctx, filepath.Join(dir, "floor"), floorNamespace, func(c *cluster) error {
		log.Printf("N=%d: floor: the operator's writes for %d MyApps from a client, one kind at a time, %d at a time",
			n, n, concurrency)
		var err error
		res.Floor, res.FloorCPU, res.FloorSteps, err = c.timedSteps(ctx, "floor", floorNamespace, n,
			floorBaseline(c.admin, floorNamespace, n, template))
		return err
	}); err != nil {
		return res, err
	}
	// The three least phases run in turn, the other way round on every second run, so that a
	// drift of the machine's speed within a run does not always fall on the same phase.
	phases := []leastPhase{
		{name: "least writes", what: "no watch, no read", watch: false, read: false, wall: &res.Least, cpu: &res.LeastCPU},
		{name: "least writes, watched", what: "an operator's three watches open", watch: true, read: false, wall: &res.LeastWatched, cpu: &res.LeastWatchedCPU},
		{name: "least requests", what: "the watches open, a GET before each child's apply", watch: true, read: true, wall: &res.LeastRequests, cpu: &res.LeastReqCPU},
	}
	if run%2 == 1 {
		slices.Reverse(phases)
	}
	for _, p := range phases {
		if err := onFreshCluster(ctx, filepath.Join(dir, strings.NewReplacer(", ", "-", " ", "-").Replace(p.name)), floorNamespace,
			func(c *cluster) error { return c.measureLeast(ctx, p, n, template) }); err != nil {
			return res, err
		}
	}
	_ = os.RemoveAll(dir)
	return res, nil
}

// leastPhase is one of the phases in which a client sends the least writes: bare, with an
// operator's watches open (watch), and with those and a GET before each child's apply (read).
type leastPhase struct {
	name        string
	what        string // for the log
	watch, read bool
	wall        *time.Duration
	cpu         *cpuTimes
}

// measureLeast times the least phase p for n MyApps.
func (c *cluster) measureLeast(ctx context.Context, p leastPhase, n int, template examplev1.MyAppStatus) error {
	log.Printf("N=%d: %s: per MyApp its create, Service and Deployment applies and status (%s), %d MyApps at a time",
		n, p.name, p.what, concurrency)
	var watches *operatorWatches
	if p.watch {
		var err error
		// Each MyApp makes two MyApp events (its create and its status) and one event per child.
		if watches, err = openWatches(ctx, c.adminCfg, floorNamespace, 2*n, n, n); err != nil {
			return err
		}
	}
	wall, cpu, _, err := c.timedSteps(ctx, p.name, floorNamespace, n,
		[]writeStep{leastWrites(c.admin, floorNamespace, n, template, p.read)})
	if watches != nil {
		if err != nil {
			watches.stop()
			return err
		}
		if err := watches.close(ctx, time.Minute); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	*p.wall, *p.cpu = wall, cpu
	return err
}

// onFreshCluster runs phase on an envtest of its own, stopped afterwards, once the phase's
// namespace exists and the API server is warmed up (warmUp).
func onFreshCluster(ctx context.Context, dir, namespace string, phase func(c *cluster) error) (err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	c, err := startCluster(dir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, c.stop()) }()
	if err := c.createNamespace(ctx, namespace); err != nil {
		return err
	}
	if err := warmUp(ctx, c.admin, namespace); err != nil {
		return err
	}
	return phase(c)
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
	cpuBefore, err := c.cpu.read()
	if err != nil {
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
	settled, err := waitSettled(ctx, opts, c.cpu, mgr, created, res)
	if err != nil {
		return err
	}
	res.Settle = settled.last.Sub(start)
	res.SettleCPU = settled.cpu.since(cpuBefore)
	counts, err := scraper.scrape(ctx)
	if err != nil {
		return err
	}
	res.Requests = operatorDelta(before, counts)
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
	res.Quiet = operatorDelta(counts, after)
	if res.After, err = mgr.stats(ctx); err != nil {
		return err
	}
	return nil
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

// settledAt is when the operator's request counter last moved, and the processes' CPU times
// read just after.
type settledAt struct {
	last time.Time
	cpu  cpuTimes
}

// waitSettled polls the manager's own count of the requests its clients sent until the MyApps
// are all created, the count stayed still for opts.SettleQuiet and the manager's work queue is
// empty with no active worker. It reads the manager's small metrics page, not the API
// server's: that page is large, and reading it a few times a second would cost the API server
// CPU the raw baseline does not pay.
func waitSettled(ctx context.Context, opts options, cpu *cpuMeter, mgr *managerProcess,
	created <-chan error, res *result) (settledAt, error) {
	deadline := time.Now().Add(opts.SettleTimeout)
	var s settledAt
	prevRead := time.Now()
	lastCount := -1.0
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
		samples, err := mgr.scrape(ctx, "rest_client_requests_total", "workqueue_depth", "controller_runtime_active_workers")
		if err != nil {
			return s, err
		}
		now := time.Now()
		scrapeTime += now.Sub(t0)
		scrapes++
		res.ScrapeDuration = scrapeTime / time.Duration(scrapes)
		count, err := single(samples, "rest_client_requests_total", nil)
		if err != nil {
			return s, err
		}
		// A request happened between the previous read and this one; taking the middle
		// halves the error of taking either end.
		changedAt := prevRead.Add(t0.Sub(prevRead) / 2)
		prevRead = t0
		if count != lastCount {
			lastCount, s.last = count, changedAt
			if s.cpu, err = cpu.read(); err != nil {
				return s, err
			}
			continue
		}
		if !createsDone || now.Sub(s.last) < opts.SettleQuiet {
			if now.After(deadline) {
				return s, fmt.Errorf("the operator did not stop sending requests within %s", opts.SettleTimeout)
			}
			continue
		}
		working, err := busy(samples)
		if err != nil {
			return s, err
		}
		if !working {
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

// stepResult is what one writeStep took.
type stepResult struct {
	Name  string
	Raw   bool // the raw baseline sends these writes too
	Count int
	Wall  time.Duration
	CPU   cpuTimes // what each process used during the step
}

// timedSteps runs a client's writes of n MyApps' worth of children into namespace (the raw
// baseline, the floor, the least writes), step after step, each timed on its own; checks they left n
// Deployments and n Services there; and logs the times. It returns the steps' total wall and
// CPU time and each step's.
func (c *cluster) timedSteps(ctx context.Context, phase, namespace string, n int, steps []writeStep,
) (time.Duration, cpuTimes, []stepResult, error) {
	var (
		wall time.Duration
		cpu  = cpuTimes{}
		each = make([]stepResult, 0, len(steps))
	)
	for _, s := range steps {
		w, used, err := c.timed(func() error { return parallel(ctx, s.Count, s.Job) })
		if err != nil {
			return 0, nil, nil, fmt.Errorf("%s: %s: %w", phase, s.Name, err)
		}
		log.Printf("N=%d: %s: %d %s took %s", n, phase, s.Count, s.Name, w.Round(time.Millisecond))
		each = append(each, stepResult{Name: s.Name, Raw: s.Raw, Count: s.Count, Wall: w, CPU: used})
		wall += w
		cpu = cpu.plus(used)
	}
	if err := expectCount(ctx, c.admin, namespace, n); err != nil {
		return 0, nil, nil, fmt.Errorf("%s: %w", phase, err)
	}
	log.Printf("N=%d: %s took %s", n, phase, wall.Round(time.Millisecond))
	return wall, cpu, each, nil
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
// has its children and a status for its current generation with a Ready condition. It returns
// one of those statuses, which the floor writes.
func verifyConverged(ctx context.Context, c client.Client, n int) (examplev1.MyAppStatus, error) {
	if err := expectCount(ctx, c, operatorNamespace, n); err != nil {
		return examplev1.MyAppStatus{}, fmt.Errorf("the operator settled without converging: %w", err)
	}
	apps := &examplev1.MyAppList{}
	if err := c.List(ctx, apps, client.InNamespace(operatorNamespace)); err != nil {
		return examplev1.MyAppStatus{}, err
	}
	for _, app := range apps.Items {
		ready := meta.FindStatusCondition(app.Status.Conditions, "Ready")
		if app.Status.ObservedGeneration != app.Generation || ready == nil {
			return examplev1.MyAppStatus{}, fmt.Errorf("the operator settled without converging: "+
				"MyApp %s has observedGeneration %d (generation %d) and conditions %v",
				app.Name, app.Status.ObservedGeneration, app.Generation, app.Status.Conditions)
		}
	}
	return apps.Items[0].Status, nil
}
