// Package olmv1env runs OLM v1 (operator-controller and catalogd, built from their Go module)
// out of cluster against a local cluster, and reads and changes its ClusterExtensions, for
// the suites that install the operator through OLM v1 (test/olmv1 on simulated nodes,
// test/catalog on a real node). Its functions are Ginkgo steps: they fail the spec that calls
// them.
package olmv1env

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive,staticcheck // Ginkgo's DSL, as in the suites
	. "github.com/onsi/gomega"    //nolint:revive,staticcheck // Gomega's DSL, as in the suites
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/myapp-operator/internal/testutil"
)

// SystemNamespace is OLM v1's own namespace.
const SystemNamespace = "olmv1-system"

// Extension is the ClusterExtension of config/olmv1/clusterextension.yaml.
const Extension = "myapp-operator"

var ctx = context.Background()

// Env is a local cluster and where the suite keeps its files.
type Env struct {
	K8s        client.Client
	Kubeconfig string
	// LogDir receives the logs of the processes started; Work holds their files.
	LogDir, Work string
}

// Start installs OLM v1's CRDs (from crdsDir, operator-controller's config/base) and system
// namespace, and runs catalogd and operator-controller from binDir until the suite ends. Both
// pull images named example.com/... from registry/example.com/..., over plain HTTP, as a
// mirror would in a disconnected cluster, so catalog/ and config/olmv1 are used unchanged.
func (e Env) Start(binDir, crdsDir, registry string) {
	e.InstallCRDs(crdsDir)
	e.RunControllers(binDir, registry)
}

// InstallCRDs is Start's first half: OLM v1's CRDs (from crdsDir, operator-controller's
// config/base), once established, and its system namespace.
func (e Env) InstallCRDs(crdsDir string) {
	for _, f := range []string{"catalogd/crd/bases/olm.operatorframework.io_clustercatalogs.yaml",
		"operator-controller/crd/bases/olm.operatorframework.io_clusterextensions.yaml"} {
		e.ApplyFile(filepath.Join(crdsDir, f), nil)
	}
	Eventually(func(g Gomega) {
		for _, name := range []string{"clustercatalogs.olm.operatorframework.io", "clusterextensions.olm.operatorframework.io"} {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(e.K8s.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
			g.Expect(established(crd)).To(BeTrue(), name)
		}
	}).Should(Succeed())
	e.ApplyYAML("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + SystemNamespace + "\n")
}

// RunControllers is Start's second half, once the CRDs are in: catalogd and operator-controller
// from binDir, pulling example.com/... from registry/example.com/... over plain HTTP.
func (e Env) RunControllers(binDir, registry string) {
	// Both read registries.conf from $HOME (containers/image v5.33): a HOME of their own.
	home := filepath.Join(e.Work, "home")
	Expect(os.MkdirAll(filepath.Join(home, ".config", "containers"), 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(home, ".config", "containers", "registries.conf"), []byte(
		"[[registry]]\nprefix = \"example.com\"\nlocation = \""+registry+"/example.com\"\ninsecure = true\n"), 0o644)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(home, ".config", "containers", "policy.json"),
		[]byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644)).To(Succeed())

	certFile, keyFile, caDir := e.servingCert()
	homeEnv := []string{"HOME=" + home}
	e.runListening("catalogd", filepath.Join(binDir, "catalogd"), homeEnv, func(catalogs, webhook, metrics string) []string {
		_, webhookPort, _ := net.SplitHostPort(webhook)
		return []string{"--system-namespace=" + SystemNamespace, "--catalogs-server-addr=" + catalogs, "--external-address=" + catalogs,
			"--cache-dir=" + filepath.Join(e.Work, "catalogd-cache"), "--tls-cert=" + certFile, "--tls-key=" + keyFile,
			"--webhook-server-port=" + webhookPort, "--metrics-bind-address=" + metrics, "--health-probe-bind-address=0"}
	})
	e.Run("operator-controller", filepath.Join(binDir, "operator-controller"), homeEnv,
		"--system-namespace="+SystemNamespace, "--cache-path="+filepath.Join(e.Work, "operator-controller-cache"),
		"--catalogd-cas-dir="+caDir, "--health-probe-bind-address=0")
}

// listenAttempts is how many times runListening picks ports for one controller.
const listenAttempts = 3

// runListening starts catalogd on three ports picked free (its catalogs server, webhook and
// metrics) and waits until it listens on all three. A port is free only when picked: when
// the controller exits saying "address already in use", the ports are picked again, up to
// listenAttempts times, each attempt logging to a file of its own. Any other exit fails the
// spec at once, naming the log, instead of leaving the catalog to time out unserved.
func (e Env) runListening(name, bin string, env []string, args func(catalogs, webhook, metrics string) []string) {
	for attempt := 1; ; attempt++ {
		addrs := make([]string, 3)
		for i := range addrs {
			var err error
			addrs[i], err = testutil.FreeLoopbackAddr()
			Expect(err).NotTo(HaveOccurred())
		}
		logName := name
		if attempt > 1 {
			logName = fmt.Sprintf("%s-%d", name, attempt)
		}
		p := e.Run(logName, bin, env, args(addrs[0], addrs[1], addrs[2])...)
		exited := false
		Eventually(func(g Gomega) {
			select {
			case <-p.Exited():
				exited = true
				return
			default:
			}
			for _, a := range addrs {
				c, err := net.DialTimeout("tcp", a, time.Second)
				g.Expect(err).NotTo(HaveOccurred(), "%s listening on %s", name, a)
				_ = c.Close()
			}
		}).WithTimeout(2 * time.Minute).Should(Succeed())
		if !exited {
			return
		}
		log, _ := os.ReadFile(p.Log)
		if attempt < listenAttempts && bytes.Contains(log, []byte("address already in use")) {
			GinkgoWriter.Printf("%s lost a picked port (%s): picking again\n", name, p.Log)
			continue
		}
		Fail(fmt.Sprintf("%s exited before it listened on %v; its log: %s", name, addrs, p.Log))
	}
}

// Run starts a process that lives until the suite (or the spec that started it) ends, logging
// to LogDir, as the cluster's admin unless env says otherwise.
func (e Env) Run(name, bin string, env []string, args ...string) *testutil.Process {
	p, err := testutil.StartProcess(name, filepath.Join(e.LogDir, "olmv1-test-"+name+".log"), bin,
		append([]string{"KUBECONFIG=" + e.Kubeconfig}, env...), args...)
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("started %s (pid %d), log %s\n", name, p.Pid(), p.Log)
	DeferCleanup(func() {
		p.Signal(os.Kill)
		<-p.Exited()
	})
	return p
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// servingCert writes a self-signed certificate for 127.0.0.1 (catalogd's HTTPS, webhook and
// metrics servers), and a folder holding it as the CA operator-controller trusts.
func (e Env) servingCert() (certFile, keyFile, caDir string) {
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
	dir := filepath.Join(e.Work, "pki")
	caDir = filepath.Join(dir, "ca")
	Expect(os.MkdirAll(caDir, 0o700)).To(Succeed())
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	Expect(os.WriteFile(certFile, certPEM, 0o600)).To(Succeed())
	Expect(os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(caDir, "ca.crt"), certPEM, 0o600)).To(Succeed())
	return certFile, keyFile, caDir
}

// GVK is the GroupVersionKind of an OLM v1 kind.
func GVK(kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "olm.operatorframework.io", Version: "v1", Kind: kind}
}

