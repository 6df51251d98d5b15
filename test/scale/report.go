package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// none is the cell of a figure not measured, or of a goal not set.
const none = "—"

// report is everything docs/performance/benchmarks.md says.
type report struct {
	Command string
	Options options
	Date    time.Time
	Machine machine
	Results []result
	Churn   []churnResult
	Config  []configResult
}

// row is one line of the summary table: a figure per size, then 0.2.0 and the goal.
type row struct {
	figure     string
	value      func(r result) string
	v020, goal string
}

const (
	mib = 1 << 20
	kib = 1 << 10
)

func secs(d time.Duration) string { return seconds(d) + " s" }

// seconds keeps two significant decimals for short times and one for the others.
func seconds(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.2f", d.Seconds())
	}
	return fmt.Sprintf("%.1f", d.Seconds())
}

func perApp(v float64, r result) string { return fmt.Sprintf("%.2f", v/float64(r.N)) }

// over is a / b, the ratio of two wall times.
func over(a, b time.Duration) float64 { return a.Seconds() / b.Seconds() }

func (r result) ratio() float64 { return over(r.Settle, r.Raw) }

func (r result) leastRatio() float64 { return over(r.Least, r.Raw) }

// cpuSplit is "API server + etcd [+ manager] + benchmark = total s (cores busy)" for a phase
// of the given wall time.
func cpuSplit(t cpuTimes, wall time.Duration) string {
	var parts []string
	for _, name := range processOrder {
		if v, ok := t[name]; ok {
			parts = append(parts, fmt.Sprintf("%.1f", v.Seconds()))
		}
	}
	return fmt.Sprintf("%s = %.1f s (%.2f cores)", strings.Join(parts, " + "), t.total().Seconds(),
		t.total().Seconds()/wall.Seconds())
}

