// Command testsummary reads the output of `go test -json` on its standard input and prints
// what plain `go test` prints (a line per package, and the output of the tests that failed),
// then one closing line that counts the tests: `testsummary: N passed, N failed, N skipped`.
// make test runs its go tests through it, so that test-all can say how many tests each stage
// ran, and a change that drops tests shows in the counts (docs/performance/build-times.md).
//
// Tests are counted as go test reports them, top-level tests and subtests alike; the specs of
// a Ginkgo suite, which runs inside one test, are counted from Ginkgo's own summary line. It
// exits non-zero when a test or package failed, or when it read no test at all: a stage that
// ran nothing has not passed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// The actions of test2json this reads.
const (
	actionOutput = "output"
	actionPass   = "pass"
	actionFail   = "fail"
	actionSkip   = "skip"
)

// ginkgoRan matches Ginkgo's summary line: "Ran 12 of 14 Specs in 3.2 seconds".
var ginkgoRan = regexp.MustCompile(`Ran (\d+) of (\d+) Specs? in`)

// summary is what the stream said.
type summary struct {
	passed, failed, skipped int
	specs                   int
	packagesFailed          int
	// output holds each running test's output until it ends; a failed test's is printed.
	output map[string][]string
	// pkgOutput holds the output of each package outside its tests (build errors, a panic in
	// TestMain), printed when the package fails.
	pkgOutput map[string][]string
}

func main() {
	s, err := read(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	fmt.Println(s.closingLine())
	if s.failed > 0 || s.packagesFailed > 0 || s.passed+s.failed+s.skipped == 0 {
		os.Exit(1)
	}
}

// read consumes the stream and writes go test's plain output to out. Lines that are not JSON
// (what the go command prints to stderr, such as a build error, when merged in) pass through.
func read(in io.Reader, out io.Writer) (*summary, error) {
	s := &summary{output: map[string][]string{}, pkgOutput: map[string][]string{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		var e event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
			_, _ = fmt.Fprintln(out, line)
			continue
		}
		s.add(e, out)
	}
	return s, sc.Err()
}

// add takes one event into the summary.
func (s *summary) add(e event, out io.Writer) {
	key := e.Package + " " + e.Test
	switch e.Action {
	case actionOutput:
		if m := ginkgoRan.FindStringSubmatch(e.Output); m != nil {
			n, _ := strconv.Atoi(m[1])
			s.specs += n
		}
		if e.Test == "" {
			s.pkgOutput[e.Package] = append(s.pkgOutput[e.Package], e.Output)
		} else {
			s.output[key] = append(s.output[key], e.Output)
		}
	case actionPass, actionFail, actionSkip:
		if e.Test == "" {
			s.endPackage(e, out)
			return
		}
		switch e.Action {
		case actionPass:
			s.passed++
		case actionSkip:
			s.skipped++
		case actionFail:
			s.failed++
			for _, o := range s.output[key] {
				_, _ = fmt.Fprint(out, o)
			}
		}
		delete(s.output, key)
	}
}

// endPackage prints the package's line as go test does, and its own output when it failed.
func (s *summary) endPackage(e event, out io.Writer) {
	lines := s.pkgOutput[e.Package]
	delete(s.pkgOutput, e.Package)
	switch e.Action {
	case actionFail:
		s.packagesFailed++
		for _, o := range lines {
			_, _ = fmt.Fprint(out, o)
		}
	case actionSkip:
		_, _ = fmt.Fprintf(out, "?   \t%s\t[no test files]\n", e.Package)
	default:
		_, _ = fmt.Fprintf(out, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
	}
}

// closingLine counts the tests in the form CI and test-all read; the Ginkgo specs and failed
// packages, when there are any, go on lines of their own before it.
func (s *summary) closingLine() string {
	var lines []string
	if s.specs > 0 {
		lines = append(lines, fmt.Sprintf("testsummary: Ginkgo specs run: %d", s.specs))
	}
	if s.packagesFailed > 0 {
		lines = append(lines, fmt.Sprintf("testsummary: %d packages failed", s.packagesFailed))
	}
	lines = append(lines, fmt.Sprintf("testsummary: %d passed, %d failed, %d skipped", s.passed, s.failed, s.skipped))
	return strings.Join(lines, "\n")
}
