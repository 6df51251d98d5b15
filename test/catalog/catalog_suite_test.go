// Package catalog installs the operator from its catalog image, as a user installs it from
// OperatorHub, on the real node of a local cluster (make test-catalog starts one): with OLM v0
// (a CatalogSource whose registry pod serves the catalog image, bundle images unpacked by
// OLM's Job) and with OLM v1 (a ClusterCatalog and a ClusterExtension). Each story installs
// 0.2.0, runs two MyApps of the test app, upgrades to the current version while a load
// generator sends them a steady stream of requests through their Services, and uninstalls.
// A third installs the current version with OLM v1 from the mirror a disconnected cluster
// would have: the bundle pinned by digest, and only its images, by digest, with no tag.
package catalog

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

var (
	k8s                client.Client
	kubeconfig, logDir string
	ctx                = context.Background()
	env                = map[string]string{}
	repoRoot           = filepath.Join("..", "..")
)

// The environment make test-catalog sets.
var envVars = []string{
	"E2E_KUBECONFIG",
	"E2E_REGISTRY",       // host:port of the cluster's registry; it serves example.com/... too
	"E2E_APP_IMAGE",      // the test app's repository there, tagged v1 and v2
	"E2E_MIRROR_CATALOG", // the digest-only mirror's catalog image (hack/catalog/disconnected.sh)
	"E2E_OLM_BIN",        // OLM v0's olm and catalog binaries
	"E2E_OLM_CRDS",       // OLM v0's CRDs
	"E2E_OPM_IMAGE",      // opm, for OLM v0's bundle unpack Job
	"E2E_OLM_UTIL_IMAGE", // OLM's cpb, for the same Job
	"E2E_OLMV1_BIN",      // catalogd and operator-controller
	"E2E_OLMV1_CRDS",     // operator-controller's config/base
}

func TestCatalog(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Catalog install suite")
}

var _ = BeforeSuite(func() {
	for _, k := range envVars {
		env[k] = os.Getenv(k)
		if env[k] == "" {
			Skip(k + " is not set: run `make test-catalog`")
		}
	}
	kubeconfig = env["E2E_KUBECONFIG"]
	logDir = filepath.Join(filepath.Dir(kubeconfig), "logs")
	// Pulls, unpack Jobs and pod starts on the real node take seconds each; an install is a
	// chain of them.
	SetDefaultEventuallyTimeout(4 * time.Minute)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	var err error
	k8s, err = testutil.NewClient(kubeconfig, examplev1.AddToScheme, operatorsv1alpha1.AddToScheme,
		operatorsv1.AddToScheme, apiextensionsv1.AddToScheme)
	Expect(err).NotTo(HaveOccurred())
})