func (rep report) rows() []row {
	quiet := fmt.Sprintf("requests in a quiet %s window after settling", rep.Options.Quiet)
	rows := []row{
		{"time until the operator stops sending requests", func(r result) string { return secs(r.Settle) }, "29.7 s", none},
		{"raw baseline (the same Deployments and Services from a client)",
			func(r result) string { return secs(r.Raw) }, "7.3 s", none},
		{"ratio, settled / raw",
			func(r result) string { return fmt.Sprintf("**%.1f×**", r.ratio()) }, "**4.1×**", "**≤ 1.5×**"},
		{"least writes: per MyApp the create, 2 applies and status no operator can leave out, sent in that order by a client with no operator (10 MyApps in flight)",
			func(r result) string { return secs(r.Least) }, none, none},
		{"least writes / raw (of the run shown): about the lowest ratio any operator can reach while both cores are busy",
			func(r result) string { return fmt.Sprintf("**%.1f×**", r.leastRatio()) }, none, none},
		{"settled / least writes (above 1: what the operator adds)",
			func(r result) string { return fmt.Sprintf("%.2f×", r.Settle.Seconds()/r.Least.Seconds()) }, none, "≤ 1.10×"},
		{"least writes, watched: the least writes with an operator's three watches open (MyApps, Deployments, Services), every event decoded by the client",
			func(r result) string { return secs(r.LeastWatched) }, none, none},
		{"least requests: the least writes, watched, with an uncached GET before each child's apply (1 per child, as issue 19 allows a new MyApp)",
			func(r result) string { return secs(r.LeastRequests) }, none, none},
		{"watched / least writes: what the watches add, with no reconciler",
			func(r result) string { return fmt.Sprintf("%.2f×", r.LeastWatched.Seconds()/r.Least.Seconds()) }, none, none},
		{"least requests / least writes: what the watches and the GETs add, with no reconciler",
			func(r result) string { return fmt.Sprintf("%.2f×", r.LeastRequests.Seconds()/r.Least.Seconds()) }, none, none},
		{"settled / least requests (above 1: what the operator adds beyond them)",
			func(r result) string { return fmt.Sprintf("%.2f×", r.Settle.Seconds()/r.LeastRequests.Seconds()) }, none, none},
	}
	rows = append(rows, rep.runRows()...)
	rows = append(rows, row{"floor: the operator's writes from a client (MyApp create, 2 applies, status, event; one kind at a time, 10 in flight)",
		func(r result) string { return secs(r.Floor) }, none, none})
	rows = append(rows, rep.floorStepRows()...)
	return append(rows, []row{
		{"floor / raw: what those writes cost beyond the raw baseline's",
			func(r result) string { return fmt.Sprintf("%.1f×", r.Floor.Seconds()/r.Raw.Seconds()) }, none, none},
		{"CPU of the raw baseline: API server + etcd + benchmark",
			func(r result) string { return cpuSplit(r.RawCPU, r.Raw) }, none, none},
		{"CPU of the least writes: API server + etcd + benchmark",
			func(r result) string { return cpuSplit(r.LeastCPU, r.Least) }, none, none},
		{"CPU of the least writes, watched: API server + etcd + benchmark",
			func(r result) string { return cpuSplit(r.LeastWatchedCPU, r.LeastWatched) }, none, none},
		{"CPU of the least requests: API server + etcd + benchmark",
			func(r result) string { return cpuSplit(r.LeastReqCPU, r.LeastRequests) }, none, none},
		{"CPU of the floor: API server + etcd + benchmark",
			func(r result) string { return cpuSplit(r.FloorCPU, r.Floor) }, none, none},
		{"CPU until settled: API server + etcd + manager + benchmark",
			func(r result) string { return cpuSplit(r.SettleCPU, r.Settle) }, none, none},
		{"creating the N MyApps (part of the settle time)", func(r result) string { return secs(r.Create) }, none, none},
		{"reconciles per new MyApp",
			func(r result) string { return perApp(r.Settled.Reconciles-r.Before.Reconciles, r) }, "2", none},
		{"reconcile errors",
			func(r result) string { return fmt.Sprintf("%.0f", r.After.ReconcileErrors-r.Before.ReconcileErrors) }, none, "0"},
		{"mutating requests per MyApp to converge (applies + status, events aside)",
			func(r result) string { return perApp(r.Requests.total(isMutatingChild), r) }, "5.0", "≤ 3 (≤ 4 with HPA)"},
		{"live GETs per MyApp to converge (a MyApp has 2 children: a Deployment and a Service)",
			func(r result) string { return perApp(r.Requests.total(isLiveGet), r) }, "4", "≤ 2 (1 per child)"},
		{"event requests per MyApp", func(r result) string { return perApp(r.Requests.total(isEvent), r) }, none, none},
		{"all operator requests per MyApp (incl. events, lists, watches)",
			func(r result) string { return perApp(r.Requests.total(nil), r) }, none, none},
		{quiet, func(r result) string { return fmt.Sprintf("%.0f", r.Quiet.total(nil)) }, "0", "0"},
		{"reconciles in the quiet window",
			func(r result) string { return fmt.Sprintf("%.0f", r.After.Reconciles-r.Settled.Reconciles) }, none, none},
		{"manager live heap after a forced GC: before any MyApp → after", func(r result) string {
			return fmt.Sprintf("%.1f → %.1f MiB", r.Before.LiveHeap/mib, r.After.LiveHeap/mib)
		}, none, none},
		{"live heap per MyApp", func(r result) string {
			return fmt.Sprintf("%.1f KiB", (r.After.LiveHeap-r.Before.LiveHeap)/kib/float64(r.N))
		}, none, "< 10 KiB at N=5000"},
		{"manager heap in use (live and garbage): before any MyApp → after", func(r result) string {
			return fmt.Sprintf("%.1f → %.1f MiB", r.Before.HeapInuse/mib, r.After.HeapInuse/mib)
		}, none, none},
		{"heap in use per MyApp", func(r result) string {
			return fmt.Sprintf("%.1f KiB", (r.After.HeapInuse-r.Before.HeapInuse)/kib/float64(r.N))
		}, none, none},
		{"manager RSS: before any MyApp → after", func(r result) string {
			return fmt.Sprintf("%.1f → %.1f MiB", r.Before.RSS/mib, r.After.RSS/mib)
		}, "76 MB (after)", none},
		{"RSS per MyApp",
			func(r result) string { return fmt.Sprintf("%.1f KiB", (r.After.RSS-r.Before.RSS)/kib/float64(r.N)) }, none, none},
		{"one read of the manager's /metrics while settling (mean; with -poll, the settle time's resolution)",
			func(r result) string { return fmt.Sprintf("%d ms", r.ScrapeDuration.Milliseconds()) }, none, none},
		{"cross-check: requests the manager's clients counted / operator requests the API server counted",
			func(r result) string {
				return fmt.Sprintf("%.0f / %.0f", r.Settled.ClientRequests-r.Before.ClientRequests, r.Requests.total(nil))
			}, none, "equal"},
	}...)
}

