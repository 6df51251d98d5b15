// Command app is the tiny HTTP application the real-node tests run under a MyApp. It answers
// `/` with a line naming itself and its version (set at build time with
// -ldflags "-X main.version=..."), `/env?name=NAME` with the value of its environment
// variable NAME (404 when unset) and `/file?path=P` with the content of the file P, so a test
// sees what the pod was given, `/write?path=P` by writing a small file at P (500 when it
// cannot), and `/readyz` and `/healthz` with "ok". It writes no file unless asked, so it runs
// as any user on a read-only root filesystem. With an admin port (--admin-port, default
// $ADMIN_PORT, none when unset) it also answers there, every path with a line naming that
// port, so a test sees a second port of the pod served through its own Service port. With
// $ERROR_SHARE, a number from 0 to 1, it answers `/` with a 500 on that share of its requests,
// spread evenly (with 0.25, every fourth), as a version with a bug on some of its paths does.
//
//	app [--port N] [--admin-port N] [--shutdown-delay D] [--config FILE]
//
// Like a real app, it refuses to start on a configuration it cannot use, so that a test can
// make its new pods crash through configuration alone: it exits with status 1 when
// $SHUTDOWN_DELAY is set and is not a duration, or when the config file (default
// $CONFIG_FILE; none when empty) cannot be read or holds a line that is neither empty, a
// comment (#) nor key=value. The port defaults to $PORT, then 8080. On SIGTERM the app keeps serving for the shutdown
// delay (default $SHUTDOWN_DELAY, then 0) before it stops listening: a pod being removed from a
// Service still receives connections until every node's proxy has dropped its endpoint, so an
// app that must lose no request waits that long, as Kubernetes' pod termination docs advise.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// version is the application's version, stamped by the build.
var version = "dev"

func main() {
	port := flag.Int("port", defaultPort(), "TCP port to serve on (default: $PORT, else 8080)")
	adminPort := flag.Int("admin-port", envPort("ADMIN_PORT", 0), "a second TCP port to answer on (default: $ADMIN_PORT, else none)")
	delay := flag.Duration("shutdown-delay", defaultShutdownDelay(), "how long to keep serving after SIGTERM (default: $SHUTDOWN_DELAY, else 0)")
	config := flag.String("config", os.Getenv("CONFIG_FILE"), "a key=value file the app must be able to read (default: $CONFIG_FILE)")
	writeFile := flag.String("write-file", os.Getenv("WRITE_FILE"), "write the app's version to this file and exit, as an init container does its job (default: $WRITE_FILE)")
	flag.Parse()
	if *writeFile != "" {
		if err := os.WriteFile(*writeFile, []byte("written by myapp test app "+version+"\n"), 0o644); err != nil {
			log.Fatalf("writing %s: %v", *writeFile, err)
		}
		return
	}
	if err := checkConfig(*config); err != nil {
		log.Fatalf("invalid configuration: %v", err)
	}

	hostname, _ := os.Hostname()
	failing := newErrorShare(os.Getenv("ERROR_SHARE"))
	mux := http.NewServeMux()
	var answered atomic.Int64
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		if failing.next() {
			http.Error(w, fmt.Sprintf("myapp test app %s on %s: failed on purpose", version, hostname), http.StatusInternalServerError)
			return
		}
		answered.Add(1)
		_, _ = fmt.Fprintf(w, "myapp test app %s on %s\n", version, hostname)
	})
	// /metrics answers in Prometheus' text format: how many requests of / the app answered.
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = fmt.Fprintf(w, "# HELP myapp_test_app_requests_total Requests of / the test app answered.\n"+
			"# TYPE myapp_test_app_requests_total counter\nmyapp_test_app_requests_total{version=%q} %d\n", version, answered.Load())
	})
	mux.HandleFunc("/env", func(w http.ResponseWriter, r *http.Request) {
		value, set := os.LookupEnv(r.URL.Query().Get("name"))
		if !set {
			http.NotFound(w, r)
			return
		}
		_, _ = fmt.Fprint(w, value)
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		content, err := os.ReadFile(r.URL.Query().Get("path"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		_, _ = w.Write(content)
	})
	mux.HandleFunc("/write", func(w http.ResponseWriter, r *http.Request) {
		if err := os.WriteFile(r.URL.Query().Get("path"), []byte("written\n"), 0o600); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = fmt.Fprintln(w, "ok")
	})
	// A new connection for every call: a policy judges a connection when it opens.
	caller := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	mux.HandleFunc("/call", func(w http.ResponseWriter, r *http.Request) {
		resp, err := caller.Get(r.URL.Query().Get("url"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		_, _ = fmt.Fprintf(w, "%d %s", resp.StatusCode, body)
	})
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = fmt.Fprintln(w, "ok") }
	mux.HandleFunc("/readyz", ok)
	mux.HandleFunc("/healthz", ok)

	srv := &http.Server{Addr: fmt.Sprintf(":%d", *port), Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	var admin *http.Server
	if *adminPort > 0 {
		admin = &http.Server{Addr: fmt.Sprintf(":%d", *adminPort), ReadHeaderTimeout: 10 * time.Second,
			Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = fmt.Fprintf(w, "myapp test app %s admin port %d on %s\n", version, *adminPort, hostname)
			})}
		go func() {
			if err := admin.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
				log.Fatal(err)
			}
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		log.Printf("stopping in %s", *delay)
		time.Sleep(*delay)
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if admin != nil {
			_ = admin.Shutdown(shutdown)
		}
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("myapp test app %s serving on :%d", version, *port)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// errorShare fails a share of the requests, evenly: request n fails when the count of failures
// due by n, floor(n × share), grows.
type errorShare struct {
	share float64
	mu    sync.Mutex
	n     int
}

// newErrorShare reads a share from 0 to 1; anything else fails nothing.
func newErrorShare(v string) *errorShare {
	share, err := strconv.ParseFloat(v, 64)
	if err != nil || !(share >= 0 && share <= 1) {
		share = 0
	}
	return &errorShare{share: share}
}

func (e *errorShare) next() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	return int(float64(e.n)*e.share) > int(float64(e.n-1)*e.share)
}

func defaultPort() int { return envPort("PORT", 8080) }

// envPort is the port in the environment variable name, or def when it holds none.
func envPort(name string, def int) int {
	if p, err := strconv.Atoi(os.Getenv(name)); err == nil && p > 0 {
		return p
	}
	return def
}

func defaultShutdownDelay() time.Duration {
	d, err := time.ParseDuration(os.Getenv("SHUTDOWN_DELAY"))
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// checkConfig fails on a $SHUTDOWN_DELAY that is set and not a duration, and on a config file
// that cannot be read or holds a line other than key=value, a comment or nothing.
func checkConfig(path string) error {
	if v, set := os.LookupEnv("SHUTDOWN_DELAY"); set && v != "" {
		if _, err := time.ParseDuration(v); err != nil {
			return fmt.Errorf("SHUTDOWN_DELAY: %w", err)
		}
	}
	if path == "" {
		return nil
	}
	content, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for i, line := range strings.Split(string(content), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if key, _, ok := strings.Cut(line, "="); !ok || strings.TrimSpace(key) == "" {
			return fmt.Errorf("%s line %d: want key=value, got %q", path, i+1, line)
		}
	}
	return nil
}
