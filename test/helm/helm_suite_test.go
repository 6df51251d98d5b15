// Package helm installs the operator with its Helm chart (charts/myapp-operator), as a
// platform team without OLM does, on the real node of a local cluster (make test-helm starts
// one): helm install with the manager image from the cluster's registry, a MyApp of the test
// app serving, helm upgrade to a changed value, helm uninstall and install again. The app is
// asked for a steady stream of requests throughout, and its pods must never be replaced.
package helm

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

var (
	k8s client.Client
	ctx = context.Background()
	env = map[string]string{}
)

// The environment make test-helm sets.
var envVars = []string{
	"E2E_KUBECONFIG",
	"E2E_HELM",           // the helm binary
	"E2E_CHART",          // charts/myapp-operator
	"E2E_PREVIOUS_CHART", // the previous release's chart (make helm-chart-previous)
	"E2E_PREVIOUS_TAG",   // the tag of that release's manager image
	"E2E_MANAGER_IMAGE",  // the manager's repository in the cluster's registry
	"E2E_MANAGER_TAG",    // its tag there
	"E2E_APP_IMAGE",      // the test app's image there
}

func TestHelm(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Helm chart suite")
}

var _ = BeforeSuite(func() {
	for _, k := range envVars {
		env[k] = os.Getenv(k)
		if env[k] == "" {
			Skip(k + " is not set: run `make test-helm`")
		}
	}
	// An image pull and a pod start on the real node take seconds each.
	SetDefaultEventuallyTimeout(3 * time.Minute)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	var err error
	k8s, err = testutil.NewClient(env["E2E_KUBECONFIG"], examplev1.AddToScheme, apiextensionsv1.AddToScheme)
	Expect(err).NotTo(HaveOccurred())
})

// helm runs the helm binary against the cluster and fails on an error; it returns the output.
func helm(args ...string) string {
	GinkgoHelper()
	var out bytes.Buffer
	cmd := exec.Command(env["E2E_HELM"], append(args, "--kubeconfig", env["E2E_KUBECONFIG"])...)
	cmd.Stdout, cmd.Stderr = &out, &out
	By("helm " + strings.Join(args, " "))
	// With --wait it waits on the cluster for minutes: it dies with the suite.
	err := testutil.RunWithParent(cmd)
	GinkgoWriter.Println(out.String())
	Expect(err).NotTo(HaveOccurred(), out.String())
	return out.String()
}
