package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// The config run (issue 29): N MyApps with rolloutOnConfigChange, each taking its variables
// from a ConfigMap of its own (envFrom), on a fresh envtest; then every ConfigMap changed
// once. It gives what tracking ConfigMaps costs: the live heap per MyApp, and the operator's
// requests per ConfigMap change.

// The files run (issue 28) is the config run's first half for N MyApps with one file each
// (spec.files), which the operator writes into a ConfigMap of its own: what that one more
// child costs.

// configResult is what one config or files run measured.
type configResult struct {
	N        int
	Files    bool          // a files run
	Requests requestCounts // the operator's, from the first create until it settled
	Quiet    requestCounts // in the quiet window after
	Change   requestCounts // from the first ConfigMap change until it settled again
	// The manager before any MyApp, settled, after the quiet window, and settled after the
	// changes.
	Before, Settled, After, Changed managerStats
	Err                             string
}

const configLevelKey = "LEVEL"

// newConfigMyApp is the benchmark's MyApp i, taking its variables from the ConfigMap of its
// name and rolling out when it changes.
func newConfigMyApp(namespace string, i int) *examplev1.MyApp {
	app := newMyApp(namespace, i)
	app.Spec.RolloutOnConfigChange = ptr.To(true)
	app.Spec.EnvFrom = []examplev1.EnvFromSource{{ConfigMapRef: &examplev1.EnvFromReference{Name: examplev1.ObjectName(app.Name)}}}
	return app
}

// newFilesMyApp is the benchmark's MyApp i with one file.
func newFilesMyApp(namespace string, i int) *examplev1.MyApp {
	app := newMyApp(namespace, i)
	app.Spec.Files = []examplev1.File{{Path: "/etc/app/app.conf", Content: "level=info\nname=" + app.Name + "\n"}}
	return app
}

func runConfig(ctx context.Context, opts options, managerBin string, n int, files bool) (res configResult, err error) {
	res.N, res.Files = n, files
	dir, err := os.MkdirTemp("", "bench-scale-config-"+strconv.Itoa(n)+"-")
	if err != nil {
		return res, err
	}
	err = onFreshCluster(ctx, filepath.Join(dir, "config"), operatorNamespace, func(c *cluster) error {
		scraper, err := newAPIServerScraper(c.adminCfg)
		if err != nil {
			return err
		}
		mgr, err := startManager(managerBin, c.kubeconfig, filepath.Join(dir, "manager-config.log"), opts.Manager,
			"WATCH_NAMESPACE="+operatorNamespace)
		if err != nil {
			return err
		}
		defer mgr.stop()
		if err := measureConfig(ctx, opts, c, scraper, mgr, &res); err != nil {
			return fmt.Errorf("config run at N=%d: %w (manager log: %s)", n, err, mgr.logPath)
		}
		return nil
	})
	if err == nil {
		_ = os.RemoveAll(dir)
	}
	return res, err
}

func measureConfig(ctx context.Context, opts options, c *cluster, scraper *apiServerScraper, mgr *managerProcess, res *configResult) error {
	if err := mgr.waitReady(ctx, 2*time.Minute); err != nil {
		return err
	}
	if _, err := waitQuiet(ctx, scraper, opts.Poll, 2*time.Second, time.Minute); err != nil {
		return fmt.Errorf("waiting for the manager's start-up requests to end: %w", err)
	}
	var err error
	if res.Before, err = mgr.stats(ctx); err != nil {
		return err
	}
	// settle runs writes and waits until the operator has stopped sending requests.
	settle := func(what string, writes func(ctx context.Context, i int) error) (requestCounts, managerStats, error) {
		log.Printf("config N=%d: %s, %d at a time, and waiting for the operator to settle", res.N, what, concurrency)
		from, err := scraper.scrape(ctx)
		if err != nil {
			return nil, managerStats{}, err
		}
		done := make(chan error, 1)
		go func() { done <- parallel(ctx, res.N, writes) }()
		var timing result
		if _, err := waitSettled(ctx, opts, c.cpu, mgr, done, &timing); err != nil {
			return nil, managerStats{}, err
		}
		to, err := scraper.scrape(ctx)
		if err != nil {
			return nil, managerStats{}, err
		}
		st, err := mgr.stats(ctx)
		return operatorDelta(from, to), st, err
	}

	if res.Files {
		res.Requests, res.Settled, err = settle("creating N MyApps with a file each", func(ctx context.Context, i int) error {
			return c.admin.Create(ctx, newFilesMyApp(operatorNamespace, i))
		})
	} else {
		res.Requests, res.Settled, err = settle("creating N ConfigMaps and N MyApps referencing them", func(ctx context.Context, i int) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: appName(i)},
				Data: map[string]string{configLevelKey: "info"}}
			if err := c.admin.Create(ctx, cm); err != nil {
				return fmt.Errorf("creating ConfigMap %s: %w", cm.Name, err)
			}
			return c.admin.Create(ctx, newConfigMyApp(operatorNamespace, i))
		})
	}
	if err != nil {
		return err
	}
	log.Printf("config N=%d: settled; watching a quiet window of %s", res.N, opts.Quiet)
	quietFrom, err := scraper.scrape(ctx)
	if err != nil {
		return err
	}
	select {
	case <-time.After(opts.Quiet):
	case <-ctx.Done():
		return ctx.Err()
	}
	quietTo, err := scraper.scrape(ctx)
	if err != nil {
		return err
	}
	res.Quiet = operatorDelta(quietFrom, quietTo)
	if res.After, err = mgr.stats(ctx); err != nil {
		return err
	}

	if res.Files {
		return nil
	}
	res.Change, res.Changed, err = settle("changing every ConfigMap once", func(ctx context.Context, i int) error {
		// An update without a resourceVersion, so that the benchmark sends no GET the count
		// would take for the operator's.
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: appName(i)},
			Data: map[string]string{configLevelKey: "debug"}}
		if err := c.admin.Update(ctx, cm); err != nil {
			return fmt.Errorf("changing ConfigMap %s: %w", cm.Name, err)
		}
		return nil
	})
	return err
}

