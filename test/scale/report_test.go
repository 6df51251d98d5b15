package main

import (
	"strings"
	"testing"
	"time"
)

func TestMarkdownTables(t *testing.T) {
	rep := report{
		Results: []result{{N: 10, Raw: time.Second, Settle: 2 * time.Second, FloorSteps: []stepResult{
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
		"| the floor's applies / the raw baseline (the same writes: near 1 unless the run was noisy) | 1.50× | — | — |\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
