package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/example/myapp-operator/hack/procstat"
)

func TestParseRecord(t *testing.T) {
	if r, err := parseRecord("12 345 b00t\n"); err != nil || r != (procRecord{pid: 12, start: 345, boot: "b00t"}) {
		t.Fatalf("got %+v, %v", r, err)
	}
	if _, err := parseRecord("12\n"); err != errLegacyRecord {
		t.Fatalf("a pid alone: got %v, want errLegacyRecord", err)
	}
	for _, bad := range []string{"", "x 1 b", "12 -1 b", "0 1 b", "12 1"} {
		if _, err := parseRecord(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// stranger starts a process that the cluster did not start, leading a process group of its
// own as a process that reused a recorded pid could, and returns it with its record.
func stranger(t *testing.T) (*exec.Cmd, procRecord) {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rec, err := recordProcess(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, rec
}

// running tells whether a child of the test still runs (not exited, not a zombie).
func running(t *testing.T, cmd *exec.Cmd) bool {
	t.Helper()
	st, err := procstat.Read(cmd.Process.Pid)
	return err == nil && st.State != "Z"
}

func writeRecord(t *testing.T, o Options, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(o.StateDir, "pids"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pidPath(o, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStopAndStatusLeaveAStrangerAlone: a recorded pid that another process now has (after
// the component exited, or after a reboot) is neither reported running nor signalled.
func TestStopAndStatusLeaveAStrangerAlone(t *testing.T) {
	cmd, rec := stranger(t)
	cases := map[string]string{
		"another start time, same boot": procRecord{pid: rec.pid, start: rec.start + 1, boot: rec.boot}.String(),
		"the same start time, another boot (a reboot)": procRecord{pid: rec.pid, start: rec.start,
			boot: "00000000-0000-0000-0000-000000000000"}.String(),
		"a pid recorded alone, by an older localcluster": fmt.Sprint(rec.pid),
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			o := Options{StateDir: t.TempDir()}
			writeRecord(t, o, "kube-apiserver", content)
			if alive(o, "kube-apiserver") {
				t.Fatal("a stranger counts as the component")
			}
			if err := status(o); err == nil {
				t.Fatal("status reports a component running that is not")
			}
			stop(o, "kube-apiserver", time.Second)
			if !running(t, cmd) {
				t.Fatal("stop signalled a process the cluster did not start")
			}
			if _, err := os.Stat(pidPath(o, "kube-apiserver")); !os.IsNotExist(err) {
				t.Fatalf("stop left the stale record: %v", err)
			}
		})
	}
}

// TestDownAfterARebootStartsAfresh: after a reboot every recorded pid may name another
// process; up then finds no API server running, and the down it runs first removes the old
// state without signalling anyone.
func TestDownAfterARebootStartsAfresh(t *testing.T) {
	cmd, rec := stranger(t)
	o := Options{StateDir: filepath.Join(t.TempDir(), "state")}
	oldBoot := procRecord{pid: rec.pid, start: rec.start, boot: "11111111-2222-3333-4444-555555555555"}.String()
	for _, n := range append(append([]string{}, controlPlane...), "kwok", "operator") {
		writeRecord(t, o, n, oldBoot)
	}
	if err := os.WriteFile(nodeKindPath(o), []byte(nodeKwok), 0o644); err != nil {
		t.Fatal(err)
	}
	if alive(o, "kube-apiserver") {
		t.Fatal("up would take a process of an earlier boot for the running API server")
	}
	if err := down(o); err != nil {
		t.Fatal(err)
	}
	if !running(t, cmd) {
		t.Fatal("down signalled a process the cluster did not start")
	}
	if _, err := os.Stat(o.StateDir); !os.IsNotExist(err) {
		t.Fatalf("down left the state of the earlier boot: %v", err)
	}
}

// TestStopEndsWhatItStarted: the component itself, and what is left of its process group
// once the component is gone.
func TestStopEndsWhatItStarted(t *testing.T) {
	o := Options{StateDir: t.TempDir()}
	if err := start(o, "sleeper", "sleep", "300"); err != nil {
		t.Fatal(err)
	}
	if !alive(o, "sleeper") {
		t.Fatal("a component just started is not alive")
	}
	pid := pidOf(o, "sleeper")
	stop(o, "sleeper", 5*time.Second)
	if st, err := procstat.Read(pid); err == nil && st.State != "Z" {
		t.Fatalf("stop left the component running: %+v", st)
	}

	// A shell that exits at once, leaving a child in its group.
	if err := start(o, "parent", "sh", "-c", "sleep 300 & exit 0"); err != nil {
		t.Fatal(err)
	}
	rec, _ := recordOf(o, "parent")
	var left []int
	deadline := time.Now().Add(10 * time.Second)
	for {
		left = survivors(rec)
		if st, err := procstat.Read(rec.pid); (err != nil || st.State == "Z") && len(left) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("want the shell gone and its child left; survivors %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() { _ = syscall.Kill(left[0], syscall.SIGKILL) })
	stop(o, "parent", 5*time.Second)
	if st, err := procstat.Read(left[0]); err == nil && st.State != "Z" {
		t.Fatalf("stop left the group's survivor %d running", left[0])
	}
}

// TestListenHelper is not a test: startOnFreePorts' test runs the test binary as a component
// that listens on LC_TEST_LISTEN and exits with the error when it cannot, like etcd.
func TestListenHelper(t *testing.T) {
	addr := os.Getenv("LC_TEST_LISTEN")
	if addr == "" {
		t.Skip("run by TestStartOnFreePortsPicksAgain")
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Println("listening:", err)
		os.Exit(1)
	}
	_ = http.Serve(l, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	os.Exit(0)
}

// TestStartOnFreePortsPicksAgain: a port taken between its pick and the component's bind
// makes the component exit; startOnFreePorts sees why in its log, and picks again.
func TestStartOnFreePortsPicksAgain(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	picks := 0
	pickPorts = func(ip string, n int) ([]int, error) {
		picks++
		if picks == 1 {
			return []int{takenPort}, nil
		}
		return freePortsOn(ip, n)
	}
	defer func() { pickPorts = freePortsOn }()

	o := Options{StateDir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ports, err := startOnFreePorts(ctx, o, "listener", "127.0.0.1", 1, func(ports []int) error {
		t.Setenv("LC_TEST_LISTEN", fmt.Sprintf("127.0.0.1:%d", ports[0]))
		return start(o, "listener", os.Args[0], "-test.run=^TestListenHelper$")
	}, func(ctx context.Context, ports []int) (bool, error) {
		return httpOK(ctx, fmt.Sprintf("http://127.0.0.1:%d/", ports[0])), nil
	})
	defer stop(o, "listener", 5*time.Second)
	if err != nil {
		t.Fatalf("%v; log:\n%s", err, tail(logPath(o, "listener"), 20))
	}
	if picks != 2 || ports[0] == takenPort {
		t.Fatalf("picked %d times, runs on %v; want a second pick, not port %d", picks, ports, takenPort)
	}
	if log := tail(logPath(o, "listener"), 20); !strings.Contains(log, "address already in use") {
		t.Fatalf("the first start did not meet the taken port; log:\n%s", log)
	}

	// Any other crash is reported, not retried.
	picks = 1
	_, err = startOnFreePorts(ctx, o, "crasher", "127.0.0.1", 1, func([]int) error {
		return start(o, "crasher", "false")
	}, func(context.Context, []int) (bool, error) { return false, nil })
	if _, ok := err.(*crashError); !ok || picks != 2 {
		t.Fatalf("a component that fails for another reason: got %v after %d picks, want a crashError after one", err, picks-1)
	}
}