// runRows list, with -runs above 1, every run's ratios; the table's other figures are those of
// the run of the median settled / raw ratio.
func (rep report) runRows() []row {
	runs := 0
	for _, r := range rep.Results {
		runs = max(runs, len(r.Runs))
	}
	if runs < 2 {
		return nil
	}
	each := func(ratio func(runTimes) float64) func(r result) string {
		return func(r result) string {
			if len(r.Runs) == 0 {
				return none
			}
			var parts []string
			for _, run := range r.Runs {
				parts = append(parts, fmt.Sprintf("%.1f×", ratio(run)))
			}
			return strings.Join(parts, ", ")
		}
	}
	return []row{
		{fmt.Sprintf("settled / raw in each of %d runs (the table shows the median run; of an even count, the higher middle one)", runs),
			each(func(r runTimes) float64 { return over(r.Settle, r.Raw) }), none, "≤ 1.5×"},
		{fmt.Sprintf("least writes / raw in each of the %d runs", runs),
			each(func(r runTimes) float64 { return over(r.Least, r.Raw) }), none, none},
		// The median run by settled / raw can be one whose least writes were unusually quick or
		// slow: each run's own settled / least writes, and their median, say what the operator adds.
		{fmt.Sprintf("settled / least writes in each of the %d runs, and their median", runs),
			withMedian(func(r runTimes) float64 { return over(r.Settle, r.Least) }), none, "≤ 1.10×"},
		{fmt.Sprintf("watched / least writes in each of the %d runs, and their median", runs),
			withMedian(func(r runTimes) float64 { return over(r.LeastWatched, r.Least) }), none, none},
		{fmt.Sprintf("least requests / least writes in each of the %d runs, and their median", runs),
			withMedian(func(r runTimes) float64 { return over(r.LeastRequests, r.Least) }), none, none},
		{fmt.Sprintf("settled / least requests in each of the %d runs, and their median", runs),
			withMedian(func(r runTimes) float64 { return over(r.Settle, r.LeastRequests) }), none, none},
	}
}

// withMedian lists a ratio of each run, in run order, and their median (of an even count, the
// higher middle one).
func withMedian(ratio func(runTimes) float64) func(r result) string {
	return func(r result) string {
		if len(r.Runs) == 0 {
			return none
		}
		ratios := make([]float64, 0, len(r.Runs))
		parts := make([]string, 0, len(r.Runs))
		for _, run := range r.Runs {
			ratios = append(ratios, ratio(run))
			parts = append(parts, fmt.Sprintf("%.2f×", ratio(run)))
		}
		slices.Sort(ratios)
		return strings.Join(parts, ", ") + fmt.Sprintf("; median **%.2f×**", ratios[len(ratios)/2])
	}
}

// floorStepRows are the floor's steps, one row each: how long the N writes of one kind took
// and what one cost the API server. A last row compares the floor's applies with the raw
// baseline, which sends the same: far from 1, the run was noisy.
func (rep report) floorStepRows() []row {
	var steps []stepResult
	for _, r := range rep.Results {
		if len(r.FloorSteps) > len(steps) {
			steps = r.FloorSteps
		}
	}
	rows := make([]row, 0, len(steps))
	for k, step := range steps {
		rows = append(rows, row{"… of which the " + step.Name, func(r result) string {
			if k >= len(r.FloorSteps) {
				return none
			}
			s := r.FloorSteps[k]
			return fmt.Sprintf("%s (API server: %.2f ms CPU a write)", secs(s.Wall),
				s.CPU[procAPIServer].Seconds()*1000/float64(s.Count))
		}, none, none})
	}
	if len(steps) == 0 {
		return nil
	}
	return append(rows, row{"the floor's applies / the raw baseline (the same writes: near 1 unless the run was noisy)",
		func(r result) string {
			var applies time.Duration
			for _, s := range r.FloorSteps {
				if s.Raw {
					applies += s.Wall
				}
			}
			if applies == 0 {
				return none
			}
			return fmt.Sprintf("%.2f×", applies.Seconds()/r.Raw.Seconds())
		}, none, none})
}

