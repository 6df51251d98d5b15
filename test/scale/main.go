// Command scale measures the operator at N MyApps on envtest, against the API server's own
// write speed (issue 8): the raw baseline applies the same Deployments and Services from a
// client, then the manager runs as its own process and the benchmark counts, from the API
// server's apiserver_request_total, the requests it sends until it stops. It writes a
// Markdown report and a PNG plot (docs/performance/benchmarks.md and .png).
//
// Run it from the repository root with KUBEBUILDER_ASSETS set, as `make bench-scale` does: it
// builds this program as bin/bench-scale (test/ is a module of its own) and runs it there.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	var (
		opts  options
		sizes string
		out   string
	)
	flag.StringVar(&sizes, "n", "100,1000", "Comma-separated numbers of MyApps; each runs on a fresh envtest. Empty runs none (e.g. with -churn alone).")
	flag.DurationVar(&opts.Quiet, "quiet", 70*time.Second,
		"Window after settling in which no operator request is expected.")
	flag.DurationVar(&opts.SettleQuiet, "settle-quiet", 3*time.Second,
		"How long without an operator request counts as settled.")
	// Each read of the manager's metrics renders every MyApp's series (about 150 ms of the
	// manager's CPU at 1,000 MyApps): reading more often takes CPU from what is measured.
	flag.DurationVar(&opts.Poll, "poll", time.Second,
		"How often the manager's metrics are read while settling; the settle time is good to about half of it.")
	flag.DurationVar(&opts.SettleTimeout, "settle-timeout", 30*time.Minute,
		"Fail when the operator has not settled by then.")
	flag.StringVar(&out, "out", filepath.Join("docs", "performance", "benchmarks.md"),
		"Markdown report to write; the plot goes beside it with the extension .png. Empty writes neither.")
	flag.IntVar(&opts.Manager.MaxConcurrentReconciles, "max-concurrent-reconciles", 0,
		"Passed to the manager as --max-concurrent-reconciles; 0 keeps its default.")
	// A benchmark of many MyApps created at once measures a large fleet: the manager runs with
	// the client limits docs/operations/manager.md recommends for one, not the polite defaults.
	flag.Float64Var(&opts.Manager.QPS, "qps", 200, "Passed to the manager as --kube-api-qps; 0 keeps its default (20).")
	flag.IntVar(&opts.Manager.Burst, "burst", 400, "Passed to the manager as --kube-api-burst; 0 keeps its default (50).")
	flag.StringVar(&opts.Profiles, "profiles", "",
		"Folder to keep the manager's heap profiles in (before the MyApps, after the quiet window); empty keeps none.")
	flag.IntVar(&opts.Runs, "runs", 1,
		"How many times each size is measured; the report shows the run of the median ratio and every run's ratios.")
	var churn, config, files string
	flag.StringVar(&config, "config", "",
		"Comma-separated numbers of MyApps for the config run (each with a ConfigMap it rolls out on); empty skips it.")
	flag.StringVar(&files, "files", "",
		"Comma-separated numbers of MyApps for the files run (each with one file); empty skips it.")
	flag.StringVar(&churn, "churn", "",
		"Comma-separated numbers of MyApps for the churn run on the local cluster; empty skips it.")
	flag.StringVar(&opts.Churn.LocalCluster, "localcluster", filepath.Join("bin", "localcluster"), "The local cluster program (make localcluster).")
	flag.StringVar(&opts.Churn.K8sBin, "k8s-bin", "", "Folder of kube-apiserver, kube-controller-manager, kube-scheduler, etcd and kubectl, for -churn.")
	flag.StringVar(&opts.Churn.Kwok, "kwok", "", "The kwok binary, for -churn.")
	flag.Parse()
	log.SetFlags(log.Ltime)
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr))) // envtest's own messages

	var err error
	if sizes != "" {
		if opts.Sizes, err = parseSizes(sizes); err != nil {
			log.Fatal(err)
		}
	}
	if config != "" {
		if opts.Config, err = parseSizes(config); err != nil {
			log.Fatal(err)
		}
	}
	if files != "" {
		if opts.Files, err = parseSizes(files); err != nil {
			log.Fatal(err)
		}
	}
	if churn != "" {
		if opts.Churn.Sizes, err = parseSizes(churn); err != nil {
			log.Fatal(err)
		}
	}
	if err := run(opts, out); err != nil {
		log.Fatalf("bench-scale failed: %v", err)
	}
}

