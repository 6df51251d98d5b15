package realnode

import (
	"fmt"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
	"github.com/example/myapp-operator/test/promserver"
)

// scrapesAppMetrics is the real-node story of spec.metrics, in the container of the operator
// deployed with kustomize: once the Prometheus Operator's CRDs are installed the operator makes
// a PodMonitor, and a Prometheus scraping the port and path it names reads the app's own
// metrics.
func scrapesAppMetrics() {
	crd, err := testutil.PodMonitorCRD()
	Expect(err).NotTo(HaveOccurred())
	kubectl(nil, "apply", "--server-side", "-f", crd)
	DeferCleanup(func() { kubectl(nil, "delete", "--ignore-not-found", "--wait", "--timeout=1m", "-f", crd) })
	kubectl(nil, "wait", "--for=condition=Established", "--timeout=1m", "-f", crd)

	ns := newNamespace()
	Expect(k8s.Create(ctx, &examplev1.MyApp{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: examplev1.MyAppSpec{Image: appImage + ":" + appVersions[0], Replicas: ptr.To[int32](1), Port: ptr.To[int32](appPort),
			Metrics: &examplev1.AppMetrics{}},
	})).To(Succeed())
	pods := expectReadyAndAnswering(ns, "web", appVersions[0], 1)

	By("the PodMonitor the operator made: the port and path to scrape")
	pm := &unstructured.Unstructured{}
	pm.SetGroupVersionKind(schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PodMonitor"})
	Eventually(func() error { return k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, pm) }).Should(Succeed())
	endpoints, _, err := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	Expect(err).NotTo(HaveOccurred())
	Expect(endpoints).To(HaveLen(1))
	endpoint := endpoints[0].(map[string]any)
	portName, path := endpoint["port"].(string), endpoint["path"].(string)

	// The Prometheus Operator keeps the pods' targets whose container port has that name;
	// this Prometheus is given the same target.
	var target string
	for _, p := range pods {
		Expect(p.Spec.Containers).NotTo(BeEmpty())
		for _, cp := range p.Spec.Containers[0].Ports {
			if cp.Name == portName && cp.Protocol == corev1.ProtocolTCP {
				target = fmt.Sprintf("%s:%d", p.Status.PodIP, cp.ContainerPort)
			}
		}
	}
	Expect(target).NotTo(BeEmpty(), "no container port of the app's pod is named %q", portName)
	for range 3 {
		Expect(httpGet("http://" + target + "/")).To(ContainSubstring("myapp test app"))
	}

	bin := os.Getenv("E2E_PROMETHEUS")
	Expect(bin).NotTo(BeEmpty(), "E2E_PROMETHEUS is not set: run make test-realnode, which builds Prometheus")
	listen, err := testutil.FreeAddr(nodeAddress())
	Expect(err).NotTo(HaveOccurred())
	prom := promserver.Start(bin, filepath.Join(filepath.Dir(kubeconfig), "logs", "realnode-metrics-prometheus.log"), listen,
		fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
- job_name: app
  metrics_path: %q
  static_configs: [{targets: [%q]}]
`, path, target), nil)
	Eventually(func(g Gomega) float64 {
		return prom.Value(g, `myapp_test_app_requests_total{job="app",version="`+appVersions[0]+`"}`)
	}).Should(BeNumerically(">=", 3), "Prometheus reads the app's own count of the requests it answered")
}
