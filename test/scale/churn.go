package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// The churn run: on the local cluster, where kube-controller-manager rolls Deployments out
// and kwok plays the kubelet of simulated nodes (pods turn Running and Ready at once), N
// MyApps are created and brought to Ready, then the image of all N is changed, and the time
// until every one of them is Ready again on the new image is measured.

// churnOptions says where the local cluster's binaries are.
type churnOptions struct {
	Sizes        []int
	LocalCluster string // bin/localcluster
	K8sBin       string // kube-apiserver, kube-controller-manager, kube-scheduler, etcd, kubectl
	Kwok         string
}

// churnImage is what every MyApp's image changes to.
const churnImage = "nginx:1.28"

// podsPerNode is the capacity hack/localcluster gives a simulated node.
const podsPerNode = 250

// churnResult is what one size of the churn run measured.
type churnResult struct {
	N            int
	Nodes        int
	FirstReady   time.Duration // from the first create until all N MyApps are Ready
	ChurnReady   time.Duration // from the first image change until all N are Ready on it
	ChurnPatches time.Duration // how long changing the N images took (part of ChurnReady)
	Err          string        // why the run failed, if it did
}

func runChurn(ctx context.Context, opts options, managerBin string, n int) (res churnResult, err error) {
	// Room for every pod plus the rolling update's surge (one extra pod per MyApp), and some.
	res = churnResult{N: n, Nodes: max(2, (n*(workloadReplicas+1))/podsPerNode+2)}
	dir, err := os.MkdirTemp("", "bench-churn-"+strconv.Itoa(n)+"-")
	if err != nil {
		return res, err
	}
	lc := func(ctx context.Context, args ...string) error {
		cmd := exec.CommandContext(ctx, opts.Churn.LocalCluster, append([]string{
			"--state", dir, "--bin", opts.Churn.K8sBin, "--kwok", opts.Churn.Kwok,
			"--nodes", strconv.Itoa(res.Nodes),
		}, args...)...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		return cmd.Run()
	}
	log.Printf("N=%d churn: starting the local cluster with %d simulated nodes (files in %s)", n, res.Nodes, dir)
	if err := lc(ctx, "up"); err != nil {
		return res, fmt.Errorf("starting the local cluster: %w", err)
	}
	defer func() {
		// Not under ctx: an interrupted run must still stop its cluster.
		if derr := lc(context.WithoutCancel(ctx), "down"); derr != nil {
			err = errors.Join(err, fmt.Errorf("stopping the local cluster: %w", derr))
		} else if err == nil {
			_ = os.RemoveAll(dir)
		}
	}()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	apply := exec.CommandContext(ctx, filepath.Join(opts.Churn.K8sBin, "kubectl"), "--kubeconfig", kubeconfig,
		"apply", "--server-side", "-f", filepath.Join("config", "crd", "bases"))
	apply.Stdout, apply.Stderr = os.Stderr, os.Stderr
	if err := apply.Run(); err != nil {
		return res, fmt.Errorf("installing the CRD: %w", err)
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return res, err
	}
	restCfg.QPS = -1
	c, err := client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		return res, err
	}
	if err := waitFor(ctx, 2*time.Minute, "the CRD to be served", func(ctx context.Context) (bool, error) {
		err := c.List(ctx, &examplev1.MyAppList{}, client.InNamespace(operatorNamespace))
		return err == nil, nil
	}); err != nil {
		return res, err
	}
	if err := createNamespace(ctx, c, operatorNamespace); err != nil {
		return res, err
	}
	mgr, err := startManager(managerBin, kubeconfig, filepath.Join(dir, "manager.log"), opts.Manager,
		"WATCH_NAMESPACE="+operatorNamespace)
	if err != nil {
		return res, err
	}
	defer mgr.stop()
	if err := mgr.waitReady(ctx, 2*time.Minute); err != nil {
		return res, err
	}

	log.Printf("N=%d churn: creating %d MyApps and waiting for all to be Ready", n, n)
	start := time.Now()
	if err := createMyApps(ctx, c, operatorNamespace, n); err != nil {
		return res, err
	}
	if err := waitAllReady(ctx, c, n, workloadImage, opts.SettleTimeout); err != nil {
		return res, fmt.Errorf("churn at N=%d: %w (manager log: %s)", n, err, mgr.logPath)
	}
	res.FirstReady = time.Since(start)

	log.Printf("N=%d churn: all Ready after %s; changing the image of all %d", n, res.FirstReady.Round(time.Millisecond), n)
	start = time.Now()
	if err := parallel(ctx, n, func(ctx context.Context, i int) error {
		app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: appName(i)}}
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"image":"`+churnImage+`"}}`))
		return c.Patch(ctx, app, patch)
	}); err != nil {
		return res, fmt.Errorf("changing the images: %w", err)
	}
	res.ChurnPatches = time.Since(start)
	if err := waitAllReady(ctx, c, n, churnImage, opts.SettleTimeout); err != nil {
		return res, fmt.Errorf("churn at N=%d: %w (manager log: %s)", n, err, mgr.logPath)
	}
	res.ChurnReady = time.Since(start)
	log.Printf("N=%d churn: all Ready on the new image after %s", n, res.ChurnReady.Round(time.Millisecond))
	return res, nil
}

// waitAllReady polls until all n MyApps are Ready for their current generation and each
// Deployment runs image on all its replicas and nothing else: a MyApp's Ready alone could
// still be the one from before the deployment controller saw the new template.
func waitAllReady(ctx context.Context, c client.Client, n int, image string, timeout time.Duration) error {
	var missing string
	err := waitFor(ctx, timeout, "all MyApps to be Ready", func(ctx context.Context) (bool, error) {
		apps := &examplev1.MyAppList{}
		if err := c.List(ctx, apps, client.InNamespace(operatorNamespace)); err != nil {
			return false, err
		}
		deployments := &appsv1.DeploymentList{}
		if err := c.List(ctx, deployments, client.InNamespace(operatorNamespace)); err != nil {
			return false, err
		}
		rolled := map[string]bool{}
		for _, d := range deployments.Items {
			s := d.Status
			rolled[d.Name] = len(d.Spec.Template.Spec.Containers) > 0 && d.Spec.Template.Spec.Containers[0].Image == image &&
				s.ObservedGeneration == d.Generation && d.Spec.Replicas != nil &&
				s.UpdatedReplicas == *d.Spec.Replicas && s.Replicas == *d.Spec.Replicas && s.AvailableReplicas == *d.Spec.Replicas
		}
		ready := 0
		missing = ""
		for _, a := range apps.Items {
			cond := meta.FindStatusCondition(a.Status.Conditions, examplev1.ConditionReady)
			if cond != nil && cond.Status == metav1.ConditionTrue && a.Status.ObservedGeneration == a.Generation && rolled[a.Name] {
				ready++
			} else if missing == "" {
				missing = a.Name
			}
		}
		return ready == n && len(apps.Items) == n, nil
	})
	if err != nil {
		return fmt.Errorf("%w (e.g. %s not yet)", err, missing)
	}
	return nil
}

// waitFor polls cond every second until it holds, fails, or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond(ctx)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s", timeout, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
