// Package olmv1 installs the operator through OLM v1 on the local cluster: operator-controller
// and catalogd v1.2.0 run as processes against it, the image tool's registry serves the
// catalog image and the bundle images, and the samples of config/olmv1 (a ClusterCatalog, a
// ClusterExtension and its installer ServiceAccount) install 0.2.0 and upgrade it to 0.3.0.
package olmv1

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
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

const (
	systemNS = "olmv1-system"
	// bundleRepo is where catalog/ says the bundle images are published (make catalog's
	// BUNDLE_REPO); the local registry serves that path under its own address.
	bundleRepo = "example.com/myapp-operator-bundle"
)

var (
	k8s                      client.Client
	kubeconfig, logDir, work string
	registry                 string // host:port of the local registry
	ctx                      = context.Background()
	env                      = map[string]string{}
	repoRoot                 = filepath.Join("..", "..")
)

func TestOLMv1(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "OLM v1 install suite")
}

var _ = BeforeSuite(func() {
	for _, k := range []string{"E2E_KUBECONFIG", "E2E_OLMV1_BIN", "E2E_IMAGE_TOOL", "E2E_MANAGER", "E2E_MANAGER_0_2_0", "E2E_OLMV1_CRDS"} {
		env[k] = os.Getenv(k)
		if env[k] == "" {
			Skip(k + " is not set: run `make test-olmv1`")
		}
	}
	kubeconfig = env["E2E_KUBECONFIG"]
	SetDefaultEventuallyTimeout(3 * time.Minute)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	logDir = filepath.Join(filepath.Dir(kubeconfig), "logs")
	var err error
	work, err = os.MkdirTemp("", "olmv1-test-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, work)

	k8s, err = testutil.NewClient(kubeconfig, examplev1.AddToScheme, apiextensionsv1.AddToScheme)
	Expect(err).NotTo(HaveOccurred())

	By("installing OLM v1's CRDs (ClusterCatalog, ClusterExtension) and its system namespace")
	for _, f := range []string{"catalogd/crd/bases/olm.operatorframework.io_clustercatalogs.yaml",
		"operator-controller/crd/bases/olm.operatorframework.io_clusterextensions.yaml"} {
		applyFile(filepath.Join(env["E2E_OLMV1_CRDS"], f), nil)
	}
	Eventually(func(g Gomega) {
		for _, name := range []string{"clustercatalogs.olm.operatorframework.io", "clusterextensions.olm.operatorframework.io"} {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
			g.Expect(established(crd)).To(BeTrue(), name)
		}
	}).Should(Succeed())
	applyYAML("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + systemNS + "\n")

	By("serving the catalog image and the bundle images from a local registry")
	addrFile := filepath.Join(work, "registry-addr")
	run("registry", env["E2E_IMAGE_TOOL"], nil, "registry", "--addr", "127.0.0.1:0", "--addr-file", addrFile,
		"--dir", filepath.Join(work, "registry"))
	Eventually(func() ([]byte, error) { return os.ReadFile(addrFile) }).ShouldNot(BeEmpty())
	addr, err := os.ReadFile(addrFile)
	Expect(err).NotTo(HaveOccurred())
	registry = string(addr)
	pushBundlesAndCatalog()

	// Both read registries.conf from $HOME (containers/image v5.33), so a HOME of their own
	// sends example.com to the local registry, over plain HTTP, as a mirror would in a
	// disconnected cluster; catalog/ and config/olmv1 are used unchanged.
	home := filepath.Join(work, "home")
	Expect(os.MkdirAll(filepath.Join(home, ".config", "containers"), 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(home, ".config", "containers", "registries.conf"), []byte(
		"[[registry]]\nprefix = \"example.com\"\nlocation = \""+registry+"/example.com\"\ninsecure = true\n"), 0o644)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(home, ".config", "containers", "policy.json"),
		[]byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644)).To(Succeed())

	By("starting catalogd and operator-controller out of cluster, catalogd serving HTTPS on loopback")
	certFile, keyFile, caDir := servingCert()
	catalogdAddr, err := testutil.FreeLoopbackAddr()
	Expect(err).NotTo(HaveOccurred())
	webhookAddr, err := testutil.FreeLoopbackAddr()
	Expect(err).NotTo(HaveOccurred())
	_, webhookPort, _ := net.SplitHostPort(webhookAddr)
	metricsAddr, err := testutil.FreeLoopbackAddr()
	Expect(err).NotTo(HaveOccurred())
	homeEnv := []string{"HOME=" + home}
	run("catalogd", filepath.Join(env["E2E_OLMV1_BIN"], "catalogd"), homeEnv,
		"--system-namespace="+systemNS, "--catalogs-server-addr="+catalogdAddr, "--external-address="+catalogdAddr,
		"--cache-dir="+filepath.Join(work, "catalogd-cache"), "--tls-cert="+certFile, "--tls-key="+keyFile,
		"--webhook-server-port="+webhookPort, "--metrics-bind-address="+metricsAddr, "--health-probe-bind-address=0")
	run("operator-controller", filepath.Join(env["E2E_OLMV1_BIN"], "operator-controller"), homeEnv,
		"--system-namespace="+systemNS, "--cache-path="+filepath.Join(work, "operator-controller-cache"),
		"--catalogd-cas-dir="+caDir, "--health-probe-bind-address=0")
})

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// pushBundlesAndCatalog pushes the bundle images with make catalog's recipe and checks they
// are the very images catalog/ names by digest, then pushes catalog/ as the catalog image.
func pushBundlesAndCatalog() {
	cmd := exec.Command(filepath.Join(repoRoot, "hack", "catalog", "push-bundles.sh"), env["E2E_IMAGE_TOOL"], registry, bundleRepo,
		filepath.Join(repoRoot, "releases", "0.1.0"), filepath.Join(repoRoot, "releases", "0.2.0"), filepath.Join(repoRoot, "bundle"))
	cmd.Stderr = GinkgoWriter
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred())
	catalog, err := os.ReadFile(filepath.Join(repoRoot, "catalog", "myapp-operator", "catalog.yaml"))
	Expect(err).NotTo(HaveOccurred())
	refs := strings.Fields(string(out))
	Expect(refs).To(HaveLen(3))
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

// servingCert writes a self-signed certificate for 127.0.0.1 (catalogd's HTTPS, webhook and
// metrics servers), and a folder holding it as the CA operator-controller trusts.
func servingCert() (certFile, keyFile, caDir string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "catalogd"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalECPrivateKey(key)
	Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(work, "pki")
	caDir = filepath.Join(dir, "ca")
	Expect(os.MkdirAll(caDir, 0o700)).To(Succeed())
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	Expect(os.WriteFile(certFile, certPEM, 0o600)).To(Succeed())
	Expect(os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(caDir, "ca.crt"), certPEM, 0o600)).To(Succeed())
	return certFile, keyFile, caDir
}

// run starts a process that lives until the suite (or the spec that started it) ends, logging
// to the cluster's log folder, as the cluster's admin unless env says otherwise.
func run(name, bin string, env []string, args ...string) *testutil.Process {
	p, err := testutil.StartProcess(name, filepath.Join(logDir, "olmv1-test-"+name+".log"), bin,
		append([]string{"KUBECONFIG=" + kubeconfig}, env...), args...)
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("started %s (pid %d), log %s\n", name, p.Pid(), p.Log)
	DeferCleanup(func() {
		p.Signal(os.Kill)
		<-p.Exited()
	})
	return p
}
