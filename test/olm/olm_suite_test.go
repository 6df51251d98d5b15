// Package olm installs the operator through Operator Lifecycle Manager on the local cluster:
// OLM's own olm and catalog operators run as processes against it, the project's catalog is
// served by `opm serve` on loopback, and a Subscription installs and upgrades the operator.
package olm

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

var (
	k8s                client.WithWatch
	kubeconfig, logDir string
	catalogAddress     string
	catalogDir         string
	ctx                = context.Background()
	olmBinDir, opmBin  string
	managerBin         string
	manager020Bin      string // the manager of 0.2.0, for the upgrade from it
	manager030Bin      string // the manager of 0.3.0, for the upgrade from it
	manager031Bin      string // the manager of 0.3.1, for the upgrade from it
	manager032Bin      string // the manager of 0.3.2, for the upgrade from it
	manager040Bin      string // the manager of 0.4.0, for the upgrade from it
	manager041Bin      string // the manager of 0.4.1, for the upgrade from it
)

func TestOLM(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "OLM install suite")
}

var _ = BeforeSuite(func() {
	kubeconfig, olmBinDir, opmBin = os.Getenv("E2E_KUBECONFIG"), os.Getenv("E2E_OLM_BIN"), os.Getenv("E2E_OPM")
	managerBin, manager020Bin, manager030Bin = os.Getenv("E2E_MANAGER"), os.Getenv("E2E_MANAGER_0_2_0"), os.Getenv("E2E_MANAGER_0_3_0")
	manager031Bin, manager032Bin, manager040Bin = os.Getenv("E2E_MANAGER_0_3_1"), os.Getenv("E2E_MANAGER_0_3_2"), os.Getenv("E2E_MANAGER_0_4_0")
	manager041Bin = os.Getenv("E2E_MANAGER_0_4_1")
	// catalog/ names its bundles by image, which OLM would unpack with a Job that simulated
	// nodes cannot run: make test-olm renders the same catalog from the bundle directories.
	catalogDir = os.Getenv("E2E_CATALOG_DIR")
	if kubeconfig == "" || olmBinDir == "" || opmBin == "" || managerBin == "" || manager020Bin == "" || manager030Bin == "" || manager031Bin == "" || manager032Bin == "" || manager040Bin == "" || manager041Bin == "" || catalogDir == "" {
		Skip("E2E_KUBECONFIG, E2E_OLM_BIN, E2E_OPM, E2E_MANAGER, E2E_MANAGER_0_2_0, E2E_MANAGER_0_3_0, E2E_MANAGER_0_3_1, E2E_MANAGER_0_3_2, E2E_MANAGER_0_4_0, E2E_MANAGER_0_4_1 and E2E_CATALOG_DIR are not set: run `make test-olm`")
	}
	SetDefaultEventuallyTimeout(3 * time.Minute)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	logDir = filepath.Join(filepath.Dir(kubeconfig), "logs")

	var err error
	k8s, err = testutil.NewClient(kubeconfig, operatorsv1alpha1.AddToScheme, operatorsv1.AddToScheme, examplev1.AddToScheme)
	Expect(err).NotTo(HaveOccurred())

	// The catalog, rendered from the bundle directories, served over gRPC on a free loopback port.
	catalogAddress, err = testutil.FreeLoopbackAddr()
	Expect(err).NotTo(HaveOccurred())
	_, port, err := net.SplitHostPort(catalogAddress)
	Expect(err).NotTo(HaveOccurred())
	// --pprof-addr= turns off opm's startup profiler, which otherwise listens on the fixed
	// localhost:6060 and makes opm exit when another opm serve on the machine holds it.
	opm := run("opm-serve", opmBin, nil, "serve", catalogDir, "-p", port, "--pprof-addr=")
	Eventually(func() error {
		select {
		case <-opm.Exited():
			out, _ := os.ReadFile(opm.Log)
			return StopTrying("opm serve exited: " + string(out))
		default:
		}
		c, err := net.Dial("tcp", catalogAddress)
		if err == nil {
			_ = c.Close()
		}
		return err
	}).Should(Succeed())

	// OLM's operators, out of cluster, as the admin of the local cluster.
	run("olm", filepath.Join(olmBinDir, "olm"), nil, "--namespace=olm", "--writeStatusName=", "--writePackageServerStatusName=")
	run("catalog", filepath.Join(olmBinDir, "catalog"), nil, "--namespace=olm", "--writeStatusName=", "--kubeconfig="+kubeconfig)
})

// run starts a process that lives until the suite (or the spec that started it) ends, logging
// to the cluster's log folder. env overrides the test's environment.
func run(name, bin string, env []string, args ...string) *testutil.Process {
	p, err := testutil.StartProcess(name, filepath.Join(logDir, "olm-test-"+name+".log"), bin,
		append([]string{"KUBECONFIG=" + kubeconfig}, env...), args...)
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("started %s (pid %d), log %s\n", name, p.Pid(), p.Log)
	DeferCleanup(func() {
		p.Signal(os.Kill)
		<-p.Exited()
	})
	return p
}
