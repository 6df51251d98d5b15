package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/example/myapp-operator/hack/procstat"
)

// crashError reports a component that exited; fail prints the end of its log.
type crashError struct{ name, log string }

func (e *crashError) Error() string {
	return fmt.Sprintf("%s is not running; its log is %s", e.name, e.log)
}

func logPath(o Options, name string) string { return filepath.Join(o.StateDir, "logs", name+".log") }
func pidPath(o Options, name string) string { return filepath.Join(o.StateDir, "pids", name) }

// start runs a component in the background, in a process group of its own, so that it
// outlives this command and down can stop it with its children. Its record holds the pid
// with what tells that process apart from a later one given the same pid (see procRecord).
func start(o Options, name, binary string, args ...string) error {
	for _, dir := range []string{"logs", "pids"} {
		if err := os.MkdirAll(filepath.Join(o.StateDir, dir), 0o755); err != nil {
			return err
		}
	}
	logFile, err := os.OpenFile(logPath(o, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	// Read before anything reaps the child: until then /proc keeps it, even if it exited.
	rec, err := recordProcess(cmd.Process.Pid)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	// Reap the child if it exits while this command still runs, so that alive() sees it gone.
	go func() { _ = cmd.Wait() }()
	return os.WriteFile(pidPath(o, name), []byte(rec.String()+"\n"), 0o644)
}

// pidOf returns the recorded pid of a component, or 0.
func pidOf(o Options, name string) int {
	rec, _ := recordOf(o, name)
	return rec.pid
}

// recordOf reads a component's record; false when there is none.
func recordOf(o Options, name string) (procRecord, bool) {
	b, err := os.ReadFile(pidPath(o, name))
	if err != nil {
		return procRecord{}, false
	}
	rec, err := parseRecord(string(b))
	return rec, err == nil
}

// alive tells whether a component's recorded process still runs: the very process start
// launched (not another one that got its pid after it exited, or after a reboot), and not a
// zombie.
func alive(o Options, name string) bool {
	rec, ok := recordOf(o, name)
	if !ok {
		return false
	}
	st, err := procstat.Read(rec.pid)
	return err == nil && rec.is(st) && st.State != "Z"
}

// components lists the recorded components, in start order.
func components(o Options) []string {
	entries, _ := os.ReadDir(filepath.Join(o.StateDir, "pids"))
	type rec struct {
		name string
		at   time.Time
	}
	var recs []rec
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			recs = append(recs, rec{e.Name(), info.ModTime()})
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].at.Before(recs[j].at) })
	names := make([]string, len(recs))
	for i, r := range recs {
		names[i] = r.name
	}
	return names
}

// stop ends a component's process group: SIGTERM, then SIGKILL after a grace period. It
// signals only what the cluster started: when the recorded pid now belongs to another
// process (the component exited and the pid was reused, or the machine rebooted), it signals
// nothing, and when the component itself is gone it signals only the members of its group
// that are left (see survivors).
func stop(o Options, name string, grace time.Duration) {
	defer func() { _ = os.Remove(pidPath(o, name)) }()
	rec, ok := recordOf(o, name)
	if !ok {
		if pid := legacyPid(o, name); pid > 0 {
			fmt.Fprintf(os.Stderr, "localcluster: %s: pid %d was recorded without its start time; not signalling it\n", name, pid)
		}
		return
	}
	signal := func(sig syscall.Signal) (left bool) {
		if st, err := procstat.Read(rec.pid); err == nil {
			if !rec.is(st) {
				fmt.Fprintf(os.Stderr, "localcluster: pid %d is no longer %s (another process has it now); not signalling it\n", rec.pid, name)
				return false
			}
			// Our process leads its group: the group is ours. A leader that already exited
			// (a zombie) may have left members running: wait for those too.
			_ = syscall.Kill(-rec.pid, sig)
			return st.State != "Z" || len(survivors(rec)) > 0
		}
		pids := survivors(rec)
		for _, pid := range pids {
			_ = syscall.Kill(pid, sig)
		}
		return len(pids) > 0
	}
	if !signal(syscall.SIGTERM) {
		return
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if st, err := procstat.Read(rec.pid); (err != nil || !rec.is(st) || st.State == "Z") && len(survivors(rec)) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	signal(syscall.SIGKILL)
}

// checkAlive fails with a crashError for the first named component that is not running.
func checkAlive(o Options, names ...string) error {
	for _, n := range names {
		if !alive(o, n) {
			return &crashError{name: n, log: logPath(o, n)}
		}
	}
	return nil
}

// freePortOn asks the kernel for a port nobody listens on at ip. Another process could take
// it before the component binds it: startOnFreePorts then picks again.
func freePortOn(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portAttempts is how many times startOnFreePorts picks ports for one component.
const portAttempts = 4

// pickPorts picks n free ports at an address; tests replace it.
var pickPorts = freePortsOn

// startOnFreePorts starts a component on n ports picked free at ip and waits until ready
// holds. A picked port is free only when picked: another process may bind it before the
// component does. When the component then exits saying so ("address already in use" in the
// part of its log this start wrote), the ports are picked again, up to portAttempts times.
// launch starts the component on the ports (with start); it returns the ports it ran on.
func startOnFreePorts(ctx context.Context, o Options, name, ip string, n int,
	launch func(ports []int) error, ready func(ctx context.Context, ports []int) (bool, error)) ([]int, error) {
	for attempt := 1; ; attempt++ {
		ports, err := pickPorts(ip, n)
		if err != nil {
			return nil, err
		}
		logStart := fileSize(logPath(o, name))
		if err := launch(ports); err != nil {
			return nil, err
		}
		err = waitFor(ctx, o, name, func(ctx context.Context) (bool, error) { return ready(ctx, ports) })
		var crashed *crashError
		if err == nil || !errors.As(err, &crashed) || crashed.name != name || attempt == portAttempts ||
			!strings.Contains(readFrom(logPath(o, name), logStart), "address already in use") {
			return ports, err
		}
		fmt.Fprintf(os.Stderr, "localcluster: %s found one of the ports %v taken since it was picked; picking again\n", name, ports)
		stop(o, name, time.Second)
	}
}

func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}

// readFrom returns what a file holds from offset on.
func readFrom(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || offset > int64(len(b)) {
		return ""
	}
	return string(b[offset:])
}

// freePortsOn returns n distinct free ports at ip.
func freePortsOn(ip string, n int) ([]int, error) {
	ports := make([]int, 0, n)
	seen := map[int]bool{}
	for len(ports) < n {
		p, err := freePortOn(ip)
		if err != nil {
			return nil, err
		}
		if !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	return ports, nil
}

// freePorts returns n distinct free loopback ports.
func freePorts(n int) ([]int, error) { return freePortsOn("127.0.0.1", n) }

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = f.Close() }()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

var errNotUp = errors.New("no local cluster is running; start one with `make cluster-up`")
