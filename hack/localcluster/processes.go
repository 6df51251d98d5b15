package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// crashError reports a component that exited; fail prints the end of its log.
type crashError struct{ name, log string }

func (e *crashError) Error() string {
	return fmt.Sprintf("%s is not running; its log is %s", e.name, e.log)
}

func logPath(o Options, name string) string { return filepath.Join(o.StateDir, "logs", name+".log") }
func pidPath(o Options, name string) string { return filepath.Join(o.StateDir, "pids", name) }

// start runs a component in the background, in a process group of its own, so that it
// outlives this command and down can stop it with its children.
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
	defer logFile.Close()
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	pid := cmd.Process.Pid
	// Reap the child if it exits while this command still runs, so that alive() sees it gone.
	go func() { _ = cmd.Wait() }()
	return os.WriteFile(pidPath(o, name), []byte(strconv.Itoa(pid)), 0o644)
}

// pidOf returns the recorded pid of a component, or 0.
func pidOf(o Options, name string) int {
	b, err := os.ReadFile(pidPath(o, name))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// alive tells whether a component's recorded process still runs (a zombie does not count).
func alive(o Options, name string) bool {
	pid := pidOf(o, name)
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
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

// stop ends a component's process group: SIGTERM, then SIGKILL after a grace period.
func stop(o Options, name string, grace time.Duration) {
	pid := pidOf(o, name)
	defer os.Remove(pidPath(o, name))
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for alive(o, name) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
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
// it before the component binds it; the component then exits and up reports it.
func freePortOn(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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
	defer f.Close()
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
