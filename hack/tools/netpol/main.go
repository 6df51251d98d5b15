// Command netpol enforces NetworkPolicies on the real node of a local cluster (hack/localcluster
// --network-policy): CNI's bridge plugin enforces none, and a story that proves an access
// policy refuses a client needs a node that does. It runs kube-router's network policy
// controller alone, as kube-router does with --run-firewall and neither its router nor its
// service proxy (kube-proxy is the node's proxy): iptables chains per pod and policy, ipsets of
// the peers, and the pods of the node this runs on, named by --hostname-override.
//
// kube-router's policy controller needs only iptables, ipset and the kernel's xt_set and
// conntrack matches; SIG Network's kube-network-policies needs nftables' queue statement,
// which this project's CI kernel lacks (docs/design/local-cluster.md).
//
// It stops on SIGTERM and leaves its chains and sets behind: localcluster down removes every
// KUBE-* chain and ipset a real node left, whoever made it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/cloudnativelabs/kube-router/v2/pkg/controllers/netpol"
	"github.com/cloudnativelabs/kube-router/v2/pkg/healthcheck"
	"github.com/cloudnativelabs/kube-router/v2/pkg/options"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	node := flag.String("hostname-override", "", "the node whose pods this guards")
	serviceCIDR := flag.String("service-cluster-ip-range", "10.96.0.0/12", "the cluster's Service addresses")
	syncPeriod := flag.Duration("sync-period", time.Minute, "how often the rules are written again without a change")
	flag.Parse()
	if err := run(*kubeconfig, *node, *serviceCIDR, *syncPeriod); err != nil {
		fmt.Fprintln(os.Stderr, "netpol:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, node, serviceCIDR string, syncPeriod time.Duration) error {
	if node == "" {
		return fmt.Errorf("--hostname-override is required")
	}
	rest, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(rest)
	if err != nil {
		return err
	}
	config := options.NewKubeRouterConfig()
	config.RunFirewall = true
	config.EnableIPv4 = true
	config.HostnameOverride = node
	config.ClusterIPCIDRs = []string{serviceCIDR}
	config.IPTablesSyncPeriod = syncPeriod

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	factory := informers.NewSharedInformerFactory(cs, 0)
	pods := factory.Core().V1().Pods().Informer()
	namespaces := factory.Core().V1().Namespaces().Informer()
	policies := factory.Networking().V1().NetworkPolicies().Informer()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced, namespaces.HasSynced, policies.HasSynced) {
		return fmt.Errorf("the informers did not sync")
	}

	// The controller reads its node's addresses once, at its start: wait for the kubelet to
	// register it.
	if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		return err == nil && len(n.Status.Addresses) > 0, nil
	}); err != nil {
		return fmt.Errorf("waiting for the node %s: %w", node, err)
	}
	iptables, ipsets, err := netpol.NewIPTablesHandlers(config)
	if err != nil {
		return err
	}
	var ipsetMutex sync.Mutex
	npc, err := netpol.NewNetworkPolicyController(cs, config, pods, policies, namespaces, &ipsetMutex, iptables, ipsets)
	if err != nil {
		return err
	}
	for informer, handler := range map[cache.SharedIndexInformer]cache.ResourceEventHandler{
		pods: npc.PodEventHandler, namespaces: npc.NamespaceEventHandler, policies: npc.NetworkPolicyEventHandler,
	} {
		if _, err := informer.AddEventHandler(handler); err != nil {
			return err
		}
	}

	// The controller reports its heartbeats to kube-router's health checker, which this does
	// not run: drain them.
	heartbeats := make(chan *healthcheck.ControllerHeartbeat, 16)
	go func() {
		for range heartbeats {
		}
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go npc.Run(heartbeats, ctx.Done(), &wg)
	<-ctx.Done()
	wg.Wait()
	return nil
}