// configTable reports the config runs.
func (rep report) configTable(p func(string, ...any)) {
	var config, files []configResult
	for _, r := range rep.Config {
		if r.Files {
			files = append(files, r)
		} else {
			config = append(config, r)
		}
	}
	filesTable(p, files)
	if len(config) == 0 {
		return
	}
	p("## MyApps that roll out on ConfigMap changes\n\n")
	p("On a fresh envtest, N MyApps with `rolloutOnConfigChange: true`, each taking its variables from a\n")
	p("ConfigMap of its own (`envFrom`), created %d at a time with their ConfigMaps; then every ConfigMap\n", concurrency)
	p("changed once. Requests are the operator's, from the API server's `apiserver_request_total` (the\n")
	p("benchmark's own creates and updates of ConfigMaps left out).\n\n")
	rowsDef := []extraRow{
		{"all operator requests per new MyApp", func(r configResult) string { return per(r.Requests.total(nil), r.N) }},
		{"… mutating (applies + status)", func(r configResult) string { return per(r.Requests.total(isMutatingChild), r.N) }},
		{"… GETs of ConfigMaps", func(r configResult) string { return per(r.Requests.total(isConfigMapGet), r.N) }},
		{"operator requests in the quiet window", func(r configResult) string { return fmt.Sprintf("%.0f", r.Quiet.total(nil)) }},
		{"live heap per MyApp (with its ConfigMap's metadata in the cache)", func(r configResult) string {
			return fmt.Sprintf("%.1f KiB", (r.After.LiveHeap-r.Before.LiveHeap)/kib/float64(r.N))
		}},
		{"**all operator requests per ConfigMap change**", func(r configResult) string { return "**" + per(r.Change.total(nil), r.N) + "**" }},
		{"… mutating (the Deployment's apply + status)", func(r configResult) string { return per(r.Change.total(isMutatingChild), r.N) }},
		{"… GETs of the changed ConfigMap", func(r configResult) string { return per(r.Change.total(isConfigMapGet), r.N) }},
		{"live heap per MyApp after the changes", func(r configResult) string {
			return fmt.Sprintf("%.1f KiB", (r.Changed.LiveHeap-r.Before.LiveHeap)/kib/float64(r.N))
		}},
	}
	extraTable(p, config, rowsDef)
}

// filesTable reports the files runs.
func filesTable(p func(string, ...any), runs []configResult) {
	if len(runs) == 0 {
		return
	}
	p("## MyApps with files\n\n")
	p("On a fresh envtest, N MyApps with one file each (`files`), created %d at a time; the operator\n", concurrency)
	p("writes each MyApp's files into an immutable ConfigMap of its own, one more child.\n\n")
	isConfigMap := func(k requestKey) bool { return k.Resource == configMapsResource }
	extraTable(p, runs, []extraRow{
		{"all operator requests per new MyApp", func(r configResult) string { return per(r.Requests.total(nil), r.N) }},
		{"… mutating (applies + status)", func(r configResult) string { return per(r.Requests.total(isMutatingChild), r.N) }},
		{"… live GETs (1 per child: Deployment, Service, ConfigMap)", func(r configResult) string { return per(r.Requests.total(isLiveGet), r.N) }},
		{"… of ConfigMaps", func(r configResult) string { return per(r.Requests.total(isConfigMap), r.N) }},
		{"operator requests in the quiet window", func(r configResult) string { return fmt.Sprintf("%.0f", r.Quiet.total(nil)) }},
		{"live heap per MyApp (with its files ConfigMap's metadata in the cache)", func(r configResult) string {
			return fmt.Sprintf("%.1f KiB", (r.After.LiveHeap-r.Before.LiveHeap)/kib/float64(r.N))
		}},
	})
}

// extraRow is one figure of the config and files tables.
type extraRow struct {
	figure string
	value  func(configResult) string
}

func per(v float64, n int) string { return fmt.Sprintf("%.2f", v/float64(n)) }

func isConfigMapGet(k requestKey) bool { return k.Verb == "GET" && k.Resource == configMapsResource }

// extraTable writes a table of the runs, a column per run.
func extraTable(p func(string, ...any), runs []configResult, rowsDef []extraRow) {
	header := []string{"figure"}
	for _, r := range runs {
		header = append(header, fmt.Sprintf("N=%d", r.N))
	}
	rows := make([][]string, 0, len(rowsDef))
	for _, rw := range rowsDef {
		row := []string{rw.figure}
		for _, r := range runs {
			if r.Err != "" {
				row = append(row, "failed")
				continue
			}
			row = append(row, rw.value(r))
		}
		rows = append(rows, row)
	}
	markdownTable(p, header, rows)
	for _, r := range runs {
		if r.Err != "" {
			p("\nN=%d failed: %s\n", r.N, r.Err)
		}
	}
	p("\n")
}