func (rep report) markdown(plot string) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Scale benchmark\n\n")
	p("Written by `make bench-scale` ([test/scale](../../test/scale)) on %s; rerun it rather than editing this\n",
		rep.Date.Format("2006-01-02 15:04 MST"))
	p("file. What is measured and why is described in issue 8 and under [Method](#method).\n\n")

	m := rep.Machine
	p("## Machine\n\n| | |\n|---|---|\n")
	p("| CPU | %d × %s |\n| memory | %.1f GiB |\n", m.CPUs, m.Model, m.MemoryGiB)
	p("| kernel | %s |\n| Go | %s |\n", m.Kernel, m.Go)
	p("| control plane | envtest: kube-apiserver %s, etcd %s |\n\n", m.APIServer, m.Etcd)
	p("Other work shared the machine; its timings vary from run to run.\n\n")

	p("## Command\n\n```\n%s\n```\n\n", rep.Command)
	p("How these figures chose the manager's defaults and its memory limit, and how they moved between releases: [tuning.md](tuning.md).\n\n")
	p("Manager flags: `%s` (others at the defaults of cmd/main.go).\n\n", strings.Join(append([]string{
		"--metrics-bind-address=127.0.0.1:<free port>", "--metrics-secure=false", "--health-probe-bind-address=0",
	}, rep.Options.Manager.args()...), " "))

	p("## Results\n\n")
	header := []string{"figure"}
	for _, r := range rep.Results {
		header = append(header, fmt.Sprintf("N=%d", r.N))
	}
	all := rep.rows()
	rows := make([][]string, 0, len(all))
	for _, rw := range all {
		row := []string{rw.figure}
		for _, r := range rep.Results {
			row = append(row, rw.value(r))
		}
		rows = append(rows, append(row, rw.v020, rw.goal))
	}
	markdownTable(p, append(header, "0.2.0, N=1000 (issue 8)", "goal"), rows)
	if plot != "" {
		p("\n![The operator's time to settle beside the raw writes, the least writes and the least requests, per MyApp and N](%s)\n\n", plot)
		p("The chart draws, for each N, four phases' wall time divided by N, so that every N shares one axis:\n")
		p("the raw writes (grey), the least writes (blue), the least requests (green) and the operator until it\n")
		p("stopped sending requests (orange). Each bar and its figure are the table's, from the run of the median\n")
		p("settled / raw ratio; with `-runs` above 1, the rings are every run and the whiskers their range, from the\n")
		p("quickest run to the slowest. (At N=1000, milliseconds per MyApp read as seconds for the phase.)\n\n")
	}
	rep.churnTable(p)
	rep.configTable(p)
	rep.requestTable(p)
	rep.quietTable(p)
	p("%s", methodText)
	return b.String()
}

