// Package realnode runs the operator the way users do, on a real node of the local cluster
// (make test-realnode starts one: kubelet, containerd, CNI, kube-proxy): the manager image,
// built without Docker and pulled from the cluster's registry, deployed with kustomize's
// config/default into a namespace that enforces the restricted Pod Security level, reconciling
// a MyApp whose pods really run the test app (test/app), answer HTTP and roll to a new image.
package realnode

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
	"github.com/example/myapp-operator/test/traffic"
)

var (
	kubeconfig, kustomizeBin string
	// managerImage is the manager's image in the cluster's registry; appImage is the test
	// app's repository there, with one tag per version (appVersions).
	managerImage, appImage string
	k8s                    client.Client
	ctx                    = context.Background()
)

// appVersions are the tags of the test app that make test-realnode pushes; each answers with
// its own version.
var appVersions = []string{"v1", "v2"}

func TestRealNode(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Real node suite")
}

var _ = BeforeSuite(func() {
	kubeconfig, kustomizeBin = os.Getenv("E2E_KUBECONFIG"), os.Getenv("E2E_KUSTOMIZE")
	managerImage, appImage = os.Getenv("E2E_MANAGER_IMAGE"), os.Getenv("E2E_APP_IMAGE")
	if kubeconfig == "" || kustomizeBin == "" || managerImage == "" || appImage == "" {
		Skip("E2E_KUBECONFIG, E2E_KUSTOMIZE, E2E_MANAGER_IMAGE and E2E_APP_IMAGE are not set: run `make test-realnode`")
	}
	SetDefaultEventuallyTimeout(2 * time.Minute)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	var err error
	k8s, err = testutil.NewClient(kubeconfig, examplev1.AddToScheme, operatorsv1alpha1.AddToScheme, gatewayv1.Install)
	Expect(err).NotTo(HaveOccurred())
})

// httpClient gives up quickly, so that a poll does not hang on an address that drops packets,
// and opens a new connection for every request, as independent clients do: a kept-alive
// connection opened before kube-proxy wrote a Service's rules stays, by its conntrack entry,
// on whatever answered the cluster IP then (on some networks the host's gateway), and a
// poll would never see the Service.
var httpClient = &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// httpGet returns the body of a 200 answer from url.
func httpGet(url string) (string, error) { return httpGetHost(url, "") }

// httpGetHost is httpGet with host as the Host header; empty, the URL's host is sent.
func httpGetHost(url, host string) (string, error) { return httpGetWith(httpClient, url, host) }

// httpGetWith is httpGetHost through the client given.
func httpGetWith(c *http.Client, url, host string) (string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	req.Host = host
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return string(body), nil
}

// serviceURL is the address of the MyApp's Service: its cluster IP and the app's port.
func serviceURL(ns, name string) string {
	svc := &corev1.Service{}
	Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, svc)).To(Succeed())
	return fmt.Sprintf("http://%s:%d/", svc.Spec.ClusterIP, appPort)
}

// perSecond is the rate of the stories' request streams.
const perSecond = 20

// expectNoRequestLost reports a stream started at since, at perSecond, and fails the story if
// it ended early, measured less than half of what it should have sent, or lost a request.
func expectNoRequestLost(title string, report traffic.Report, since time.Time) {
	GinkgoHelper()
	AddReportEntry(title, report.String())
	Expect(report.Truncated).To(BeFalse(), "the stream ended before the story: %s", report)
	Expect(report.Sent).To(BeNumerically(">=", int(time.Since(since).Seconds())*perSecond/2), "the stream measured too little: %s", report)
	Expect(report.Failed).To(BeZero(), "%s", report)
}