// Get reads an OLM v1 object (cluster-scoped) as unstructured.
func (e Env) Get(g Gomega, kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(GVK(kind))
	g.Expect(e.K8s.Get(ctx, client.ObjectKey{Name: name}, u)).To(Succeed())
	return u
}

// Conditions reads the conditions of an OLM v1 object.
func Conditions(u *unstructured.Unstructured) []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := make([]metav1.Condition, 0, len(raw))
	for _, r := range raw {
		m, _ := r.(map[string]any)
		c := metav1.Condition{}
		c.Type, _ = m["type"].(string)
		s, _ := m["status"].(string)
		c.Status = metav1.ConditionStatus(s)
		c.Reason, _ = m["reason"].(string)
		c.Message, _ = m["message"].(string)
		out = append(out, c)
	}
	return out
}

// Condition is the condition of that type of an OLM v1 object, or nil.
func Condition(u *unstructured.Unstructured, t string) *metav1.Condition {
	return meta.FindStatusCondition(Conditions(u), t)
}

// InstalledVersion is the bundle version the ClusterExtension has installed.
func (e Env) InstalledVersion() string {
	v, _, _ := unstructured.NestedString(e.Get(Default, "ClusterExtension", Extension).Object, "status", "install", "bundle", "version")
	return v
}

// ExpectInstalled waits until the ClusterExtension has installed that version.
func (e Env) ExpectInstalled(version string) {
	Eventually(func(g Gomega) {
		ext := e.Get(g, "ClusterExtension", Extension)
		installed := Condition(ext, "Installed")
		g.Expect(installed).NotTo(BeNil(), "%v", Conditions(ext))
		g.Expect(installed.Status).To(Equal(metav1.ConditionTrue), "%v", Conditions(ext))
		v, _, _ := unstructured.NestedString(ext.Object, "status", "install", "bundle", "version")
		g.Expect(v).To(Equal(version), "%v", Conditions(ext))
	}).Should(Succeed())
}

// PatchExtension merge-patches the ClusterExtension.
func (e Env) PatchExtension(patch string) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(GVK("ClusterExtension"))
	u.SetName(Extension)
	Expect(e.K8s.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// ApplyFile creates every object of a YAML file (after mutate, if given), leaving objects that
// exist as they are.
func (e Env) ApplyFile(path string, mutate func(*unstructured.Unstructured)) {
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	e.applyObjects(data, mutate)
}

// ApplyYAML creates the objects of a YAML document, leaving objects that exist as they are.
func (e Env) ApplyYAML(doc string) { e.applyObjects([]byte(doc), nil) }

func (e Env) applyObjects(data []byte, mutate func(*unstructured.Unstructured)) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return
		} else {
			Expect(err).NotTo(HaveOccurred())
		}
		if len(u.Object) == 0 {
			continue
		}
		if mutate != nil {
			mutate(u)
		}
		Eventually(func() error {
			err := e.K8s.Create(ctx, u.DeepCopy())
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		}).Should(Succeed(), "creating %s %s", u.GetKind(), u.GetName())
	}
}