// markdownTable writes a table with the given header and rows.
func markdownTable(p func(string, ...any), header []string, rows [][]string) {
	p("| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat("---|", len(header)))
	for _, row := range rows {
		p("| %s |\n", strings.Join(row, " | "))
	}
}

// churnTable reports the churn run on the local cluster.
func (rep report) churnTable(p func(string, ...any)) {
	if len(rep.Churn) == 0 {
		return
	}
	p("## Churn: a new image for every MyApp, on the local cluster\n\n")
	p("On the local cluster (`hack/localcluster`: kube-apiserver, etcd, kube-controller-manager and\n")
	p("kube-scheduler, with kwok playing the kubelet of simulated nodes, whose pods turn Ready at once),\n")
	p("N MyApps are created and brought to Ready; then the image of all N is changed (%d at a time) and\n", concurrency)
	p("the time until every MyApp is Ready again is measured: its Deployment rolled out to the new image\n")
	p("on all replicas, and the MyApp Ready for its generation.\n\n")
	header := []string{"figure"}
	for _, r := range rep.Churn {
		header = append(header, fmt.Sprintf("N=%d", r.N))
	}
	rows := make([][]string, 0, 4)
	for i, rw := range []struct {
		figure string
		value  func(churnResult) string
	}{
		{"simulated nodes (250 pods each)", func(r churnResult) string { return strconv.Itoa(r.Nodes) }},
		{"from the first create to all N Ready", func(r churnResult) string { return secs(r.FirstReady) }},
		{"**from the first image change to all N Ready on it**", func(r churnResult) string { return "**" + secs(r.ChurnReady) + "**" }},
		{"… of which changing the N images", func(r churnResult) string { return secs(r.ChurnPatches) }},
	} {
		row := []string{rw.figure}
		for _, r := range rep.Churn {
			if r.Err != "" && i > 0 {
				row = append(row, "failed")
				continue
			}
			row = append(row, rw.value(r))
		}
		rows = append(rows, row)
	}
	markdownTable(p, header, rows)
	for _, r := range rep.Churn {
		if r.Err != "" {
			p("\nN=%d failed: %s\n", r.N, r.Err)
		}
	}
	p("\n")
}

// requestTable lists the operator's requests by resource, verb and response code.
func (rep report) requestTable(p func(string, ...any)) {
	p("## Requests per MyApp by resource and verb\n\n")
	p("From the API server's `apiserver_request_total`, from the first create until the operator settled;\n")
	p("each cell is requests per MyApp (total in brackets). LIST and WATCH are the informers' and do not grow\n")
	p("with N.\n\n| resource | verb | code |")
	for _, r := range rep.Results {
		p(" N=%d |", r.N)
	}
	p("\n|---|---|---|")
	for range rep.Results {
		p("---|")
	}
	p("\n")
	all := requestCounts{}
	for _, r := range rep.Results {
		for k := range r.Requests {
			all[k] = 1
		}
	}
	for _, k := range all.sortedKeys() {
		p("| %s | %s | %s |", k.resourceName(), k.Verb, k.Code)
		for _, r := range rep.Results {
			v := r.Requests[k]
			p(" %.2f (%.0f) |", v/float64(r.N), v)
		}
		p("\n")
	}
	p("\n")
}

// quietTable lists what the operator sent in the quiet window, if anything.
func (rep report) quietTable(p func(string, ...any)) {
	found := false
	for _, r := range rep.Results {
		for _, k := range r.Quiet.sortedKeys() {
			if !found {
				p("## Requests in the quiet window\n\n| N | resource | verb | code | requests |\n|---|---|---|---|---|\n")
				found = true
			}
			p("| %d | %s | %s | %s | %.0f |\n", r.N, k.resourceName(), k.Verb, k.Code, r.Quiet[k])
		}
	}
	if found {
		p("\n")
	}
}

const methodText = `## Method

- **Control plane.** For each N and run, six fresh envtests (kube-apiserver and etcd, no controller
  manager, no nodes), one per phase, so that each phase starts from the same empty API server;
  each with ` + "`--service-cluster-ip-range=" + serviceCIDR + "`" + ` so that N Services fit, and the CRD from
  config/crd/bases. Before its clock starts, each phase sends one of each write it times (dry runs
  of a MyApp create, a Deployment and a Service apply and an event; the create of a MyApp in a
  namespace of its own, out of the manager's sight, and a patch of its status), so that a fresh
  API server's one-time costs are in none of the figures. (On one shared API server the later phase pays for the earlier one's objects:
  the ClusterIP allocator walks every allocated address on each Service create, a sixth of the API
  server's CPU at N=1000 in a profile.)
- **Raw baseline.** An admin client (no client-side rate limit) server-side applies, 10 at a time,
  the N Deployments and N Services the operator makes for a MyApp with replicas 2 and image
  nginx:1.27: the objects come from the operator's own builders (` + "`desired.Deployment`, `desired.Service`" + `)
  on the API server's defaulting of that MyApp, field owner ` + "`bench-raw`" + `. The figure is the wall time
  of those 2N requests.
- **Floor.** The same client sends the writes the operator makes for N new MyApps, one kind at a
  time, each kind N times, 10 in flight: the MyApps' creates (the user's), the applies of their
  Deployments and of their Services, a merge patch of each status (the status the operator wrote in
  the operator phase) and one event each. Each kind is timed on its own, with the API server's CPU
  per write, so the table shows what each write costs; the floor is their sum. Floor / raw is what
  these writes cost the API server beyond the raw baseline's. The floor's two applies send what
  the raw baseline sends; their ratio to it shows how noisy the run was.
- **Least writes.** The same client sends, per MyApp and in the operator's order, the writes no
  operator that keeps an honest status can leave out: the user's create, the Service and the
  Deployment applies and one status patch (not the event), 10 MyApps in flight. An operator sends
  at least these requests and does its own work besides. While both cores are busy (the CPU rows
  show near 2 cores in the phases compared), more requests in flight do not make them cheaper, so least
  writes / raw is about the lowest ratio any operator could reach in that run, and settled / least
  writes is what this operator adds to it. Where the cores are not all busy, it is no bound: an
  operator keeping more requests in flight (the users' creates beside its own writes) can settle
  sooner, and settled / least writes can fall below 1.
- **Least writes, watched, and least requests.** The least writes twice more, each on a fresh
  envtest. Watched: with a watch each on the namespace's MyApps, Deployments and Services open
  for the whole phase, as an informer-based operator keeps them (without its label selector),
  every event decoded by the client; the phase fails if a watch ends early or decodes fewer
  events than the writes made (two per MyApp, one per child). Least requests: watched, and
  before each child's apply an uncached GET of it, which finds nothing (the one GET per child
  issue 19 allows a new MyApp; this operator's check before it takes over a child). No
  reconciler runs in them, but the client's decoding of the watches is work an operator does
  too. Their ratios to the least writes are what the watches, and the watches with the GETs,
  add; settled / least requests is what this operator adds beyond both. The three least
  phases run in turn, the other way round on every second run, so that a drift of the machine's
  speed within a run does not always fall on the same one.
- **Runs.** ` + "`-runs K`" + ` measures each N K times, each run on its own fresh envtests; the table shows
  the run whose settled / raw ratio is the median (of an even count, the higher middle one), and
  lists every run's ratios. ` + "`-profiles`" + ` keeps that run's heap profiles.
- **Operator.** The manager is built once (` + "`go build ./cmd`" + `) and run as its own process with its own
  user's kubeconfig, watching its namespace (` + "`WATCH_NAMESPACE`" + `). Once it has started its workers and
  its start-up lists and watches are counted, the benchmark creates N MyApps (replicas 2,
  nginx:1.27) 10 at a time.
- **Settled.** The manager's own ` + "`rest_client_requests_total`" + ` (every request its clients send, events
  included) is read every poll interval (` + "`-poll`" + `) from its metrics endpoint; the operator has settled
  when all MyApps are created, that count did not move for ` + "`-settle-quiet`" + ` (3 s) and the manager's work
  queue is empty with no active worker. The settle time runs from the first create to the middle of
  the poll interval in which the count last moved, so it is good to about one poll interval. The
  API server's metrics are not read while settling: that page is large, and reading it four times
  a second cost the API server about a tenth of its CPU in a profile, which the raw baseline does
  not pay. They are read before the first create and once settled: the requests by resource and
  verb are the difference, counted on the resources only the operator touches in that phase
  (deployments, services, horizontalpodautoscalers, poddisruptionbudgets, networkpolicies, replicasets,
  events and myapps, the status subresource included, the benchmark's MyApp creates excluded). The manager's
  count is reported beside them as a cross-check.
- **CPU.** User and system time of the kube-apiserver, etcd, the manager and the benchmark itself,
  read from /proc before and after each phase (the operator phase: at the poll that saw the last
  request). "Cores" is that total over the phase's wall time; the machine has two.
- **Quiet window.** After settling, the same counters over ` + "`-quiet`" + `; nothing is expected to move, since
  no child changes (no controller manager) and the cache's resync (` + "`--sync-period`" + `, 10 min) comes after it.
- **Memory.** The manager runs with ` + "`--pprof-bind-address`" + ` on localhost; before each reading the
  benchmark fetches its heap profile with ` + "`?gc=1`" + `, which runs a garbage collection first. Then
  ` + "`go_gc_heap_live_bytes`" + ` (the heap that collection found reachable), ` + "`go_memstats_heap_inuse_bytes`" + `
  and ` + "`process_resident_memory_bytes`" + ` are read from the manager's own metrics endpoint, once with its
  caches synced and no MyApp, once at the end of the quiet window; per MyApp is the difference
  divided by N. The live heap is what the MyApps cost; heap in use and RSS also hold memory the
  runtime has not yet returned. ` + "`-profiles DIR`" + ` keeps the heap profiles (` + "`go tool pprof`" + `).
- **Checked after measuring.** Every MyApp has its Deployment and Service and a status for its
  generation with a Ready condition; otherwise the run fails. Any figure that cannot be measured
  (a failed scrape, a missing metric) fails the run rather than showing 0.

## Not measured here

- The churn run on real pods: kwok's pods are Ready the moment they are scheduled, so the churn
  figures measure the control plane and the operator, not image pulls or probes.
- N=5000 is not in the default run (` + "`make bench-scale BENCH_SCALE_FLAGS='-n 5000'`" + ` measures it).
`
