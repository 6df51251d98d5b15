package realnode

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

// servesIssuedCertificate is the real-node story of spec.expose.tls.issuerRef, in the
// container of the real edge: cert-manager's own controllers (hack/tools/certmanager) issue
// the Certificate the operator makes from a self-signed ClusterIssuer, the MyApp is Ready once
// they did, and Traefik serves HTTPS with the issued Secret to a client that verifies it
// against the issuer's CA and the host.
func servesIssuedCertificate() {
	withGatewayAPI() // Traefik serves Ingresses with either provider set
	crds, err := testutil.CertManagerCRDs()
	Expect(err).NotTo(HaveOccurred())
	kubectl(nil, "apply", "--server-side", "-f", crds)
	DeferCleanup(func() { kubectl(nil, "delete", "--ignore-not-found", "--wait", "--timeout=1m", "-f", crds) })
	kubectl(nil, "wait", "--for=condition=Established", "--timeout=1m", "-f", crds)

	bin := os.Getenv("E2E_CERT_MANAGER")
	Expect(bin).NotTo(BeEmpty(), "E2E_CERT_MANAGER is not set: run make test-realnode, which builds cert-manager's controllers")
	p, err := testutil.StartProcess("certmanager", filepath.Join(filepath.Dir(kubeconfig), "logs", "realnode-cert-manager.log"), bin, nil,
		"--kubeconfig", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		p.Signal(syscall.SIGTERM)
		Eventually(p.Exited()).WithTimeout(30 * time.Second).Should(BeClosed())
	})
	GinkgoWriter.Printf("started cert-manager's controllers (pid %d), log %s\n", p.Pid(), p.Log)

	ns := newNamespace()
	issuer := "selfsigned-" + ns
	kubectl([]byte(fmt.Sprintf(`apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: %s}
spec: {selfSigned: {}}
`, issuer)), "apply", "--server-side", "-f", "-")
	DeferCleanup(func() { kubectl(nil, "delete", "--ignore-not-found", "clusterissuer", issuer) })

	const host = "secure.example.com"
	Expect(k8s.Create(ctx, &examplev1.MyApp{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: examplev1.MyAppSpec{Image: appImage + ":" + appVersions[0], Replicas: ptr.To[int32](1), Port: ptr.To[int32](appPort),
			Expose: &examplev1.Expose{Hosts: []examplev1.Hostname{host}, TLS: &examplev1.ExposeTLS{SecretName: "web-tls",
				IssuerRef: &examplev1.IssuerReference{Name: issuer, Kind: "ClusterIssuer"}}}},
	})).To(Succeed())
	By("Ready once cert-manager issued the certificate")
	expectReadyAndAnswering(ns, "web", appVersions[0], 1)
	Eventually(func(g Gomega) string { return myApp(g, ns).Status.URL }).Should(Equal("https://" + host + "/"))

	secret := &corev1.Secret{}
	Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web-tls"}, secret)).To(Succeed())
	Expect(secret.Type).To(Equal(corev1.SecretTypeTLS))
	roots := x509.NewCertPool()
	Expect(roots.AppendCertsFromPEM(secret.Data["ca.crt"])).To(BeTrue(), "the issuer's CA in the Secret cert-manager wrote")

	By("Traefik serves the issued certificate for the host, and a client that trusts the issuer's CA verifies it")
	edge := fmt.Sprintf("https://%s:%d/", traefikClusterIP(), traefikSecurePort)
	verifying := httpsClient(&tls.Config{RootCAs: roots, ServerName: host, MinVersion: tls.VersionTLS12})
	Eventually(func() (string, error) { return httpGetWith(verifying, edge, host) }).
		Should(HavePrefix("myapp test app " + appVersions[0]))
	By("a client that does not trust the issuer refuses it: the answer above was verified")
	_, err = httpGetWith(httpsClient(&tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}), edge, host)
	Expect(err).To(MatchError(ContainSubstring("certificate signed by unknown authority")))
}

// httpsClient is httpClient over TLS with config.
func httpsClient(config *tls.Config) *http.Client {
	return &http.Client{Timeout: httpClient.Timeout, Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: config}}
}
