package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/example/myapp-operator/internal/testutil"
)

// managerSettings are the manager flags under comparison; zero leaves the manager's default.
type managerSettings struct {
	MaxConcurrentReconciles int
	QPS                     float64
	Burst                   int
}

func (s managerSettings) args() []string {
	var args []string
	if s.MaxConcurrentReconciles > 0 {
		args = append(args, "--max-concurrent-reconciles="+strconv.Itoa(s.MaxConcurrentReconciles))
	}
	if s.QPS > 0 {
		args = append(args, "--kube-api-qps="+strconv.FormatFloat(s.QPS, 'f', -1, 64))
	}
	if s.Burst > 0 {
		args = append(args, "--kube-api-burst="+strconv.Itoa(s.Burst))
	}
	return args
}

// buildManager builds cmd/ once per benchmark run.
func buildManager(dir string) (string, error) {
	bin := filepath.Join(dir, "manager")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd: %w", err)
	}
	return bin, nil
}

// managerProcess is the operator running as its own process, as it does in a cluster.
type managerProcess struct {
	cmd        *exec.Cmd
	exited     chan struct{}
	exitErr    error
	logPath    string
	metricsURL string
	heapURL    string // the profiler's heap profile, after a garbage collection
	http       *http.Client
}

// startManager runs the manager against the kubeconfig, serving plain-HTTP metrics on a
// free local port, with leader election and the health probes off.
func startManager(bin, kubeconfig, logPath string, s managerSettings, env ...string) (*managerProcess, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	pprofPort, err := freePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(port),
		"--metrics-secure=false",
		"--health-probe-bind-address=0",
		"--pprof-bind-address=127.0.0.1:" + strconv.Itoa(pprofPort),
	}, s.args()...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "KUBECONFIG="+kubeconfig), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A server: it dies with the benchmark, even a killed one.
	waited, err := testutil.StartWithParent(cmd)
	if err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting the manager: %w", err)
	}
	m := &managerProcess{
		cmd: cmd, exited: make(chan struct{}), logPath: logPath,
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", port),
		heapURL:    fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?gc=1", pprofPort),
		http:       &http.Client{Timeout: 30 * time.Second},
	}
	go func() {
		m.exitErr = <-waited
		_ = logFile.Close()
		close(m.exited)
	}()
	return m, nil
}

// scrape reads the manager's own metrics; it fails when the manager has exited.
func (m *managerProcess) scrape(ctx context.Context, names ...string) ([]sample, error) {
	select {
	case <-m.exited:
		return nil, fmt.Errorf("the manager exited (%v); its log: %s\n%s", m.exitErr, m.logPath, m.logTail())
	default:
	}
	body, err := httpGet(ctx, m.http, m.metricsURL)
	if err != nil {
		return nil, fmt.Errorf("scraping the manager's metrics: %w", err)
	}
	samples, err := parseSamples(body, names...)
	if err != nil {
		return nil, fmt.Errorf("parsing the manager's metrics: %w", err)
	}
	return samples, nil
}

// waitReady waits until the manager's controller runs its workers, which it does only once
// its caches have synced (it logs "Starting workers" then), and its metrics answer.
func (m *managerProcess) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		_, err := m.scrape(ctx, "controller_runtime_active_workers")
		if err == nil && !m.logContains(`"Starting workers"`) {
			err = errors.New(`the manager has not logged "Starting workers"`)
		}
		if err == nil {
			return nil
		}
		lastErr = err
		select {
		case <-m.exited:
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("the manager was not ready after %s: %w", timeout, lastErr)
}

func (m *managerProcess) logContains(s string) bool {
	b, err := os.ReadFile(m.logPath)
	return err == nil && strings.Contains(string(b), s)
}

// stop ends the manager (SIGTERM, then SIGKILL after 30 s) and waits for it.
func (m *managerProcess) stop() {
	select {
	case <-m.exited:
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(30 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.exited
	}
}

func (m *managerProcess) logTail() string {
	b, err := os.ReadFile(m.logPath)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}

// managerStats are the manager's own figures at one moment.
type managerStats struct {
	HeapInuse, RSS  float64 // bytes
	LiveHeap        float64 // bytes of heap reachable at a garbage collection forced just before
	HeapProfile     []byte  // the heap profile written by that collection (pprof format)
	Reconciles      float64 // controller_runtime_reconcile_total of the myapp controller
	ReconcileErrors float64
	ClientRequests  float64 // rest_client_requests_total: every request its clients sent
}

// stats forces a garbage collection in the manager (through its profiler, which collects
// before it writes a heap profile) and then reads its metrics, so that go_gc_heap_live_bytes
// is the heap still reachable now, without the garbage of the work just done.
func (m *managerProcess) stats(ctx context.Context) (managerStats, error) {
	var st managerStats
	profile, err := m.heapProfile(ctx)
	if err != nil {
		return st, err
	}
	st.HeapProfile = profile
	samples, err := m.scrape(ctx, "go_memstats_heap_inuse_bytes", "process_resident_memory_bytes",
		"go_gc_heap_live_bytes", "controller_runtime_reconcile_total", "rest_client_requests_total")
	if err != nil {
		return managerStats{}, err
	}
	myapp := map[string]string{"controller": "myapp"}
	errs := []error{}
	get := func(dst *float64, name string, match map[string]string) {
		v, err := single(samples, name, match)
		errs = append(errs, err)
		*dst = v
	}
	get(&st.HeapInuse, "go_memstats_heap_inuse_bytes", nil)
	get(&st.LiveHeap, "go_gc_heap_live_bytes", nil)
	get(&st.RSS, "process_resident_memory_bytes", nil)
	get(&st.Reconciles, "controller_runtime_reconcile_total", myapp)
	get(&st.ReconcileErrors, "controller_runtime_reconcile_total",
		map[string]string{"controller": "myapp", "result": "error"})
	get(&st.ClientRequests, "rest_client_requests_total", nil)
	return st, errors.Join(errs...)
}

// heapProfile asks the manager's profiler for a heap profile, which runs a garbage
// collection first.
func (m *managerProcess) heapProfile(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.heapURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := m.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the manager's heap profile: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the manager's heap profile: %w", err)
	}
	if resp.StatusCode != http.StatusOK || len(body) == 0 {
		return nil, fmt.Errorf("reading the manager's heap profile: %s, %d bytes", resp.Status, len(body))
	}
	return body, nil
}

// busy tells, from the manager's metrics, whether the controller has work queued or in hand.
// The queue's depth gauge exists only once something was queued, so this is asked only after
// MyApps were created.
func busy(samples []sample) (bool, error) {
	depth, err := single(samples, "workqueue_depth", map[string]string{"name": "myapp"})
	if err != nil {
		return false, err
	}
	active, err := single(samples, "controller_runtime_active_workers", map[string]string{"controller": "myapp"})
	if err != nil {
		return false, err
	}
	return depth+active > 0, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
