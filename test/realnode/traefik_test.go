package realnode

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/myapp-operator/test/traffic"
)

// Traefik (hack/tools/traefik), built from source and pushed to the cluster's registry as
// E2E_TRAEFIK_IMAGE, is the cluster's edge in these stories: a pod on the real node whose
// Ingress provider serves the default IngressClass, and, once the Gateway API's CRDs are
// installed, whose Gateway provider programs the Gateway traefik/web and reports on the routes
// attached to it. Requests reach it through its Service, as a load balancer's would.
const (
	traefikNamespace = "traefik"
	// gatewayName is the Gateway MyApps attach to; its one listener, named like it, is
	// Traefik's entry point of the same port (Traefik matches listeners to entry points by
	// port).
	gatewayName    = "web"
	traefikWebPort = 8000
	// traefikSecurePort is Traefik's HTTPS entry point: TLS on for every router on it, as a
	// platform's edge serves the certificates of the Ingresses' TLS entries (Traefik serves an
	// Ingress's certificate only on an entry point or router with TLS on).
	traefikSecurePort = 8443
)

// traefikManifests are Traefik's namespace, RBAC, default IngressClass, Deployment and
// Service. With gatewayAPI, Traefik also runs its Gateway API provider, which needs the Gateway
// API's CRDs to be served.
func traefikManifests(gatewayAPI bool) string {
	image := os.Getenv("E2E_TRAEFIK_IMAGE")
	Expect(image).NotTo(BeEmpty(), "E2E_TRAEFIK_IMAGE is not set: run make test-realnode")
	args := []string{
		fmt.Sprintf("--entryPoints.web.address=:%d", traefikWebPort),
		fmt.Sprintf("--entryPoints.websecure.address=:%d", traefikSecurePort), "--entryPoints.websecure.http.tls=true",
		"--entryPoints.traefik.address=:8080", "--ping=true",
		"--global.checkNewVersion=false", "--global.sendAnonymousUsage=false",
		"--providers.kubernetesingress=true",
		// An access log of the 5xx answers only: what an edge story prints when a request
		// failed (router, service, backend address and the backend's own status).
		"--accesslog=true", "--accesslog.format=json", "--accesslog.filters.statuscodes=500-599",
		// Per-service request metrics on the traefik entry point's /metrics, which the canary
		// stories' Prometheus scrapes through the Service's metrics port.
		"--metrics.prometheus=true", "--metrics.prometheus.entryPoint=traefik",
		"--metrics.prometheus.addServicesLabels=true",
	}
	if gatewayAPI {
		args = append(args, "--providers.kubernetesgateway=true")
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s
  labels:
    pod-security.kubernetes.io/enforce: restricted
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: traefik
  namespace: %[1]s
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: realnode-traefik
rules:
- apiGroups: [""]
  resources: [namespaces, nodes, services, secrets, configmaps]
  verbs: [get, list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list, watch]
- apiGroups: [networking.k8s.io]
  resources: [ingresses, ingressclasses]
  verbs: [get, list, watch]
- apiGroups: [networking.k8s.io]
  resources: [ingresses/status]
  verbs: [update]
- apiGroups: [gateway.networking.k8s.io]
  resources: [gatewayclasses, gateways, httproutes, grpcroutes, referencegrants, backendtlspolicies]
  verbs: [get, list, watch]
- apiGroups: [gateway.networking.k8s.io]
  resources: [gatewayclasses/status, gateways/status, httproutes/status, grpcroutes/status, backendtlspolicies/status]
  verbs: [update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: realnode-traefik
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: realnode-traefik
subjects:
- kind: ServiceAccount
  name: traefik
  namespace: %[1]s
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: traefik
  annotations:
    ingressclass.kubernetes.io/is-default-class: "true"
spec:
  controller: traefik.io/ingress-controller
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: traefik
  namespace: %[1]s
spec:
  replicas: 1
  selector:
    matchLabels: {app: traefik}
  template:
    metadata:
      labels: {app: traefik}
    spec:
      serviceAccountName: traefik
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: traefik
        image: %[2]s
        args: [%[3]s]
        ports:
        - {name: web, containerPort: %[4]d}
        - {name: websecure, containerPort: %[5]d}
        - {name: ping, containerPort: 8080}
        readinessProbe:
          httpGet: {path: /ping, port: ping}
          periodSeconds: 2
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL]}
---
apiVersion: v1
kind: Service
metadata:
  name: traefik
  namespace: %[1]s
spec:
  selector: {app: traefik}
  ports:
  - {name: web, port: %[4]d, targetPort: web}
  - {name: websecure, port: %[5]d, targetPort: websecure}
  - {name: metrics, port: 8080, targetPort: ping}
`, traefikNamespace, image, `"`+strings.Join(args, `", "`)+`"`, traefikWebPort, traefikSecurePort)
}

// deployTraefik applies Traefik's manifests and waits until its one pod is the current
// template's and ready.
func deployTraefik(gatewayAPI bool) {
	kubectl([]byte(traefikManifests(gatewayAPI)), "apply", "--server-side", "--force-conflicts", "-f", "-")
	kubectl(nil, "-n", traefikNamespace, "rollout", "status", "deployment/traefik", "--timeout=2m")
	Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(traefikNamespace))).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1), "the pod of Traefik's previous template is still there")
	}).Should(Succeed())
}

// traefikMetricsAddress is where Traefik serves its metrics (its traefik entry point, port
// 8080), through its Service: host:port.
func traefikMetricsAddress() string { return fmt.Sprintf("%s:8080", traefikClusterIP()) }

// traefikURL is the address of Traefik's web entry point, through its Service.
func traefikURL() string { return fmt.Sprintf("http://%s:%d/", traefikClusterIP(), traefikWebPort) }

// traefikClusterIP is the cluster IP of Traefik's Service.
func traefikClusterIP() string {
	svc := &corev1.Service{}
	Expect(k8s.Get(ctx, types.NamespacedName{Namespace: traefikNamespace, Name: "traefik"}, svc)).To(Succeed())
	return svc.Spec.ClusterIP
}

// gatewayAPICRDs is the folder of the Gateway API's CRDs (standard channel) of the version
// go.mod requires, E2E_GATEWAY_API_CRDS.
func gatewayAPICRDs() string {
	crds := os.Getenv("E2E_GATEWAY_API_CRDS")
	Expect(crds).NotTo(BeEmpty(), "E2E_GATEWAY_API_CRDS is not set: run make test-realnode")
	return crds
}

// withoutGatewayAPI brings the cluster to where the edge stories start: the Gateway API's CRDs
// not installed (removing them removes every Gateway and route with them) and Traefik running
// its Ingress provider only. On a new cluster it changes nothing.
func withoutGatewayAPI() {
	kubectl(nil, "delete", "--ignore-not-found", "--wait", "--timeout=2m", "-f", gatewayAPICRDs())
	Eventually(func() error {
		crd := &metav1.PartialObjectMetadata{}
		crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
		return k8s.Get(ctx, types.NamespacedName{Name: "httproutes.gateway.networking.k8s.io"}, crd)
	}).Should(Satisfy(apierrors.IsNotFound))
	deployTraefik(false)
}

// withGatewayAPI installs the Gateway API's CRDs and runs Traefik with its Gateway provider
// too. Running it again changes nothing.
func withGatewayAPI() {
	crds := gatewayAPICRDs()
	kubectl(nil, "apply", "--server-side", "-f", crds)
	kubectl(nil, "wait", "--for=condition=Established", "--timeout=1m", "-f", crds)
	deployTraefik(true)
}

// ensureGateway runs withGatewayAPI and makes the Gateway traefik/web, waiting until Traefik
// programmed it. Running it again changes nothing.
func ensureGateway() {
	withGatewayAPI()
	kubectl([]byte(fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: traefik
spec:
  controllerName: traefik.io/gateway-controller
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  gatewayClassName: traefik
  listeners:
  - name: %[1]s
    protocol: HTTP
    port: %[3]d
    allowedRoutes:
      namespaces: {from: All}
`, gatewayName, traefikNamespace, traefikWebPort)), "apply", "--server-side", "-f", "-")
	kubectl(nil, "-n", traefikNamespace, "wait", "--for=condition=Programmed", "--timeout=2m", "gateway/"+gatewayName)
}

// expectNoRequestLostAtEdge is expectNoRequestLost for a stream through Traefik: when a request
// failed, the story's report also holds Traefik's access log of its 5xx answers.
func expectNoRequestLostAtEdge(title string, report traffic.Report, since time.Time) {
	GinkgoHelper()
	if report.Failed > 0 {
		reportEdgeLog(title, since)
	}
	expectNoRequestLost(title, report, since)
}

// reportEdgeLog adds to the story's report Traefik's access log of its 5xx answers and its own
// log since then: what a story whose requests failed through the edge prints.
func reportEdgeLog(title string, since time.Time) {
	out, err := exec.Command(kubectlPath(), "--kubeconfig", kubeconfig, "-n", traefikNamespace,
		"logs", "deployment/traefik", "--since-time="+since.UTC().Format(time.RFC3339)).CombinedOutput()
	AddReportEntry(title+": Traefik's access log of 5xx answers and its own log", fmt.Sprintf("%s (kubectl: %v)", out, err))
}
