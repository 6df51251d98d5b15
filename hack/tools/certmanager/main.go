// Command certmanager runs cert-manager's own controllers for the real node's certificate
// story: the Certificate controllers, the approver, and the self-signed and CA issuers, from
// the packages of the cert-manager release whose types the operator builds on. The module
// proxy serves that release's root module (its controllers) but not its cmd/controller
// module, whose main wires them (docs/design/local-cluster.md); this is that wiring, cut to
// the issuers the story uses: no ACME, Vault or Venafi, no webhook, no ingress-shim.
//
// It runs outside the cluster with the cluster's admin kubeconfig, as the story's Prometheus
// does, and stops on SIGTERM or when its parent dies.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	"golang.org/x/sync/errgroup"

	// Each registers its controller with controllerpkg.Known.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"

	// Each registers its issuer with the issuers' controllers.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

// controllers are the controllers run, named as cert-manager names them: every one the
// imports above register.
var controllers = []string{
	"issuers", "clusterissuers",
	"certificaterequests-approver", "certificaterequests-issuer-selfsigned", "certificaterequests-issuer-ca",
	"certificates-trigger", "certificates-issuing", "certificates-key-manager", "certificates-request-manager",
	"certificates-readiness", "certificates-revision-manager",
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	clusterResources := flag.String("cluster-resource-namespace", "kube-system", "the namespace of ClusterIssuers' Secrets")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, *kubeconfig, *clusterResources); err != nil {
		fmt.Fprintln(os.Stderr, "certmanager:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, clusterResources string) error {
	factory, err := controllerpkg.NewContextFactory(ctx, controllerpkg.ContextOptions{
		Kubeconfig: kubeconfig, KubernetesAPIQPS: 50, KubernetesAPIBurst: 100,
		IssuerOptions: controllerpkg.IssuerOptions{ClusterResourceNamespace: clusterResources},
	})
	if err != nil {
		return err
	}
	base, err := factory.Build()
	if err != nil {
		return err
	}
	known := controllerpkg.Known()
	g, ctx := errgroup.WithContext(ctx)
	for _, name := range controllers {
		constructor, ok := known[name]
		if !ok {
			return fmt.Errorf("cert-manager registers no controller %q (it has %s)", name, strings.Join(keys(known), ", "))
		}
		c, err := constructor(factory)
		if err != nil {
			return fmt.Errorf("setting up %s: %w", name, err)
		}
		g.Go(func() error { return c.Run(2, ctx) })
	}
	base.SharedInformerFactory.Start(ctx.Done())
	base.KubeSharedInformerFactory.Start(ctx.Done())
	fmt.Fprintf(os.Stderr, "certmanager: running %s\n", strings.Join(controllers, ", "))
	return g.Wait()
}

func keys(m map[string]controllerpkg.Constructor) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
