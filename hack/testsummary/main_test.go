package main

import (
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	cases := map[string]struct {
		in                      string
		passed, failed, skipped int
		specs, packagesFailed   int
		wantOut, notOut         []string
	}{
		"a passing package": {
			in: `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA/sub"}
{"Action":"skip","Package":"p","Test":"TestB"}
{"Action":"pass","Package":"p","Elapsed":1.5}`,
			passed: 2, skipped: 1,
			wantOut: []string{"ok  \tp\t1.500s"}, notOut: []string{"=== RUN"},
		},
		"a failed test prints its output": {
			in: `{"Action":"output","Package":"p","Test":"TestA","Output":"boom at a_test.go:3\n"}
{"Action":"fail","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Output":"FAIL\n"}
{"Action":"fail","Package":"p","Elapsed":0.1}`,
			failed: 1, packagesFailed: 1,
			wantOut: []string{"boom at a_test.go:3", "FAIL"},
		},
		"Ginkgo specs are counted from the suite's summary": {
			in: `{"Action":"output","Package":"c","Test":"TestControllers","Output":"Ran 12 of 14 Specs in 3.2 seconds\n"}
{"Action":"pass","Package":"c","Test":"TestControllers"}
{"Action":"pass","Package":"c","Elapsed":3}`,
			passed: 1, specs: 12,
		},
		"lines that are not JSON pass through": {
			in:      "# p\n./a.go:1:1: syntax error\n" + `{"Action":"fail","Package":"p","Elapsed":0}`,
			wantOut: []string{"./a.go:1:1: syntax error"}, packagesFailed: 1,
		},
		"a package without tests": {
			in:      `{"Action":"skip","Package":"q","Elapsed":0}`,
			wantOut: []string{"?   \tq\t[no test files]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out strings.Builder
			s, err := read(strings.NewReader(tc.in), &out)
			if err != nil {
				t.Fatal(err)
			}
			got := [5]int{s.passed, s.failed, s.skipped, s.specs, s.packagesFailed}
			want := [5]int{tc.passed, tc.failed, tc.skipped, tc.specs, tc.packagesFailed}
			if got != want {
				t.Errorf("passed, failed, skipped, specs, packages failed = %v, want %v", got, want)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tc.notOut {
				if strings.Contains(out.String(), w) {
					t.Errorf("output has %q:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestClosingLine(t *testing.T) {
	s := &summary{passed: 3, failed: 1, skipped: 2, specs: 7}
	if got, want := s.closingLine(), "testsummary: Ginkgo specs run: 7\ntestsummary: 3 passed, 1 failed, 2 skipped"; got != want {
		t.Errorf("closingLine() = %q, want %q", got, want)
	}
}
