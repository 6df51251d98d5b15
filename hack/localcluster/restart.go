package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// restartable are the components `localcluster restart` can stop and start again in place:
// the ones fault tests take away from the operator under its feet.
var restartable = map[string]bool{"etcd": true, "kube-apiserver": true}

// restart stops one running component and starts it again exactly as it ran: the same
// binary and arguments (read from /proc, so the same ports, certificates and data folder),
// appending to the same log, and waits until it serves again. The component keeps its place
// in the start order that down stops components by.
func restart(ctx context.Context, o Options, name string) error {
	if !restartable[name] {
		return fmt.Errorf("cannot restart %q: only etcd and kube-apiserver can be restarted in place", name)
	}
	if !alive(o, name) {
		return &crashError{name: name, log: logPath(o, name)}
	}
	argv, err := cmdline(pidOf(o, name))
	if err != nil {
		return fmt.Errorf("reading how %s was started: %w", name, err)
	}
	recorded, err := os.Stat(pidPath(o, name))
	if err != nil {
		return err
	}
	began := time.Now()
	stop(o, name, 10*time.Second)
	markLog(o, name, fmt.Sprintf("=== localcluster restart %s at %s ===", name, time.Now().UTC().Format(time.RFC3339Nano)))
	if err := start(o, name, argv[0], argv[1:]...); err != nil {
		return err
	}
	// down stops components newest first, by the time their pid was recorded.
	if err := os.Chtimes(pidPath(o, name), recorded.ModTime(), recorded.ModTime()); err != nil {
		return err
	}
	if err := waitServing(ctx, o, name, argv); err != nil {
		return err
	}
	fmt.Printf("Restarted %s in %.1fs\n", name, time.Since(began).Seconds())
	return nil
}

// waitServing waits until a restarted component answers its health check.
func waitServing(ctx context.Context, o Options, name string, argv []string) error {
	if name == "etcd" {
		url := flagValue(argv, "--listen-client-urls")
		return waitFor(ctx, o, name, func(ctx context.Context) (bool, error) { return httpOK(ctx, url+"/health"), nil })
	}
	cs, err := clientset(o)
	if err != nil {
		return err
	}
	return waitFor(ctx, o, name, func(ctx context.Context) (bool, error) {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok", nil
	})
}

// cmdline returns the arguments a process was started with.
func cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, err
	}
	argv := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("process %d has no command line", pid)
	}
	return argv, nil
}

// flagValue returns the value of a --name=value argument, or "".
func flagValue(argv []string, name string) string {
	for _, a := range argv {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// markLog appends a line to a component's log, so that a reader sees where it restarted.
func markLog(o Options, name, line string) {
	f, err := os.OpenFile(logPath(o, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	_, _ = fmt.Fprintln(f, line)
}