func run(opts options, out string) error {
	if _, err := os.Stat(filepath.Join("config", "crd", "bases")); err != nil {
		return fmt.Errorf("run from the repository root (`make bench-scale`): %w", err)
	}
	if len(opts.Sizes)+len(opts.Config)+len(opts.Files) > 0 && os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return fmt.Errorf("KUBEBUILDER_ASSETS is not set: run `make bench-scale`, which builds kube-apiserver and etcd")
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	buildDir, err := os.MkdirTemp("", "bench-scale-manager-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(buildDir) }()
	log.Print("building the manager (go build ./cmd)")
	bin, err := buildManager(buildDir)
	if err != nil {
		return err
	}

	rep := report{Command: command(), Options: opts, Date: time.Now().UTC()}
	if rep.Machine, err = describeMachine(); err != nil {
		return err
	}
	for _, n := range opts.Sizes {
		res, err := measureSize(ctx, opts, bin, n)
		if err != nil {
			return err
		}
		rep.Results = append(rep.Results, res)
	}
	for _, run := range append(sizesOf(opts.Files, true), sizesOf(opts.Config, false)...) {
		res, err := runConfig(ctx, opts, bin, run.n, run.files)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			log.Printf("N=%d config or files run failed: %v", run.n, err)
			res.Err = err.Error()
		}
		rep.Config = append(rep.Config, res)
	}
	for _, n := range opts.Churn.Sizes {
		// A churn run that fails is reported as such; the figures measured before stay.
		res, err := runChurn(ctx, opts, bin, n)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			log.Printf("N=%d churn failed: %v", n, err)
			res.Err = err.Error()
		}
		rep.Churn = append(rep.Churn, res)
	}
	if len(rep.Results) > 0 {
		rep.Machine.APIServer = rep.Results[0].APIServer
	}

	pngPath := ""
	if out != "" && len(rep.Results) > 0 { // a churn run alone has nothing to chart
		pngPath = strings.TrimSuffix(out, filepath.Ext(out)) + ".png"
	}
	plotName := ""
	if pngPath != "" {
		plotName = filepath.Base(pngPath)
	}
	md := rep.markdown(plotName)
	fmt.Print(md)
	if out == "" {
		return nil
	}
	if pngPath != "" {
		if err := writePlot(pngPath, rep); err != nil {
			return err
		}
		log.Printf("wrote %s", pngPath)
	}
	if err := os.WriteFile(out, []byte(md), 0o644); err != nil {
		return err
	}
	log.Printf("wrote %s", out)
	return nil
}

func parseSizes(s string) ([]int, error) {
	fields := strings.Split(s, ",")
	out := make([]int, 0, len(fields))
	for _, f := range fields {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-n: %q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// command is how this run was started, as someone would type it again from the repository
// root, where make bench-scale runs it.
func command() string {
	self := os.Args[0]
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, self); err == nil && !strings.HasPrefix(rel, "..") {
			self = rel
		}
	}
	parts := []string{self}
	for _, a := range os.Args[1:] {
		if strings.ContainsAny(a, " \t'\"$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// extraRun is one config or files run to make.
type extraRun struct {
	n     int
	files bool
}

func sizesOf(sizes []int, files bool) []extraRun {
	out := make([]extraRun, 0, len(sizes))
	for _, n := range sizes {
		out = append(out, extraRun{n: n, files: files})
	}
	return out
}
