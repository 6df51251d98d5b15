// Package olmv1 installs the operator through OLM v1 on the local cluster: operator-controller
// and catalogd v1.2.0 run as processes against it, the image tool's registry serves the
// catalog image and the bundle images, and the samples of config/olmv1 (a ClusterCatalog, a
// ClusterExtension and its installer ServiceAccount) install 0.2.0 and upgrade it one release
// at a time, 0.3.0, 0.3.1, 0.3.2, 0.4.0, 0.4.1, then the current version, each past the CRD preflight
// as the upgrade docs say. Each release's manager (built from its release commit) serves a MyApp
// under that release's permissions; the cluster's nodes are kwok's, so the app's pods are
// objects only.
package olmv1

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
	"github.com/example/myapp-operator/test/olmv1env"
)

// bundleRepo is where catalog/ says the bundle images are published (make catalog's
// BUNDLE_REPO); the local registry serves that path under its own address.
const bundleRepo = "example.com/myapp-operator-bundle"

var (
	olm      olmv1env.Env // the local cluster, OLM v1 on it, and the suite's folders
	registry string       // host:port of the local registry
	ctx      = context.Background()
	env      = map[string]string{}
	repoRoot = filepath.Join("..", "..")
)

func TestOLMv1(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "OLM v1 install suite")
}

var _ = BeforeSuite(func() {
	for _, k := range []string{"E2E_KUBECONFIG", "E2E_OLMV1_BIN", "E2E_IMAGE_TOOL", "E2E_MANAGER", "E2E_MANAGER_0_2_0", "E2E_MANAGER_0_3_0", "E2E_MANAGER_0_3_1", "E2E_MANAGER_0_3_2", "E2E_MANAGER_0_4_0", "E2E_MANAGER_0_4_1", "E2E_OLMV1_CRDS"} {
		env[k] = os.Getenv(k)
		if env[k] == "" {
			Skip(k + " is not set: run `make test-olmv1`")
		}
	}
	olm.Kubeconfig = env["E2E_KUBECONFIG"]
	SetDefaultEventuallyTimeout(3 * time.Minute)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	olm.LogDir = filepath.Join(filepath.Dir(olm.Kubeconfig), "logs")
	var err error
	olm.Work, err = os.MkdirTemp("", "olmv1-test-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, olm.Work)

	olm.K8s, err = testutil.NewClient(olm.Kubeconfig, examplev1.AddToScheme, apiextensionsv1.AddToScheme)
	Expect(err).NotTo(HaveOccurred())

	By("installing OLM v1's CRDs (ClusterCatalog, ClusterExtension) and its system namespace")
	olm.InstallCRDs(env["E2E_OLMV1_CRDS"])

	By("serving the catalog image and the bundle images from a local registry")
	addrFile := filepath.Join(olm.Work, "registry-addr")
	olm.Run("registry", env["E2E_IMAGE_TOOL"], nil, "registry", "--addr", "127.0.0.1:0", "--addr-file", addrFile,
		"--dir", filepath.Join(olm.Work, "registry"))
	Eventually(func() ([]byte, error) { return os.ReadFile(addrFile) }).ShouldNot(BeEmpty())
	addr, err := os.ReadFile(addrFile)
	Expect(err).NotTo(HaveOccurred())
	registry = string(addr)
	pushBundlesAndCatalog()

	// A HOME of their own sends example.com to the local registry (see olmv1env.Env.Start).
	By("starting catalogd and operator-controller out of cluster, catalogd serving HTTPS on loopback")
	olm.RunControllers(env["E2E_OLMV1_BIN"], registry)
})

// pushBundlesAndCatalog pushes the bundle images with make catalog's recipe and checks they
// are the very images catalog/ names by digest, then pushes catalog/ as the catalog image.
func pushBundlesAndCatalog() {
	// Every released bundle (releases/<version>, in version order) and the current one.
	bundles, err := filepath.Glob(filepath.Join(repoRoot, "releases", "*"))
	Expect(err).NotTo(HaveOccurred())
	Expect(bundles).NotTo(BeEmpty())
	bundles = append(bundles, filepath.Join(repoRoot, "bundle"))
	cmd := exec.Command(filepath.Join(repoRoot, "hack", "catalog", "push-bundles.sh"),
		append([]string{env["E2E_IMAGE_TOOL"], registry, bundleRepo}, bundles...)...)
	cmd.Stderr = GinkgoWriter
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred())
	catalog, err := os.ReadFile(filepath.Join(repoRoot, "catalog", "myapp-operator", "catalog.yaml"))
	Expect(err).NotTo(HaveOccurred())
	refs := strings.Fields(string(out))
	Expect(refs).To(HaveLen(len(bundles)))
	for _, ref := range refs {
		published := strings.TrimPrefix(ref, registry+"/")
		Expect(string(catalog)).To(ContainSubstring("image: "+published+"\n"),
			"the bundle image built here must be the one catalog/ names: run make catalog")
	}
	cmd = exec.Command(env["E2E_IMAGE_TOOL"], "build", "--tag", registry+"/example.com/myapp-operator-catalog:latest",
		"--add", filepath.Join(repoRoot, "catalog")+":/configs",
		"--label", "operators.operatorframework.io.index.configs.v1=/configs", "--push")
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	Expect(cmd.Run()).To(Succeed())
}
