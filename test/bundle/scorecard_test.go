package bundle

import (
	"encoding/json"
	"os"
	"os/exec"
	"testing"
)

// scorecardDir is where the scorecard-test image expects the bundle; the binary has no flag
// for it and does not follow a symlink there, so the test copies the bundle in.
const scorecardDir = "/bundle"

// scorecardTests are the tests config/scorecard lists and the bundle's
// tests/scorecard/config.yaml references.
var scorecardTests = []string{
	"basic-check-spec", "olm-bundle-validation", "olm-crds-have-validation",
	"olm-crds-have-resources", "olm-spec-descriptors", "olm-status-descriptors",
}

// TestScorecard runs each scorecard test with the scorecard-test binary built from the
// operator-sdk module (make test passes its path in SCORECARD_TEST), as `operator-sdk
// scorecard` runs it in a pod, and requires every result to pass. The binary exits 0 even
// when a test fails, so the test reads each result's state.
func TestScorecard(t *testing.T) {
	bin := os.Getenv("SCORECARD_TEST")
	if bin == "" {
		t.Fatal("SCORECARD_TEST is not set: run `make test`, which builds the scorecard-test binary")
	}
	if err := os.RemoveAll(scorecardDir); err != nil {
		t.Fatalf("clearing %s: %v", scorecardDir, err)
	}
	if err := os.CopyFS(scorecardDir, os.DirFS(bundleDir)); err != nil {
		t.Fatalf("copying the bundle to %s (the scorecard tests read it from there): %v", scorecardDir, err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(scorecardDir) })

	for _, name := range scorecardTests {
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command(bin, name).Output()
			if err != nil {
				t.Fatalf("running %s: %v", name, err)
			}
			var report struct {
				Results []struct {
					Name   string   `json:"name"`
					State  string   `json:"state"`
					Errors []string `json:"errors"`
					Log    string   `json:"log"`
				} `json:"results"`
			}
			if err := json.Unmarshal(out, &report); err != nil {
				t.Fatalf("reading the result of %s: %v\n%s", name, err, out)
			}
			if len(report.Results) == 0 {
				t.Fatalf("%s reported no result", name)
			}
			for _, r := range report.Results {
				if r.State != "pass" {
					t.Errorf("%s: state %q, errors %v\n%s", r.Name, r.State, r.Errors, r.Log)
				}
			}
		})
	}
}
