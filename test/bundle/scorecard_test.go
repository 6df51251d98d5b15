package bundle

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bundleAtRootScript gives a program the bundle at /bundle without touching the host's /:
// run in a mount namespace of its own, it builds a root on a tmpfs that shows every
// top-level entry of the host's root (bind mounts and symlinks) plus /bundle, a read-only
// bind mount of the bundle, and runs the program chrooted there. The scorecard-test binary
// reads the bundle from the fixed path /bundle and follows no symlink there. Arguments: the
// empty folder for the new root, the bundle folder, then the program and its arguments.
const bundleAtRootScript = `
root=$1 bundle=$2; shift 2
mount -t tmpfs -o mode=0755 scorecard-root "$root"
for e in /*; do
	n=${e#/}
	if [ -L "$e" ]; then ln -s "$(readlink "$e")" "$root/$n"
	elif [ -d "$e" ]; then mkdir "$root/$n"; mount --rbind "$e" "$root/$n"
	fi
done
mkdir -p "$root/bundle"
mount -o bind,ro "$bundle" "$root/bundle"
exec chroot "$root" "$@"
`

// isolationCommand returns the unshare command line that gives scorecard-test a mount
// namespace of its own: as root a plain one; as anyone else inside a user namespace that maps
// them to root, where the kernel allows unprivileged user namespaces. It skips the test where
// the kernel refuses.
func isolationCommand(t *testing.T) []string {
	t.Helper()
	cmd := []string{"unshare", "--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		cmd = []string{"unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"}
	}
	if out, err := exec.Command(cmd[0], append(cmd[1:], "--", "true")...).CombinedOutput(); err != nil {
		t.Skipf("skipping the scorecard tests: they need the bundle at /bundle, which this test only "+
			"provides inside a mount namespace of its own, and `%s true` failed here (%v: %s); "+
			"as root, or with unprivileged user namespaces enabled, they run", strings.Join(cmd, " "), err, out)
	}
	return cmd
}

// scorecardTests are the tests config/scorecard lists and the bundle's
// tests/scorecard/config.yaml references.
var scorecardTests = []string{
	"basic-check-spec", "olm-bundle-validation", "olm-crds-have-validation",
	"olm-crds-have-resources", "olm-spec-descriptors", "olm-status-descriptors",
}

// TestScorecard runs each scorecard test with the scorecard-test binary built from the
// operator-sdk module (make test passes its path in SCORECARD_TEST), as `operator-sdk
// scorecard` runs it in a pod, and requires every result to pass. Each runs in a mount
// namespace of its own, where the bundle is at /bundle; the host's / is never written. The
// binary exits 0 even when a test fails, so the test reads each result's state.
func TestScorecard(t *testing.T) {
	bin := os.Getenv("SCORECARD_TEST")
	if bin == "" {
		t.Fatal("SCORECARD_TEST is not set: run `make test`, which builds the scorecard-test binary")
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := filepath.Abs(bundleDir)
	if err != nil {
		t.Fatal(err)
	}
	unshare := isolationCommand(t)

	for _, name := range scorecardTests {
		t.Run(name, func(t *testing.T) {
			var stderr bytes.Buffer
			cmd := exec.Command(unshare[0], append(unshare[1:], "--", "/bin/sh", "-ec", bundleAtRootScript, "sh",
				t.TempDir(), bundle, bin, name)...)
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("running %s in its own mount namespace: %v\n%s", name, err, stderr.String())
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
