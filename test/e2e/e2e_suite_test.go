// Package e2e runs the operator as a separate process against the local cluster (make
// test-e2e starts it): real kube-apiserver, controller manager and scheduler, with pods on
// kwok's simulated nodes.
package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

var (
	kubeconfig, managerBin, kubectlBin string
	k8s                                client.WithWatch
	ctx                                = context.Background()
	logDir                             string
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "End-to-end suite")
}

var _ = BeforeSuite(func() {
	kubeconfig, managerBin, kubectlBin = os.Getenv("E2E_KUBECONFIG"), os.Getenv("E2E_MANAGER"), os.Getenv("E2E_KUBECTL")
	if kubeconfig == "" || managerBin == "" || kubectlBin == "" {
		Skip("E2E_KUBECONFIG, E2E_MANAGER and E2E_KUBECTL are not set: run `make test-e2e`")
	}
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)

	var err error
	k8s, err = testutil.NewClient(kubeconfig, examplev1.AddToScheme)
	Expect(err).NotTo(HaveOccurred())
	logDir = filepath.Join(filepath.Dir(kubeconfig), "logs")
})

// operator is one process of the manager binary.
type operator struct {
	*testutil.Process
	metrics string
}

// startOperator runs the manager with leader election, its metrics served in plain HTTP on a
// free loopback port so that the test can count reconciles. It stops when the spec ends.
func startOperator(name string) *operator { return startOperatorWith(name, operatorConfig{}) }

// stop signals the process and waits for it to exit. One that does not exit within 45 s fails
// the spec and is killed: left running, a manager stuck in a loop takes the CPU of every later
// stage of the run.
func (o *operator) stop(sig syscall.Signal) {
	o.Signal(sig)
	select {
	case <-o.Exited():
		return
	case <-time.After(45 * time.Second):
	}
	o.Signal(syscall.SIGKILL)
	Fail(fmt.Sprintf("the operator %s did not exit within 45 s of %s, and was killed; see %s", o.Name, sig, o.Log))
}

// logContains tells whether the operator's log holds a line with s.
func (o *operator) logContains(s string) bool {
	b, err := os.ReadFile(o.Log)
	return err == nil && strings.Contains(string(b), s)
}

// isLeader tells whether the operator has won the leader election.
func (o *operator) isLeader() bool { return o.logContains("Successfully acquired lease") }

// reconciles reads the operator's count of MyApp reconciles from its metrics endpoint. It
// fails the test when it cannot measure: a scrape that fails, or an answer that is not the
// operator's metrics. A process whose controller never started (a standby) has no reconcile
// series yet, which counts as 0.
func (o *operator) reconciles() float64 {
	resp, err := http.Get(o.metrics)
	Expect(err).NotTo(HaveOccurred(), "scraping the operator's metrics")
	defer func() { _ = resp.Body.Close() }()
	Expect(resp.StatusCode).To(Equal(http.StatusOK), "scraping the operator's metrics")
	total, sawRuntime := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		sawRuntime = sawRuntime || strings.HasPrefix(line, "controller_runtime_") || strings.HasPrefix(line, "rest_client_requests_total")
		if strings.HasPrefix(line, "controller_runtime_reconcile_total{") && strings.Contains(line, `controller="myapp"`) {
			fields := strings.Fields(line)
			v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
			Expect(err).NotTo(HaveOccurred(), "reading %q", line)
			total += v
		}
	}
	Expect(sc.Err()).NotTo(HaveOccurred())
	Expect(sawRuntime).To(BeTrue(), "the metrics endpoint answered without the manager's metrics")
	return total
}

// kubectl runs the kubectl built for the cluster.
func kubectl(args ...string) string {
	cmd := exec.Command(kubectlBin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "kubectl %s: %s", strings.Join(args, " "), out)
	return string(out)
}
