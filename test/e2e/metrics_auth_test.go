package e2e

import (
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/example/myapp-operator/internal/testutil"
)

// The manager serves its metrics over HTTPS and lets through only a client that the API
// server authenticates (TokenReview) and authorizes for GET /metrics (SubjectAccessReview).
// This story asks the real API server of the local cluster both questions, with tokens of
// real service accounts minted by the TokenRequest API, and runs the manager as a service
// account holding only config/rbac's metrics-auth-role, so that the role is proven enough.
var _ = Describe("The metrics endpoint", Ordered, Serial, func() {
	It("refuses unauthenticated and unauthorized scrapes and serves an authorized one", func() {
		ns := newNamespace()
		By("running the manager as a service account with config/rbac's metrics-auth-role and nothing else")
		managerKubeconfig := kubeconfigAs(ns, "manager", "metrics_auth_role.yaml")
		metricsURL := startSecureMetricsOperator("metrics-auth", managerKubeconfig)

		By("creating config/rbac's metrics-reader ClusterRole, bound to one service account only")
		bindClusterRole(ns, "scraper", "metrics_reader_role.yaml")
		Expect(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stranger"}})).To(Succeed())
		scraper, stranger := serviceAccountToken(ns, "scraper"), serviceAccountToken(ns, "stranger")

		By("refusing a scrape without a token: 401")
		Eventually(scrape).WithArguments(metricsURL, "").Should(HaveField("Code", http.StatusUnauthorized))
		By("refusing a token the API server does not recognise: 401")
		Expect(scrape(metricsURL, "not-a-token")).To(HaveField("Code", http.StatusUnauthorized))
		By("refusing an authenticated service account without the metrics-reader role: 403")
		Expect(scrape(metricsURL, stranger)).To(HaveField("Code", http.StatusForbidden))
		By("serving the bound service account the manager's metrics: 200")
		Eventually(scrape).WithArguments(metricsURL, scraper).Should(And(
			HaveField("Code", http.StatusOK),
			HaveField("Body", ContainSubstring("controller_runtime_")),
		))
		By("still refusing the others afterwards")
		Expect(scrape(metricsURL, stranger)).To(HaveField("Code", http.StatusForbidden))
		Expect(scrape(metricsURL, "")).To(HaveField("Code", http.StatusUnauthorized))
	})
})

// startSecureMetricsOperator runs the manager with its metrics on HTTPS with authentication and
// authorization (its defaults, as config/default deploys it) on a free loopback port, against
// the given kubeconfig, and returns the metrics URL. It stops when the spec ends.
func startSecureMetricsOperator(name, kubeconfig string) string {
	addr, err := testutil.FreeLoopbackAddr()
	Expect(err).NotTo(HaveOccurred())
	startManagerWith(name, kubeconfig, "--metrics-bind-address="+addr)
	return "https://" + addr + "/metrics"
}

// bindClusterRole creates a service account and a copy of a config/rbac ClusterRole (named
// after the namespace, so that stories do not share it) bound to it, removed when the spec ends.
func bindClusterRole(ns, account, roleFile string) {
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: account}}))).To(Succeed())
	role := &rbacv1.ClusterRole{}
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", roleFile))
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.UnmarshalStrict(b, role)).To(Succeed())
	role.ObjectMeta = metav1.ObjectMeta{Name: ns + "-" + role.Name}
	Expect(k8s.Create(ctx, role)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(ctx, role) })
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name + "-" + account},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: account}},
	}
	Expect(k8s.Create(ctx, binding)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(ctx, binding) })
}

// kubeconfigAs writes a kubeconfig that acts as a service account (impersonated by the
// cluster's admin) which holds only the given config/rbac ClusterRole.
func kubeconfigAs(ns, account, roleFile string) string {
	bindClusterRole(ns, account, roleFile)
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = serviceaccount.MakeUsername(ns, account)
		auth.ImpersonateGroups = serviceaccount.MakeGroupNames(ns)
	}
	path := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(clientcmd.WriteToFile(*cfg, path)).To(Succeed())
	return path
}

// startManager runs the manager with leader election, no probes and the given flags, logging
// to the cluster's logs folder. It stops when the spec ends.
func startManager(name string, args ...string) *operator {
	return startManagerWith(name, kubeconfig, args...)
}

// startManagerWith is startManager against the given kubeconfig.
func startManagerWith(name, kubeconfig string, args ...string) *operator {
	p, err := testutil.StartProcess(name, filepath.Join(logDir, "e2e-"+name+".log"), managerBin,
		[]string{"KUBECONFIG=" + kubeconfig},
		append(append([]string{"--leader-elect", "--leader-election-namespace=default", "--health-probe-bind-address=0"},
			shortLeaseFlags...), args...)...)
	Expect(err).NotTo(HaveOccurred())
	o := &operator{Process: p}
	DeferCleanup(func() { o.stop(syscall.SIGTERM) })
	GinkgoWriter.Printf("started operator %s (pid %d), log %s\n", name, p.Pid(), p.Log)
	return o
}

// serviceAccountToken mints a short-lived token for a service account with the TokenRequest
// API, as the kubelet does for a pod.
func serviceAccountToken(ns, name string) string {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr[int64](600)}}
	Expect(k8s.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
	Expect(tr.Status.Token).NotTo(BeEmpty())
	return tr.Status.Token
}

// scrapeResult is what a scrape of the metrics endpoint got back.
type scrapeResult struct {
	Code int
	Body string
}

// scrape GETs the metrics URL, with the token as a bearer token when it is not empty. The
// manager's certificate is self-signed (no --metrics-cert-path), so it is not verified: this
// story is about who may read, not about the certificate.
func scrape(url, token string) (scrapeResult, error) {
	c := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // self-signed, see above
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return scrapeResult{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return scrapeResult{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return scrapeResult{Code: resp.StatusCode, Body: string(b)}, err
}
