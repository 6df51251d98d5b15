package main

import (
	"strings"
	"testing"
	"time"
)

func TestMarkdownTables(t *testing.T) {
	rep := report{
		Results: []result{{N: 10, Raw: time.Second, Settle: 2 * time.Second, Least: 1800 * time.Millisecond,
			LeastWatched: 1900 * time.Millisecond, LeastRequests: 2100 * time.Millisecond,
			Runs: []runTimes{runOf(1, 2, 1.8, 1.9, 2.1), runOf(1, 2.5, 1.9, 1.9, 1.9), runOf(2, 3.2, 3.5, 3.6, 4)},
			FloorSteps: []stepResult{
				{Name: "MyApp creates", Count: 10, Wall: time.Second / 2, CPU: cpuTimes{procAPIServer: 15 * time.Millisecond}},
				{Name: "Deployment applies", Raw: true, Count: 10, Wall: time.Second / 2},
				{Name: "Service applies", Raw: true, Count: 10, Wall: time.Second},
			}}},
		Churn: []churnResult{{N: 10, Nodes: 2, FirstReady: time.Second}, {N: 20, Nodes: 2, Err: "boom"}},
	}
	md := rep.markdown("")
	for _, want := range []string{
		"| figure | N=10 | 0.2.0, N=1000 (issue 8) | goal |\n|---|---|---|---|\n",
		"| ratio, settled / raw | **2.0×** | **4.1×** | **≤ 1.5×** |\n",
		"| figure | N=10 | N=20 |\n|---|---|---|\n| simulated nodes (250 pods each) | 2 | 2 |\n",
		"| from the first create to all N Ready | 1.00 s | failed |\n",
		"N=20 failed: boom",
		"| … of which the MyApp creates | 0.50 s (API server: 1.50 ms CPU a write) | — | — |\n",
		"| least writes / raw (of the run shown): about the lowest ratio any operator can reach while both cores are busy | **1.8×** | — | — |\n",
		"| settled / least writes (above 1: what the operator adds) | 1.11× | — | ≤ 1.10× |\n",
		"| settled / raw in each of 3 runs (the table shows the median run; of an even count, the higher middle one) | 2.0×, 2.5×, 1.6× | — | ≤ 1.5× |\n",
		"| least writes / raw in each of the 3 runs | 1.8×, 1.9×, 1.8× | — | — |\n",
		"| settled / least writes in each of the 3 runs, and their median | 1.11×, 1.32×, 0.91×; median **1.11×** | — | ≤ 1.10× |\n",
		"| watched / least writes: what the watches add, with no reconciler | 1.06× | — | — |\n",
		"| least requests / least writes: what the watches and the GETs add, with no reconciler | 1.17× | — | — |\n",
		"| watched / least writes in each of the 3 runs, and their median | 1.06×, 1.00×, 1.03×; median **1.03×** | — | — |\n",
		"| settled / least requests (above 1: what the operator adds beyond them) | 0.95× | — | — |\n",
		"| least requests / least writes in each of the 3 runs, and their median | 1.17×, 1.00×, 1.14×; median **1.14×** | — | — |\n",
		"| settled / least requests in each of the 3 runs, and their median | 0.95×, 1.32×, 0.80×; median **0.95×** | — | — |\n",
		"| the floor's applies / the raw baseline (the same writes: near 1 unless the run was noisy) | 1.50× | — | — |\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

func TestMedianRunIsTheMiddleRatio(t *testing.T) {
	runs := []result{
		{Raw: time.Second, Settle: 3 * time.Second, Least: 2 * time.Second, LeastWatched: 2100 * time.Millisecond,
			LeastRequests: 2 * time.Second, Create: time.Second},
		{Raw: time.Second, Settle: 2 * time.Second, Least: 1800 * time.Millisecond, LeastWatched: 1900 * time.Millisecond,
			LeastRequests: 2 * time.Second},
		{Raw: 2 * time.Second, Settle: 9 * time.Second, Least: 4 * time.Second, LeastWatched: 4 * time.Second,
			LeastRequests: 5 * time.Second},
		{Raw: time.Second, Settle: 1500 * time.Millisecond, Least: 1700 * time.Millisecond, LeastWatched: 1200 * time.Millisecond,
			LeastRequests: time.Second},
	}
	got := medianRun(runs)
	if got.Create != time.Second {
		t.Errorf("medianRun chose the run of ratio %.2f, want the higher middle one, 3.0", got.ratio())
	}
	want := []runTimes{runOf(1, 3, 2, 2.1, 2), runOf(1, 2, 1.8, 1.9, 2), runOf(2, 9, 4, 4, 5), runOf(1, 1.5, 1.7, 1.2, 1)}
	if len(got.Runs) != len(want) {
		t.Fatalf("the median run carries %d runs' times, want %d", len(got.Runs), len(want))
	}
	for i := range want {
		if got.Runs[i] != want[i] {
			t.Errorf("run %d: times %+v, want %+v", i, got.Runs[i], want[i])
		}
	}
	if one := medianRun(runs[:1]); one.Runs != nil {
		t.Errorf("a single run lists its times: %+v", one.Runs)
	}
}

// runOf is a run's wall times in seconds: raw, settled, least writes, watched, least requests.
func runOf(raw, settle, least, watched, requests float64) runTimes {
	s := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	return runTimes{Raw: s(raw), Settle: s(settle), Least: s(least), LeastWatched: s(watched), LeastRequests: s(requests)}
}
