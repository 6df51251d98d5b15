package v1_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

// The API server, not the operator, enforces the MyApp schema: these tests install the
// generated CRD into a real kube-apiserver and send it MyApps as a user's kubectl would.

var k8s client.Client

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		println("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
		os.Exit(1)
	}
	// The API server's warnings (a pod's, say) go to the test's output.
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	// The Gateway API's HTTPRoute too: a MyApp's route must be one the API server accepts.
	routes, err := testutil.HTTPRouteCRD()
	if err != nil {
		println(err.Error())
		os.Exit(1)
	}
	// And the Prometheus Operator's PodMonitor, for spec.metrics.
	podMonitors, err := testutil.PodMonitorCRD()
	if err != nil {
		println(err.Error())
		os.Exit(1)
	}
	// And cert-manager's Certificate, for spec.expose.tls.issuerRef.
	certificates, err := testutil.CertificateCRD()
	if err != nil {
		println(err.Error())
		os.Exit(1)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases"), routes, podMonitors, certificates},
		ErrorIfCRDPathMissing: true,
	}
	// A worker of `go test -fuzz` uses the API server of the process that started it
	// (apiserver_share_test.go): it is stopped without running what follows m.Run.
	cfg, err := sharedAPIServer()
	started := cfg == nil && err == nil
	if started {
		// envtest's kube-apiserver and etcd get no parent-death signal: `localcluster sweep` stops them by MYAPP_OPERATOR_RUN.
		if cfg, err = env.Start(); err == nil {
			err = shareAPIServer(cfg)
		}
	}
	code := 1
	if err == nil {
		scheme := runtime.NewScheme()
		_ = examplev1.AddToScheme(scheme)
		_ = clientgoscheme.AddToScheme(scheme)
		_ = gatewayv1.Install(scheme)
		_ = monitoringv1.AddToScheme(scheme)
		_ = cmv1.AddToScheme(scheme)
		if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err == nil && started {
			// Admission as a cluster has it once the operator ran: the CRD and the operator's
			// admission policy.
			err = testutil.InstallAdmissionPolicy(context.Background(), k8s)
		}
		if err == nil {
			code = m.Run()
		}
	}
	if err != nil {
		println("setting up the API server:", err.Error())
	}
	// Stop also cleans up after a Start that failed half-way.
	if started {
		unshareAPIServer()
		_ = env.Stop()
	}
	os.Exit(code)
}

// create sends a MyApp written as JSON, so that tests can send what Go types cannot hold.
func create(t *testing.T, name, spec string) error {
	t.Helper()
	obj := &unstructured.Unstructured{}
	doc := `{"apiVersion":"example.com/v1","kind":"MyApp","metadata":{"namespace":"default","name":"` + name + `"},"spec":` + spec + `}`
	if err := json.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatalf("bad test JSON %s: %v", doc, err)
	}
	// kubectl asks for strict field validation by default; so do we.
	return k8s.Create(context.Background(), obj, client.FieldValidation("Strict"))
}

func TestAdmissionRejects(t *testing.T) {
	cases := []struct {
		name, spec string
		field      string // must appear in the error
		message    string // and this too, when set
	}{
		{"no-image", `{}`, "spec.image", "Required"},
		{"empty-image", `{"image":""}`, "spec.image", ""},
		{"upper-case-image", `{"image":"NGINX:1.27"}`, "spec.image", "valid image reference"},
		{"image-with-space", `{"image":"nginx 1.27"}`, "spec.image", "valid image reference"},
		{"image-bad-tag", `{"image":"nginx:-1"}`, "spec.image", "valid image reference"},
		{"image-bad-digest", `{"image":"nginx@sha256:abc"}`, "spec.image", "valid image reference"},
		{"image-short-sha256", `{"image":"nginx@sha256:0123456789abcdef0123456789abcdef"}`, "spec.image", "64 lower-case hex"},
		{"image-upper-hex-digest", `{"image":"nginx@sha256:0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF"}`, "spec.image", "valid image reference"},
		{"image-long-sha256", `{"image":"nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0"}`, "spec.image", "valid image reference"},
		{"image-unknown-algorithm", `{"image":"nginx@md5:0123456789abcdef0123456789abcdef"}`, "spec.image", "valid image reference"},
		{"image-short-sha512", `{"image":"nginx@sha512:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}`, "spec.image", "valid image reference"},
		{"negative-replicas", `{"image":"nginx","replicas":-1}`, "spec.replicas", "greater than or equal to 0"},
		{"string-replicas", `{"image":"nginx","replicas":"3"}`, "spec.replicas", ""},
		{"zero-port", `{"image":"nginx","port":0}`, "spec.port", ""},
		{"port-too-high", `{"image":"nginx","port":65536}`, "spec.port", ""},
		{"bad-service-type", `{"image":"nginx","serviceType":"ExternalName"}`, "spec.serviceType", "Unsupported value"},
		{"bad-cpu", `{"image":"nginx","resources":{"limits":{"cpu":"lots"}}}`, "spec.resources.limits[cpu]", "quantity"},
		{"bad-memory", `{"image":"nginx","resources":{"requests":{"memory":"1 GB"}}}`, "spec.resources.requests[memory]", "quantity"},
		{"negative-cpu", `{"image":"nginx","resources":{"requests":{"cpu":"-1"}}}`, "spec.resources.requests[cpu]", "non-negative"},
		{"negative-int-memory", `{"image":"nginx","resources":{"limits":{"memory":-5}}}`, "spec.resources.limits[memory]", "non-negative"},
		{"fractional-exponent", `{"image":"nginx","resources":{"limits":{"cpu":"1e1.5"}}}`, "spec.resources.limits[cpu]", "quantity"},
		{"quantity-too-long", `{"image":"nginx","resources":{"limits":{"cpu":"` + strings.Repeat("1", 65) + `"}}}`, "spec.resources.limits.cpu", "64 bytes"},
		{"bad-resource-name", `{"image":"nginx","resources":{"limits":{"gpu":"1"}}}`, "spec.resources.limits", "resource names"},
		{"too-many-resources", `{"image":"nginx","resources":{"limits":{` + manyResources(17) + `}}}`, "spec.resources.limits", "16"},
		{"cpu-request-over-limit", `{"image":"nginx","resources":{"limits":{"cpu":"500m"},"requests":{"cpu":"1"}}}`, "spec.resources.requests", "cpu must not exceed limits.cpu"},
		{"int-cpu-request-over-limit", `{"image":"nginx","resources":{"limits":{"cpu":1},"requests":{"cpu":2}}}`, "spec.resources.requests", "cpu must not exceed limits.cpu"},
		{"memory-request-over-limit", `{"image":"nginx","resources":{"limits":{"memory":"1Gi"},"requests":{"memory":"2Gi"}}}`, "spec.resources.requests", "memory must not exceed limits.memory"},
		{"gpu-request-over-limit", `{"image":"nginx","resources":{"limits":{"nvidia.com/gpu":1},"requests":{"nvidia.com/gpu":2}}}`, "spec.resources.requests", "must not exceed the limit"},
		{"env-bad-name", `{"image":"nginx","env":[{"name":"ÄPFEL","value":"x"}]}`, "spec.env[0].name", "valid environment variable name"},
		{"env-name-with-equals", `{"image":"nginx","env":[{"name":"A=B"}]}`, "spec.env[0].name", "valid environment variable name"},
		{"env-name-with-tab", `{"image":"nginx","env":[{"name":"A\tB"}]}`, "spec.env[0].name", "valid environment variable name"},
		{"env-duplicate-name", `{"image":"nginx","env":[{"name":"A","value":"1"},{"name":"A","value":"2"}]}`, "spec.env[1]", "Duplicate value"},
		{"env-value-and-from", `{"image":"nginx","env":[{"name":"A","value":"1","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}}]}`, "spec.env[0]", "mutually exclusive"},
		{"env-from-both", `{"image":"nginx","env":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"s","key":"k"},"configMapKeyRef":{"name":"c","key":"k"}}}]}`, "spec.env[0].valueFrom", "exactly one"},
		{"env-from-neither", `{"image":"nginx","env":[{"name":"A","valueFrom":{}}]}`, "spec.env[0].valueFrom", "exactly one"},
		{"env-secret-bad-name", `{"image":"nginx","env":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"Bad_Name","key":"k"}}}]}`, "spec.env[0].valueFrom.secretKeyRef.name", ""},
		{"env-configmap-no-key", `{"image":"nginx","env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"c"}}}]}`, "spec.env[0].valueFrom.configMapKeyRef.key", "Required"},
		{"env-too-many", `{"image":"nginx","env":[` + testutil.ManyEnv(101) + `]}`, "spec.env", "must have at most 100 items"},
		{"autoscaling-without-max", `{"image":"nginx","autoScaling":{"enabled":true}}`, "spec.autoScaling.maxReplicas", "required when autoscaling is enabled"},
		{"autoscaling-min-over-max", `{"image":"nginx","autoScaling":{"enabled":true,"minReplicas":5,"maxReplicas":2}}`, "spec.autoScaling.minReplicas", "must not exceed maxReplicas"},
		{"autoscaling-zero-min", `{"image":"nginx","autoScaling":{"enabled":true,"minReplicas":0,"maxReplicas":2}}`, "spec.autoScaling.minReplicas", ""},
		{"autoscaling-zero-max", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":0}}`, "spec.autoScaling.maxReplicas", ""},
		{"autoscaling-target-zero", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"targetCPUUtilizationPercentage":0}}`, "spec.autoScaling.targetCPUUtilizationPercentage", "only when targetMemoryUtilizationPercentage is set"},
		{"autoscaling-target-negative", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"targetCPUUtilizationPercentage":-1,"targetMemoryUtilizationPercentage":50}}`, "spec.autoScaling.targetCPUUtilizationPercentage", "greater than or equal to 0"},
		{"autoscaling-memory-zero", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"targetMemoryUtilizationPercentage":0}}`, "spec.autoScaling.targetMemoryUtilizationPercentage", "greater than or equal to 1"},
		{"autoscaling-window-too-long", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"behavior":{"scaleDown":{"stabilizationWindowSeconds":3601}}}}`, "spec.autoScaling.behavior.scaleDown.stabilizationWindowSeconds", "less than or equal to 3600"},
		{"autoscaling-window-negative", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"behavior":{"scaleUp":{"stabilizationWindowSeconds":-1}}}}`, "spec.autoScaling.behavior.scaleUp.stabilizationWindowSeconds", "greater than or equal to 0"},
		{"autoscaling-select-unknown", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"behavior":{"scaleUp":{"selectPolicy":"Fastest"}}}}`, "spec.autoScaling.behavior.scaleUp.selectPolicy", "Unsupported value"},
		{"autoscaling-policies-empty", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"behavior":{"scaleDown":{"policies":[]}}}}`, "spec.autoScaling.behavior.scaleDown.policies", "at least 1 item"},
		{"autoscaling-policies-11", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"behavior":{"scaleDown":{"policies":[` + strings.TrimSuffix(strings.Repeat(`{"type":"Pods","value":1,"periodSeconds":60},`, 11), ",") + `]}}}}`, "spec.autoScaling.behavior.scaleDown.policies", "at most 10 items"},
		{"autoscaling-policy-no-type", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"behavior":{"scaleDown":{"policies":[{"value":1,"periodSeconds":60}]}}}}`, "spec.autoScaling.behavior.scaleDown.policies[0].type", "Required"},
		{"autoscaling-policy-bad-type", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"behavior":{"scaleDown":{"policies":[{"type":"Nodes","value":1,"periodSeconds":60}]}}}}`, "spec.autoScaling.behavior.scaleDown.policies[0].type", "Unsupported value"},
		{"autoscaling-policy-zero-value", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"behavior":{"scaleUp":{"policies":[{"type":"Pods","value":0,"periodSeconds":60}]}}}}`, "spec.autoScaling.behavior.scaleUp.policies[0].value", "greater than or equal to 1"},
		{"autoscaling-policy-zero-period", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"behavior":{"scaleUp":{"policies":[{"type":"Pods","value":1,"periodSeconds":0}]}}}}`, "spec.autoScaling.behavior.scaleUp.policies[0].periodSeconds", "greater than or equal to 1"},
		{"autoscaling-policy-long-period", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"behavior":{"scaleUp":{"policies":[{"type":"Percent","value":1,"periodSeconds":1801}]}}}}`, "spec.autoScaling.behavior.scaleUp.policies[0].periodSeconds", "less than or equal to 1800"},
		{"autoscaling-policy-no-period", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"behavior":{"scaleUp":{"policies":[{"type":"Percent","value":1}]}}}}`, "spec.autoScaling.behavior.scaleUp.policies[0].periodSeconds", "Required"},
		{"autoscaling-target-over-100", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":3,"targetCPUUtilizationPercentage":101}}`, "spec.autoScaling.targetCPUUtilizationPercentage", ""},
		{"probe-no-handler", `{"image":"nginx","readinessProbe":{"periodSeconds":5}}`, "spec.readinessProbe", "exactly one of httpGet, tcpSocket, grpc and exec"},
		{"probe-two-handlers", `{"image":"nginx","readinessProbe":{"tcpSocket":{},"exec":{"command":["true"]}}}`, "spec.readinessProbe", "exactly one"},
		{"probe-http-relative-path", `{"image":"nginx","readinessProbe":{"httpGet":{"path":"healthz"}}}`, "spec.readinessProbe.httpGet.path", "must start with '/'"},
		{"probe-http-port-zero", `{"image":"nginx","livenessProbe":{"httpGet":{"port":0}}}`, "spec.livenessProbe.httpGet.port", "port number from 1 to 65535"},
		{"probe-http-port-name-too-long", `{"image":"nginx","readinessProbe":{"httpGet":{"port":"a-very-long-port-name"}}}`, "spec.readinessProbe.httpGet.port", "or the name of a port of the container"},
		// The container has one port, named http: a probe of any other name never resolves.
		{"probe-http-other-port-name", `{"image":"nginx","readinessProbe":{"httpGet":{"port":"metrics"}}}`, "spec.readinessProbe.httpGet.port", "must name a TCP port of the container"},
		{"probe-tcp-other-port-name", `{"image":"nginx","livenessProbe":{"tcpSocket":{"port":"web"}}}`, "spec.livenessProbe.tcpSocket.port", "must name a TCP port of the container"},
		{"startup-probe-other-port-name", `{"image":"nginx","ports":[{"name":"admin","port":9000}],"startupProbe":{"tcpSocket":{"port":"metrics"}}}`, "spec.startupProbe.tcpSocket.port", "must name a TCP port of the container"},
		{"ports-name-http", `{"image":"nginx","ports":[{"name":"http","port":9000}]}`, "spec.ports[0].name", "must not be http"},
		{"ports-name-upper", `{"image":"nginx","ports":[{"name":"Admin","port":9000}]}`, "spec.ports[0].name", "must be a port name"},
		{"ports-name-digits", `{"image":"nginx","ports":[{"name":"9000","port":9000}]}`, "spec.ports[0].name", "at least one letter"},
		{"ports-name-double-dash", `{"image":"nginx","ports":[{"name":"a--b","port":9000}]}`, "spec.ports[0].name", "without '--'"},
		{"ports-name-16", `{"image":"nginx","ports":[{"name":"abcdefghijklmnop","port":9000}]}`, "spec.ports[0].name", "15"},
		{"ports-name-twice", `{"image":"nginx","ports":[{"name":"a","port":9000},{"name":"a","port":9001}]}`, "spec.ports[1]", "Duplicate value"},
		{"ports-number-twice", `{"image":"nginx","ports":[{"name":"a","port":9000},{"name":"b","port":9000,"protocol":"TCP"}]}`, "spec.ports", "once per protocol"},
		{"ports-http-number", `{"image":"nginx","port":9000,"ports":[{"name":"a","port":9000}]}`, "spec.ports", "must not be spec.port"},
		{"ports-default-http-number", `{"image":"nginx","ports":[{"name":"a","port":8080}]}`, "spec.ports", "must not be spec.port"},
		{"ports-zero", `{"image":"nginx","ports":[{"name":"a","port":0}]}`, "spec.ports[0].port", "greater than or equal to 1"},
		{"ports-too-high", `{"image":"nginx","ports":[{"name":"a","port":65536}]}`, "spec.ports[0].port", "less than or equal to 65535"},
		{"ports-bad-protocol", `{"image":"nginx","ports":[{"name":"a","port":9000,"protocol":"QUIC"}]}`, "spec.ports[0].protocol", "Unsupported value"},
		{"ports-bad-app-protocol", `{"image":"nginx","ports":[{"name":"a","port":9000,"appProtocol":"h2c/"}]}`, "spec.ports[0].appProtocol", "must be a name such as http"},
		{"probe-udp-port-name", `{"image":"nginx","ports":[{"name":"dns","port":53,"protocol":"UDP"}],"readinessProbe":{"tcpSocket":{"port":"dns"}}}`, "spec.readinessProbe.tcpSocket.port", "must name a TCP port of the container"},
		{"pre-stop-sctp-port-name", `{"image":"nginx","ports":[{"name":"assoc","port":9000,"protocol":"SCTP"}],"lifecycle":{"preStop":{"httpGet":{"port":"assoc"}}}}`, "spec.lifecycle.preStop.httpGet.port", "must name a TCP port of the container"},
		{"ports-app-protocol-long-name", `{"image":"nginx","ports":[{"name":"a","port":9000,"appProtocol":"example.com/` + strings.Repeat("a", 64) + `"}]}`, "spec.ports[0].appProtocol", "at most 63"},
		{"ports-app-protocol-long-prefix", `{"image":"nginx","ports":[{"name":"a","port":9000,"appProtocol":"` + strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 63) + `/h2c"}]}`, "spec.ports[0].appProtocol", "at most 253"},
		{"access-namespace-upper", `{"image":"nginx","accessPolicy":{"inbound":{"namespaces":["Shop"]}}}`, "spec.accessPolicy.inbound.namespaces[0]", "should match"},
		{"access-namespace-twice", `{"image":"nginx","accessPolicy":{"outbound":{"namespaces":["a","a"]}}}`, "spec.accessPolicy.outbound.namespaces[1]", "Duplicate value"},
		{"access-namespace-17", `{"image":"nginx","accessPolicy":{"inbound":{"namespaces":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]}}}`, "spec.accessPolicy.inbound.namespaces", "must have at most 16 items"},
		{"access-app-no-name", `{"image":"nginx","accessPolicy":{"inbound":{"apps":[{"namespace":"shop"}]}}}`, "spec.accessPolicy.inbound.apps[0].name", "Required"},
		{"access-app-dotted-name", `{"image":"nginx","accessPolicy":{"inbound":{"apps":[{"name":"a.b"}]}}}`, "spec.accessPolicy.inbound.apps[0].name", "should match"},
		{"access-app-bad-namespace", `{"image":"nginx","accessPolicy":{"outbound":{"apps":[{"namespace":"-x","name":"db"}]}}}`, "spec.accessPolicy.outbound.apps[0].namespace", "should match"},
		{"canary-no-steps", `{"image":"nginx","canary":{"steps":[]}}`, "spec.canary.steps", "at least 1 items"},
		{"canary-step-both", `{"image":"nginx","canary":{"steps":[{"setWeight":5,"pause":{}}]}}`, "spec.canary.steps[0]", "exactly one of setWeight and pause"},
		{"canary-step-neither", `{"image":"nginx","canary":{"steps":[{}]}}`, "spec.canary.steps[0]", "exactly one of setWeight and pause"},
		{"canary-weight-zero", `{"image":"nginx","canary":{"steps":[{"setWeight":0}]}}`, "spec.canary.steps[0].setWeight", "greater than or equal to 1"},
		{"canary-weight-101", `{"image":"nginx","canary":{"steps":[{"setWeight":101}]}}`, "spec.canary.steps[0].setWeight", "less than or equal to 100"},
		{"canary-weights-decrease", `{"image":"nginx","canary":{"steps":[{"setWeight":50},{"pause":{}},{"setWeight":25}]}}`, "spec.canary.steps", "must not decrease"},
		{"canary-21-steps", `{"image":"nginx","canary":{"steps":[` + strings.TrimSuffix(strings.Repeat(`{"setWeight":5},`, 21), ",") + `]}}`, "spec.canary.steps", "at most 20 items"},
		{"canary-pause-words", `{"image":"nginx","canary":{"steps":[{"pause":{"duration":"2 minutes"}}]}}`, "spec.canary.steps[0].pause.duration", "should match"},
		{"canary-pause-fraction", `{"image":"nginx","canary":{"steps":[{"pause":{"duration":"1.5h"}}]}}`, "spec.canary.steps[0].pause.duration", "should match"},
		{"canary-pause-25h", `{"image":"nginx","canary":{"steps":[{"pause":{"duration":"25h"}}]}}`, "spec.canary.steps[0].pause.duration", "at most 24h"},
		{"canary-available-within-min-ready", `{"image":"nginx","minReadySeconds":60,"canary":{"steps":[{"setWeight":5}],"analysis":{"availableWithin":"60s"}}}`,
			"spec.canary.analysis.availableWithin", "must exceed minReadySeconds"},
		{"canary-available-within-2h", `{"image":"nginx","canary":{"steps":[{"setWeight":5}],"analysis":{"availableWithin":"2h"}}}`, "spec.canary.analysis.availableWithin", "between 1s and 1h"},
		{"canary-metric-twice", `{"image":"nginx","canary":{"steps":[{"setWeight":5}],"analysis":{"metrics":[` +
			`{"name":"a","query":"up","condition":{"operator":">","value":"0"}},{"name":"a","query":"up","condition":{"operator":">","value":"1"}}]}}}`,
			"spec.canary.analysis.metrics[1]", "Duplicate value"},
		{"canary-metric-no-query", `{"image":"nginx","canary":{"steps":[{"setWeight":5}],"analysis":{"metrics":[{"name":"a","condition":{"operator":">","value":"0"}}]}}}`,
			"spec.canary.analysis.metrics[0].query", "Required"},
		{"canary-metric-equals", `{"image":"nginx","canary":{"steps":[{"setWeight":5}],"analysis":{"metrics":[{"name":"a","query":"up","condition":{"operator":"==","value":"0"}}]}}}`,
			"spec.canary.analysis.metrics[0].condition.operator", "Unsupported value"},
		{"canary-metric-word-value", `{"image":"nginx","canary":{"steps":[{"setWeight":5}],"analysis":{"metrics":[{"name":"a","query":"up","condition":{"operator":">","value":"high"}}]}}}`,
			"spec.canary.analysis.metrics[0].condition.value", "should match"},
		{"canary-metric-huge-exponent", `{"image":"nginx","canary":{"steps":[{"setWeight":5}],"analysis":{"metrics":[{"name":"a","query":"up","condition":{"operator":">","value":"1e999"}}]}}}`,
			"spec.canary.analysis.metrics[0].condition.value", "should match"},
		{"canary-metric-interval-1s", `{"image":"nginx","canary":{"steps":[{"setWeight":5}],"analysis":{"metrics":[{"name":"a","query":"up","condition":{"operator":">","value":"0"},"interval":"1s"}]}}}`,
			"spec.canary.analysis.metrics[0].interval", "between 5s and 1h"},
		{"canary-metric-limit-101", `{"image":"nginx","canary":{"steps":[{"setWeight":5}],"analysis":{"metrics":[{"name":"a","query":"up","condition":{"operator":">","value":"0"},"failureLimit":101}]}}}`,
			"spec.canary.analysis.metrics[0].failureLimit", "less than or equal to 100"},
		{"canary-metric-on-error-ignore", `{"image":"nginx","canary":{"steps":[{"setWeight":5}],"analysis":{"metrics":[{"name":"a","query":"up","condition":{"operator":">","value":"0"},"onError":"Ignore"}]}}}`,
			"spec.canary.analysis.metrics[0].onError", "Unsupported value"},
		{"canary-metric-11", `{"image":"nginx","canary":{"steps":[{"setWeight":5}],"analysis":{"metrics":[` + elevenChecks + `]}}}`, "spec.canary.analysis.metrics", "at most 10 items"},
		{"canary-name-57-" + strings.Repeat("n", 42), `{"image":"nginx","canary":{"steps":[{"setWeight":5}]}}`, "metadata.name", "at most 56 characters with spec.canary"},
		{"ports-17", `{"image":"nginx","ports":[` + strings.TrimSuffix(strings.Repeat(`{"name":"p","port":1},`, 17), ",") + `]}`, "spec.ports", "must have at most 16 items"},
		{"expose-port-unknown", `{"image":"nginx","ports":[{"name":"admin","port":9000}],"expose":{"hosts":["a.com"],"portName":"web"}}`, "spec.expose.portName", "must be http"},
		{"expose-port-udp", `{"image":"nginx","ports":[{"name":"dns","port":53,"protocol":"UDP"}],"expose":{"hosts":["a.com"],"portName":"dns"}}`, "spec.expose.portName", "TCP port"},
		{"metrics-port-unknown", `{"image":"nginx","ports":[{"name":"admin","port":9000}],"metrics":{"portName":"web"}}`, "spec.metrics.portName", "must be http"},
		{"metrics-port-udp", `{"image":"nginx","ports":[{"name":"stats","port":8125,"protocol":"UDP"}],"metrics":{"portName":"stats"}}`, "spec.metrics.portName", "TCP port"},
		{"metrics-path-relative", `{"image":"nginx","metrics":{"path":"metrics"}}`, "spec.metrics.path", "should match"},
		{"metrics-path-space", `{"image":"nginx","metrics":{"path":"/my metrics"}}`, "spec.metrics.path", "should match"},
		{"metrics-path-query", `{"image":"nginx","metrics":{"path":"/metrics?format=text"}}`, "spec.metrics.path", "should match"},
		{"metrics-interval-bad", `{"image":"nginx","metrics":{"interval":"30"}}`, "spec.metrics.interval", "should match"},
		{"metrics-interval-overflows", `{"image":"nginx","metrics":{"interval":"9999999999h"}}`, "spec.metrics.interval", "should match"},
		{"probe-http-bad-scheme", `{"image":"nginx","readinessProbe":{"httpGet":{"scheme":"FTP"}}}`, "spec.readinessProbe.httpGet.scheme", "Unsupported value"},
		{"probe-http-bad-header", `{"image":"nginx","readinessProbe":{"httpGet":{"httpHeaders":[{"name":"bad header","value":"x"}]}}}`, "spec.readinessProbe.httpGet.httpHeaders[0].name", "HTTP header name"},
		{"probe-tcp-port-too-high", `{"image":"nginx","startupProbe":{"tcpSocket":{"port":70000}}}`, "spec.startupProbe.tcpSocket.port", "port number"},
		{"probe-grpc-port-zero", `{"image":"nginx","readinessProbe":{"grpc":{"port":0}}}`, "spec.readinessProbe.grpc.port", ""},
		{"probe-exec-empty", `{"image":"nginx","readinessProbe":{"exec":{"command":[]}}}`, "spec.readinessProbe.exec.command", ""},
		{"probe-zero-period", `{"image":"nginx","readinessProbe":{"tcpSocket":{},"periodSeconds":0}}`, "spec.readinessProbe.periodSeconds", ""},
		{"probe-negative-delay", `{"image":"nginx","readinessProbe":{"tcpSocket":{},"initialDelaySeconds":-1}}`, "spec.readinessProbe.initialDelaySeconds", ""},
		{"liveness-success-threshold", `{"image":"nginx","livenessProbe":{"tcpSocket":{},"successThreshold":2}}`, "spec.livenessProbe.successThreshold", "must be 1 for a liveness probe"},
		{"startup-success-threshold", `{"image":"nginx","startupProbe":{"tcpSocket":{},"successThreshold":3}}`, "spec.startupProbe.successThreshold", "must be 1 for a startup probe"},
		{"security-capabilities-not-a-list", `{"image":"nginx","securityContext":{"capabilities":{"add":"NET_ADMIN"}}}`, "spec.securityContext.capabilities.add", ""},
		{"security-string-run-as-user", `{"image":"nginx","securityContext":{"runAsUser":"root"}}`, "spec.securityContext.runAsUser", ""},
		{"security-unknown-field", `{"image":"nginx","securityContext":{"privilegedd":true}}`, "spec.securityContext.privilegedd", "unknown field"},
		{"bad-service-account", `{"image":"nginx","serviceAccountName":"Not_Valid"}`, "spec.serviceAccountName", "valid ServiceAccount name"},
		{"duplicate-pull-secret", `{"image":"nginx","imagePullSecrets":[{"name":"a"},{"name":"a"}]}`, "spec.imagePullSecrets[1]", "Duplicate value"},
		{"pod-label-bad-key", `{"image":"nginx","podLabels":{"bad key":"x"}}`, "spec.podLabels", "label keys must be qualified names"},
		{"pod-label-key-name-too-long", `{"image":"nginx","podLabels":{"example.com/` + strings.Repeat("a", 64) + `":"x"}}`, "spec.podLabels", "label keys"},
		{"pod-label-bad-value", `{"image":"nginx","podLabels":{"team":"-bad-"}}`, "spec.podLabels.team", ""},
		{"pod-label-value-too-long", `{"image":"nginx","podLabels":{"team":"` + strings.Repeat("a", 64) + `"}}`, "spec.podLabels.team", "63"},
		{"pod-label-selector-key", `{"image":"nginx","podLabels":{"myapp.example.com/name":"other"}}`, "spec.podLabels", "the operator sets them"},
		{"pod-label-managed-by", `{"image":"nginx","podLabels":{"app.kubernetes.io/managed-by":"helm"}}`, "spec.podLabels", "the operator sets them"},
		{"pod-annotation-bad-key", `{"image":"nginx","podAnnotations":{"a b":"x"}}`, "spec.podAnnotations", "annotation keys"},
		{"service-annotation-reserved", `{"image":"nginx","serviceAnnotations":{"myapp.example.com/selector-migration":"x"}}`, "spec.serviceAnnotations", "the operator sets them"},
		{"node-selector-bad-value", `{"image":"nginx","nodeSelector":{"zone":"a b"}}`, "spec.nodeSelector.zone", ""},
		{"toleration-bad-seconds", `{"image":"nginx","tolerations":[{"key":"k","tolerationSeconds":"soon"}]}`, "spec.tolerations[0].tolerationSeconds", ""},
		{"too-many-tolerations", `{"image":"nginx","tolerations":[` + strings.TrimSuffix(strings.Repeat(`{"operator":"Exists"},`, 65), ",") + `]}`, "spec.tolerations", "must have at most 64 items"},
		{"spread-without-key", `{"image":"nginx","topologySpreadConstraints":[{"maxSkew":1,"whenUnsatisfiable":"DoNotSchedule"}]}`, "spec.topologySpreadConstraints[0].topologyKey", "Required"},
		{"rolling-update-both-zero", `{"image":"nginx","rollingUpdate":{"maxSurge":0,"maxUnavailable":"0%"}}`, "spec.rollingUpdate.maxUnavailable", "must not both be 0"},
		{"rolling-update-both-zero-percent", `{"image":"nginx","rollingUpdate":{"maxSurge":"0%","maxUnavailable":0}}`, "spec.rollingUpdate.maxUnavailable", "must not both be 0"},
		{"rolling-update-both-zero-padded", `{"image":"nginx","rollingUpdate":{"maxSurge":"00%","maxUnavailable":"000%"}}`, "spec.rollingUpdate.maxUnavailable", "must not both be 0"},
		{"privileged-without-escalation", `{"image":"nginx","securityContext":{"privileged":true,"allowPrivilegeEscalation":false}}`, "spec.securityContext", "allowPrivilegeEscalation must not be false"},
		{"sys-admin-without-escalation", `{"image":"nginx","securityContext":{"capabilities":{"add":["CAP_SYS_ADMIN"]},"allowPrivilegeEscalation":false}}`, "spec.securityContext", "allowPrivilegeEscalation must not be false"},
		{"rolling-update-bad-percent", `{"image":"nginx","rollingUpdate":{"maxUnavailable":"150%"}}`, "spec.rollingUpdate.maxUnavailable", "percentage from 0% to 100%"},
		{"rolling-update-negative", `{"image":"nginx","rollingUpdate":{"maxSurge":-1}}`, "spec.rollingUpdate.maxSurge", "number from 0 to 2147483647"},
		{"pdb-both", `{"image":"nginx","podDisruptionBudget":{"minAvailable":1,"maxUnavailable":1}}`, "spec.podDisruptionBudget", "exactly one of minAvailable and maxUnavailable"},
		{"pdb-neither", `{"image":"nginx","podDisruptionBudget":{}}`, "spec.podDisruptionBudget", "exactly one"},
		{"pdb-bad-percent", `{"image":"nginx","podDisruptionBudget":{"minAvailable":"half"}}`, "spec.podDisruptionBudget.minAvailable", "percentage"},
		{"command-too-long", `{"image":"nginx","command":[` + strings.TrimSuffix(strings.Repeat(`"x",`, 257), ",") + `]}`, "spec.command", "must have at most 256 items"},
		// 0.4.0: env sources, the downward API, shutdown and rollout timing.
		{"env-from-neither", `{"image":"nginx","envFrom":[{"prefix":"A_"}]}`, "spec.envFrom[0]", "exactly one of configMapRef and secretRef"},
		{"env-from-both", `{"image":"nginx","envFrom":[{"configMapRef":{"name":"c"},"secretRef":{"name":"s"}}]}`, "spec.envFrom[0]", "exactly one of configMapRef and secretRef"},
		{"env-from-bad-name", `{"image":"nginx","envFrom":[{"configMapRef":{"name":"Bad_Name"}}]}`, "spec.envFrom[0].configMapRef.name", "valid object name"},
		{"env-from-no-name", `{"image":"nginx","envFrom":[{"secretRef":{"optional":true}}]}`, "spec.envFrom[0].secretRef.name", "Required"},
		{"env-from-bad-prefix", `{"image":"nginx","envFrom":[{"prefix":"A=","configMapRef":{"name":"c"}}]}`, "spec.envFrom[0].prefix", "printable ASCII characters other than '='"},
		{"env-from-too-many", `{"image":"nginx","envFrom":[` + strings.TrimSuffix(strings.Repeat(`{"configMapRef":{"name":"c"}},`, 33), ",") + `]}`, "spec.envFrom", "must have at most 32 items"},
		{"env-field-unsupported", `{"image":"nginx","env":[{"name":"A","valueFrom":{"fieldRef":{"fieldPath":"spec.restartPolicy"}}}]}`, "spec.env[0].valueFrom.fieldRef.fieldPath", "must be metadata.name"},
		{"env-field-label-bad-key", `{"image":"nginx","env":[{"name":"A","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['bad key']"}}}]}`, "spec.env[0].valueFrom.fieldRef.fieldPath", "qualified name"},
		{"env-field-label-name-too-long", `{"image":"nginx","env":[{"name":"A","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['` + strings.Repeat("a", 64) + `']"}}}]}`, "spec.env[0].valueFrom.fieldRef.fieldPath", "qualified name"},
		{"env-field-label-prefix-too-long", `{"image":"nginx","env":[{"name":"A","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['` + strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 62) + `/x']"}}}]}`, "spec.env[0].valueFrom.fieldRef.fieldPath", "at most 253 characters"},
		{"env-field-bad-version", `{"image":"nginx","env":[{"name":"A","valueFrom":{"fieldRef":{"apiVersion":"v2","fieldPath":"metadata.name"}}}]}`, "spec.env[0].valueFrom.fieldRef.apiVersion", "Unsupported value"},
		{"env-field-and-secret", `{"image":"nginx","env":[{"name":"A","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"},"secretKeyRef":{"name":"s","key":"k"}}}]}`, "spec.env[0].valueFrom", "exactly one of secretKeyRef, configMapKeyRef, fieldRef and resourceFieldRef"},
		{"env-field-and-value", `{"image":"nginx","env":[{"name":"A","value":"x","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]}`, "spec.env[0]", "mutually exclusive"},
		{"env-resource-unsupported", `{"image":"nginx","env":[{"name":"A","valueFrom":{"resourceFieldRef":{"resource":"limits.nvidia.com/gpu"}}}]}`, "spec.env[0].valueFrom.resourceFieldRef.resource", "must be limits.cpu"},
		{"env-resource-cpu-in-mebibytes", `{"image":"nginx","env":[{"name":"A","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"1Mi"}}}]}`, "spec.env[0].valueFrom.resourceFieldRef.divisor", "must be 1 or 1m for cpu"},
		{"env-resource-memory-in-millis", `{"image":"nginx","env":[{"name":"A","valueFrom":{"resourceFieldRef":{"resource":"requests.memory","divisor":"1m"}}}]}`, "spec.env[0].valueFrom.resourceFieldRef.divisor", "must be 1 or 1m for cpu"},
		{"env-resource-divisor-two", `{"image":"nginx","env":[{"name":"A","valueFrom":{"resourceFieldRef":{"resource":"limits.memory","divisor":2}}}]}`, "spec.env[0].valueFrom.resourceFieldRef.divisor", "1Ki"},
		{"automount-not-a-bool", `{"image":"nginx","automountServiceAccountToken":"no"}`, "spec.automountServiceAccountToken", ""},
		{"grace-negative", `{"image":"nginx","terminationGracePeriodSeconds":-1}`, "spec.terminationGracePeriodSeconds", "greater than or equal to 0"},
		{"pre-stop-no-handler", `{"image":"nginx","lifecycle":{"preStop":{}}}`, "spec.lifecycle.preStop", "exactly one of exec, httpGet and sleep"},
		{"pre-stop-two-handlers", `{"image":"nginx","lifecycle":{"preStop":{"sleep":{"seconds":5},"exec":{"command":["true"]}}}}`, "spec.lifecycle.preStop", "exactly one of exec, httpGet and sleep"},
		{"pre-stop-sleep-over-default-grace", `{"image":"nginx","lifecycle":{"preStop":{"sleep":{"seconds":31}}}}`, "spec.lifecycle.preStop.sleep.seconds", "must not exceed terminationGracePeriodSeconds (30 when left out)"},
		{"pre-stop-sleep-over-grace", `{"image":"nginx","terminationGracePeriodSeconds":10,"lifecycle":{"preStop":{"sleep":{"seconds":11}}}}`, "spec.lifecycle.preStop.sleep.seconds", "must not exceed terminationGracePeriodSeconds"},
		{"pre-stop-sleep-negative", `{"image":"nginx","lifecycle":{"preStop":{"sleep":{"seconds":-1}}}}`, "spec.lifecycle.preStop.sleep.seconds", "greater than or equal to 0"},
		{"pre-stop-sleep-no-seconds", `{"image":"nginx","lifecycle":{"preStop":{"sleep":{}}}}`, "spec.lifecycle.preStop.sleep.seconds", "Required"},
		{"pre-stop-exec-empty", `{"image":"nginx","lifecycle":{"preStop":{"exec":{"command":[]}}}}`, "spec.lifecycle.preStop.exec.command", ""},
		{"pre-stop-http-other-port-name", `{"image":"nginx","lifecycle":{"preStop":{"httpGet":{"port":"admin"}}}}`, "spec.lifecycle.preStop.httpGet.port", "must name a TCP port of the container"},
		{"pre-stop-http-unknown-port-name", `{"image":"nginx","ports":[{"name":"admin","port":9000}],"lifecycle":{"preStop":{"httpGet":{"port":"admn"}}}}`, "spec.lifecycle.preStop.httpGet.port", "must name a TCP port of the container"},
		{"progress-deadline-not-over-min-ready", `{"image":"nginx","minReadySeconds":10,"progressDeadlineSeconds":10}`, "spec.progressDeadlineSeconds", "must exceed minReadySeconds"},
		{"min-ready-over-default-deadline", `{"image":"nginx","minReadySeconds":600}`, "spec.minReadySeconds", "600 when left out"},
		{"progress-deadline-zero", `{"image":"nginx","progressDeadlineSeconds":0}`, "spec.progressDeadlineSeconds", "greater than or equal to 1"},
		{"min-ready-negative", `{"image":"nginx","minReadySeconds":-1}`, "spec.minReadySeconds", "greater than or equal to 0"},
		{"volume-no-source", `{"image":"nginx","volumes":[{"name":"v"}]}`, "spec.volumes[0]", "exactly one of configMap, secret, emptyDir, persistentVolumeClaim, downwardAPI and projected"},
		{"volume-two-sources", `{"image":"nginx","volumes":[{"name":"v","emptyDir":{},"configMap":{"name":"c"}}]}`, "spec.volumes[0]", "exactly one of configMap, secret, emptyDir, persistentVolumeClaim, downwardAPI and projected"},
		{"volume-host-path", `{"image":"nginx","volumes":[{"name":"v","hostPath":{"path":"/etc"}}]}`, "spec.volumes[0].hostPath", "unknown field"},
		{"volume-bad-name", `{"image":"nginx","volumes":[{"name":"My_Volume","emptyDir":{}}]}`, "spec.volumes[0].name", "DNS label"},
		{"volume-name-too-long", `{"image":"nginx","volumes":[{"name":"` + strings.Repeat("v", 64) + `","emptyDir":{}}]}`, "spec.volumes[0].name", ""},
		{"volume-duplicate-name", `{"image":"nginx","volumes":[{"name":"v","emptyDir":{}},{"name":"v","emptyDir":{}}]}`, "spec.volumes[1]", "Duplicate value"},
		{"volume-too-many", `{"image":"nginx","volumes":[` + manyVolumes(33) + `]}`, "spec.volumes", "must have at most 32 items"},
		{"volume-config-map-bad-name", `{"image":"nginx","volumes":[{"name":"v","configMap":{"name":"Bad_Name"}}]}`, "spec.volumes[0].configMap.name", "valid object name"},
		{"volume-item-absolute-path", `{"image":"nginx","volumes":[{"name":"v","configMap":{"name":"c","items":[{"key":"k","path":"/etc/x"}]}}]}`, "spec.volumes[0].configMap.items[0].path", "relative path"},
		{"volume-item-dotdot-path", `{"image":"nginx","volumes":[{"name":"v","secret":{"secretName":"s","items":[{"key":"k","path":"a/../../x"}]}}]}`, "spec.volumes[0].secret.items[0].path", "relative path"},
		{"volume-item-leading-dots", `{"image":"nginx","volumes":[{"name":"v","secret":{"secretName":"s","items":[{"key":"k","path":"..data"}]}}]}`, "spec.volumes[0].secret.items[0].path", "not starting with '..'"},
		{"volume-item-mode-too-high", `{"image":"nginx","volumes":[{"name":"v","configMap":{"name":"c","items":[{"key":"k","path":"p","mode":512}]}}]}`, "spec.volumes[0].configMap.items[0].mode", "less than or equal to 511"},
		{"volume-default-mode-negative", `{"image":"nginx","volumes":[{"name":"v","secret":{"secretName":"s","defaultMode":-1}}]}`, "spec.volumes[0].secret.defaultMode", "greater than or equal to 0"},
		{"volume-empty-dir-bad-medium", `{"image":"nginx","volumes":[{"name":"v","emptyDir":{"medium":"HugePages"}}]}`, "spec.volumes[0].emptyDir.medium", "Unsupported value"},
		{"volume-empty-dir-negative-size", `{"image":"nginx","volumes":[{"name":"v","emptyDir":{"sizeLimit":"-1Gi"}}]}`, "spec.volumes[0].emptyDir.sizeLimit", "non-negative"},
		{"volume-claim-no-name", `{"image":"nginx","volumes":[{"name":"v","persistentVolumeClaim":{"readOnly":true}}]}`, "spec.volumes[0].persistentVolumeClaim.claimName", "Required"},
		{"volume-token-name", `{"image":"nginx","volumes":[{"name":"kube-api-access-x","configMap":{"name":"c"}}]}`, "spec.volumes[0].name", "kube-api-access-"},
		{"volume-item-long-element", `{"image":"nginx","volumes":[{"name":"v","configMap":{"name":"c","items":[{"key":"k","path":"a/` + strings.Repeat("f", 256) + `"}]}}]}`, "spec.volumes[0].configMap.items[0].path", "at most 255 characters"},
		{"mount-at-root", `{"image":"nginx","volumes":[{"name":"v","emptyDir":{}}],"volumeMounts":[{"name":"v","mountPath":"/"}]}`, "spec.volumeMounts[0].mountPath", "must not be / nor end with '/'"},
		{"mount-trailing-slash", `{"image":"nginx","volumes":[{"name":"v","emptyDir":{}}],"volumeMounts":[{"name":"v","mountPath":"/data/"}]}`, "spec.volumeMounts[0].mountPath", "must not be / nor end with '/'"},
		{"env-resource-hugepages-named-like-cpu", `{"image":"nginx","env":[{"name":"A","valueFrom":{"resourceFieldRef":{"resource":"limits.hugepages-2Mi.cpu","divisor":"1m"}}}]}`, "spec.env[0].valueFrom.resourceFieldRef.divisor", "must be 1 or 1m for cpu"},
		{"mount-unknown-volume", `{"image":"nginx","volumes":[{"name":"v","emptyDir":{}}],"volumeMounts":[{"name":"w","mountPath":"/w"}]}`, "spec.volumeMounts", "every mount must name a volume of spec.volumes"},
		{"mount-without-volumes", `{"image":"nginx","volumeMounts":[{"name":"w","mountPath":"/w"}]}`, "spec.volumeMounts", "every mount must name a volume of spec.volumes"},
		{"mount-relative-path", `{"image":"nginx","volumes":[{"name":"v","emptyDir":{}}],"volumeMounts":[{"name":"v","mountPath":"tmp"}]}`, "spec.volumeMounts[0].mountPath", "absolute path"},
		{"mount-two-on-one-path", `{"image":"nginx","volumes":[{"name":"v","emptyDir":{}},{"name":"w","emptyDir":{}}],"volumeMounts":[{"name":"v","mountPath":"/tmp"},{"name":"w","mountPath":"/tmp"}]}`, "spec.volumeMounts[1]", "Duplicate value"},
		{"mount-sub-path-escapes", `{"image":"nginx","volumes":[{"name":"v","emptyDir":{}}],"volumeMounts":[{"name":"v","mountPath":"/v","subPath":"../x"}]}`, "spec.volumeMounts[0].subPath", "relative path"},
		{"mount-sub-path-absolute", `{"image":"nginx","volumes":[{"name":"v","emptyDir":{}}],"volumeMounts":[{"name":"v","mountPath":"/v","subPath":"/x"}]}`, "spec.volumeMounts[0].subPath", "relative path"},
		{"env-key-dot", `{"image":"nginx","env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"c","key":"."}}}]}`, "spec.env[0].valueFrom.configMapKeyRef.key", "must not be '.' nor start with '..'"},
		{"env-key-dot-dot", `{"image":"nginx","env":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"s","key":"..a"}}}]}`, "spec.env[0].valueFrom.secretKeyRef.key", "must not be '.' nor start with '..'"},
		{"volume-item-key-dot-dot", `{"image":"nginx","volumes":[{"name":"v","configMap":{"name":"c","items":[{"key":"..","path":"p"}]}}]}`, "spec.volumes[0].configMap.items[0].key", "must not be '.' nor start with '..'"},
		{"file-relative-path", `{"image":"nginx","files":[{"path":"etc/app.yaml","content":"x"}]}`, "spec.files[0].path", "absolute path"},
		{"file-at-root", `{"image":"nginx","files":[{"path":"/","content":"x"}]}`, "spec.files[0].path", ""},
		{"file-trailing-slash", `{"image":"nginx","files":[{"path":"/etc/app/","content":"x"}]}`, "spec.files[0].path", "must not end with '/'"},
		{"file-empty-element", `{"image":"nginx","files":[{"path":"/etc//app","content":"x"}]}`, "spec.files[0].path", "empty, '.' or '..' element"},
		{"file-dot-element", `{"image":"nginx","files":[{"path":"/etc/./app","content":"x"}]}`, "spec.files[0].path", "empty, '.' or '..' element"},
		{"file-dot-dot-element", `{"image":"nginx","files":[{"path":"/etc/app/..","content":"x"}]}`, "spec.files[0].path", "empty, '.' or '..' element"},
		{"file-long-element", `{"image":"nginx","files":[{"path":"/` + strings.Repeat("f", 256) + `","content":"x"}]}`, "spec.files[0].path", ""},
		{"file-two-on-one-path", `{"image":"nginx","files":[{"path":"/a","content":"x"},{"path":"/a","content":"y"}]}`, "spec.files[1]", "Duplicate value"},
		{"file-in-file", `{"image":"nginx","files":[{"path":"/etc/app","content":"x"},{"path":"/etc/app/config.yaml","content":"y"}]}`, "spec.files", "must not be a directory of another file's path"},
		{"file-mode-over-0777", `{"image":"nginx","files":[{"path":"/a","content":"x","mode":512}]}`, "spec.files[0].mode", "less than or equal to 511"},
		{"file-no-content", `{"image":"nginx","files":[{"path":"/a"}]}`, "spec.files[0].content", "Required"},
		{"file-at-mount", `{"image":"nginx","files":[{"path":"/tmp","content":"x"}],"volumes":[{"name":"v","emptyDir":{}}],"volumeMounts":[{"name":"v","mountPath":"/tmp"}]}`, "spec.files", "must not be at or inside the path of a volume mount"},
		{"file-in-mount", `{"image":"nginx","files":[{"path":"/etc/app/config.yaml","content":"x"}],"volumes":[{"name":"v","emptyDir":{}}],"volumeMounts":[{"name":"v","mountPath":"/etc/app"}]}`, "spec.files", "must not be at or inside the path of a volume mount"},
		{"mount-in-file", `{"image":"nginx","files":[{"path":"/etc/app","content":"x"}],"volumes":[{"name":"v","emptyDir":{}}],"volumeMounts":[{"name":"v","mountPath":"/etc/app/data"}]}`, "spec.files", "nor be a directory of one"},
		{"files-too-large", `{"image":"nginx","files":[{"path":"/a","content":"` + strings.Repeat("é", 256000) + `"},{"path":"/b","content":"` + strings.Repeat("é", 256001) + `"}]}`, "spec.files", "must not exceed 1000 KiB in UTF-8"},
		{"file-too-long", `{"image":"nginx","files":[{"path":"/a","content":"` + strings.Repeat("x", 512001) + `"}]}`, "spec.files[0].content", ""},
		{"downward-api-no-items", `{"image":"nginx","volumes":[{"name":"v","downwardAPI":{}}]}`, "spec.volumes[0].downwardAPI.items", "Required"},
		{"downward-api-neither", `{"image":"nginx","volumes":[{"name":"v","downwardAPI":{"items":[{"path":"p"}]}}]}`, "spec.volumes[0].downwardAPI.items[0]", "exactly one of fieldRef and resourceFieldRef"},
		{"downward-api-both", `{"image":"nginx","volumes":[{"name":"v","downwardAPI":{"items":[{"path":"p","fieldRef":{"fieldPath":"metadata.name"},"resourceFieldRef":{"resource":"limits.cpu"}}]}}]}`, "spec.volumes[0].downwardAPI.items[0]", "exactly one of fieldRef and resourceFieldRef"},
		{"downward-api-pod-ip", `{"image":"nginx","volumes":[{"name":"v","downwardAPI":{"items":[{"path":"ip","fieldRef":{"fieldPath":"status.podIP"}}]}}]}`, "spec.volumes[0].downwardAPI.items[0].fieldRef.fieldPath", "must be metadata.name"},
		{"downward-api-bad-label-key", `{"image":"nginx","volumes":[{"name":"v","downwardAPI":{"items":[{"path":"l","fieldRef":{"fieldPath":"metadata.labels['-bad']"}}]}}]}`, "spec.volumes[0].downwardAPI.items[0].fieldRef.fieldPath", "qualified name"},
		{"downward-api-absolute-path", `{"image":"nginx","volumes":[{"name":"v","downwardAPI":{"items":[{"path":"/name","fieldRef":{"fieldPath":"metadata.name"}}]}}]}`, "spec.volumes[0].downwardAPI.items[0].path", "relative path"},
		{"downward-api-leading-dots", `{"image":"nginx","volumes":[{"name":"v","downwardAPI":{"items":[{"path":"..name","fieldRef":{"fieldPath":"metadata.name"}}]}}]}`, "spec.volumes[0].downwardAPI.items[0].path", "not starting with '..'"},
		{"downward-api-resource-unsupported", `{"image":"nginx","volumes":[{"name":"v","downwardAPI":{"items":[{"path":"gpu","resourceFieldRef":{"resource":"limits.nvidia.com/gpu"}}]}}]}`, "spec.volumes[0].downwardAPI.items[0].resourceFieldRef.resource", "must be limits.cpu"},
		{"downward-api-mode-too-high", `{"image":"nginx","volumes":[{"name":"v","downwardAPI":{"defaultMode":512,"items":[{"path":"n","fieldRef":{"fieldPath":"metadata.name"}}]}}]}`, "spec.volumes[0].downwardAPI.defaultMode", "less than or equal to 511"},
		{"projected-no-sources", `{"image":"nginx","volumes":[{"name":"v","projected":{}}]}`, "spec.volumes[0].projected.sources", "Required"},
		{"projected-two-in-one-source", `{"image":"nginx","volumes":[{"name":"v","projected":{"sources":[{"configMap":{"name":"c"},"secret":{"name":"s"}}]}}]}`, "spec.volumes[0].projected.sources[0]", "exactly one of configMap, secret, downwardAPI and serviceAccountToken"},
		{"projected-too-many-sources", `{"image":"nginx","volumes":[{"name":"v","projected":{"sources":[` + strings.TrimSuffix(strings.Repeat(`{"configMap":{"name":"c"}},`, 5), ",") + `]}}]}`, "spec.volumes[0].projected.sources", "must have at most 4 items"},
		{"projected-token-short", `{"image":"nginx","volumes":[{"name":"v","projected":{"sources":[{"serviceAccountToken":{"path":"token","expirationSeconds":599}}]}}]}`, "spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds", "greater than or equal to 600"},
		{"projected-token-long", `{"image":"nginx","volumes":[{"name":"v","projected":{"sources":[{"serviceAccountToken":{"path":"token","expirationSeconds":4294967297}}]}}]}`, "spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds", "less than or equal to 4294967296"},
		{"projected-token-absolute-path", `{"image":"nginx","volumes":[{"name":"v","projected":{"sources":[{"serviceAccountToken":{"path":"/token"}}]}}]}`, "spec.volumes[0].projected.sources[0].serviceAccountToken.path", "relative path"},
		{"projected-token-no-path", `{"image":"nginx","volumes":[{"name":"v","projected":{"sources":[{"serviceAccountToken":{"audience":"vault"}}]}}]}`, "spec.volumes[0].projected.sources[0].serviceAccountToken.path", "Required"},
		{"projected-item-dotdot", `{"image":"nginx","volumes":[{"name":"v","projected":{"sources":[{"secret":{"name":"s","items":[{"key":"k","path":"../k"}]}}]}}]}`, "spec.volumes[0].projected.sources[0].secret.items[0].path", "relative path"},
		{"projected-downward-pod-ip", `{"image":"nginx","volumes":[{"name":"v","projected":{"sources":[{"downwardAPI":{"items":[{"path":"ip","fieldRef":{"fieldPath":"status.podIP"}}]}}]}}]}`, "spec.volumes[0].projected.sources[0].downwardAPI.items[0].fieldRef.fieldPath", "must be metadata.name"},
		{"volume-named-as-files", `{"image":"nginx","volumes":[{"name":"myapp-files","emptyDir":{}}]}`, "spec.volumes[0].name", "must not be myapp-files"},
		{"unknown-field", `{"image":"nginx","replica":3}`, "spec.replica", "unknown field"},
		{"expose-no-hosts", `{"image":"nginx","expose":{"hosts":[]}}`, "spec.expose.hosts", ""},
		{"expose-host-ip", `{"image":"nginx","expose":{"hosts":["10.0.0.1"]}}`, "spec.expose.hosts[0]", ""},
		{"expose-host-upper", `{"image":"nginx","expose":{"hosts":["Shop.example.com"]}}`, "spec.expose.hosts[0]", ""},
		{"expose-host-inner-wildcard", `{"image":"nginx","expose":{"hosts":["a.*.com"]}}`, "spec.expose.hosts[0]", ""},
		{"expose-host-bare-wildcard", `{"image":"nginx","expose":{"hosts":["*"]}}`, "spec.expose.hosts[0]", ""},
		{"expose-host-too-long", `{"image":"nginx","expose":{"hosts":["a` + strings.Repeat(".b", 127) + `"]}}`, "spec.expose.hosts[0]", ""},
		{"expose-host-twice", `{"image":"nginx","expose":{"hosts":["a.com","a.com"]}}`, "spec.expose.hosts[1]", "Duplicate"},
		{"expose-17-hosts", `{"image":"nginx","expose":{"hosts":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]}}`, "spec.expose.hosts", "16"},
		{"expose-relative-path", `{"image":"nginx","expose":{"hosts":["a.com"],"path":"shop"}}`, "spec.expose.path", ""},
		{"expose-empty-element", `{"image":"nginx","expose":{"hosts":["a.com"],"path":"/a//b"}}`, "spec.expose.path", ""},
		{"expose-dot-dot", `{"image":"nginx","expose":{"hosts":["a.com"],"path":"/a/../b"}}`, "spec.expose.path", ""},
		{"expose-trailing-dot", `{"image":"nginx","expose":{"hosts":["a.com"],"path":"/a/."}}`, "spec.expose.path", ""},
		{"expose-percent", `{"image":"nginx","expose":{"hosts":["a.com"],"path":"/a%2fb"}}`, "spec.expose.path", ""},
		{"expose-gateway-and-class", `{"image":"nginx","expose":{"hosts":["a.com"],"gateway":{"name":"gw"},"ingressClassName":"nginx"}}`, "spec.expose", "not both"},
		{"expose-gateway-secret", `{"image":"nginx","expose":{"hosts":["a.com"],"gateway":{"name":"gw"},"tls":{"secretName":"t"}}}`, "spec.expose.tls.secretName", "listener holds it"},
		{"expose-gateway-issuer", `{"image":"nginx","expose":{"hosts":["a.com"],"gateway":{"name":"gw"},"tls":{"issuerRef":{"name":"ca"}}}}`, "spec.expose.tls.issuerRef", "belongs to its listener"},
		{"expose-issuer-without-secret", `{"image":"nginx","expose":{"hosts":["a.com"],"tls":{"issuerRef":{"name":"ca"}}}}`, "spec.expose.tls.secretName", "names the Secret cert-manager writes"},
		{"expose-issuer-no-name", `{"image":"nginx","expose":{"hosts":["a.com"],"tls":{"secretName":"t","issuerRef":{"kind":"ClusterIssuer"}}}}`, "spec.expose.tls.issuerRef.name", "Required"},
		{"expose-issuer-bad-kind", `{"image":"nginx","expose":{"hosts":["a.com"],"tls":{"secretName":"t","issuerRef":{"name":"ca","kind":"clusterIssuer"}}}}`, "spec.expose.tls.issuerRef.kind", ""},
		{"expose-issuer-kind-of-another-group", `{"image":"nginx","expose":{"hosts":["a.com"],"tls":{"secretName":"t","issuerRef":{"name":"ca","kind":"VenafiIssuer"}}}}`, "spec.expose.tls.issuerRef.kind", "Issuer or ClusterIssuer"},
		{"expose-issuer-kind-of-cert-manager-group", `{"image":"nginx","expose":{"hosts":["a.com"],"tls":{"secretName":"t","issuerRef":{"name":"ca","kind":"AWSPCAIssuer","group":"cert-manager.io"}}}}`, "spec.expose.tls.issuerRef.kind", "Issuer or ClusterIssuer"},
		{"expose-issuer-bad-group", `{"image":"nginx","expose":{"hosts":["a.com"],"tls":{"secretName":"t","issuerRef":{"name":"ca","group":"Cert-Manager.io"}}}}`, "spec.expose.tls.issuerRef.group", ""},
		{"expose-gateway-no-name", `{"image":"nginx","expose":{"hosts":["a.com"],"gateway":{"namespace":"infra"}}}`, "spec.expose.gateway.name", "Required"},
		{"expose-gateway-bad-namespace", `{"image":"nginx","expose":{"hosts":["a.com"],"gateway":{"namespace":"a.b","name":"gw"}}}`, "spec.expose.gateway.namespace", ""},
		{"expose-bad-class", `{"image":"nginx","expose":{"hosts":["a.com"],"ingressClassName":"Nginx"}}`, "spec.expose.ingressClassName", ""},
		{"name.with.dots", `{"image":"nginx"}`, "metadata.name", "names the MyApp's Service"},
		{strings.Repeat("a", 64), `{"image":"nginx"}`, "metadata.name", ""},
		// Init containers and sidecars.
		{"init-container-named-app", `{"image":"nginx","initContainers":[{"name":"app","image":"busybox"}]}`, "spec.initContainers[0].name", "must not be app"},
		{"init-container-name-not-a-label", `{"image":"nginx","initContainers":[{"name":"Migrate","image":"busybox"}]}`, "spec.initContainers[0].name", "DNS label"},
		{"init-container-twice", `{"image":"nginx","initContainers":[{"name":"a","image":"busybox"},{"name":"a","image":"busybox:2"}]}`, "spec.initContainers[1]", "Duplicate value"},
		{"init-container-without-image", `{"image":"nginx","initContainers":[{"name":"a"}]}`, "spec.initContainers[0].image", "Required"},
		{"init-container-bad-image", `{"image":"nginx","initContainers":[{"name":"a","image":"Busybox"}]}`, "spec.initContainers[0].image", "valid image reference"},
		{"init-container-restart-never", `{"image":"nginx","initContainers":[{"name":"a","image":"busybox","restartPolicy":"Never"}]}`, "spec.initContainers[0].restartPolicy", "Unsupported value"},
		{"init-container-with-a-probe", `{"image":"nginx","initContainers":[{"name":"a","image":"busybox","startupProbe":{"exec":{"command":["true"]}}}]}`, "spec.initContainers[0]", "probes are for sidecars only"},
		{"sidecar-probe-without-port", `{"image":"nginx","initContainers":[{"name":"a","image":"envoy","restartPolicy":"Always","readinessProbe":{"tcpSocket":{}}}]}`, "spec.initContainers[0].readinessProbe.tcpSocket.port", "Required"},
		{"sidecar-probe-named-port", `{"image":"nginx","initContainers":[{"name":"a","image":"envoy","restartPolicy":"Always","readinessProbe":{"httpGet":{"port":"http"}}}]}`, "spec.initContainers[0].readinessProbe.httpGet.port", "integer"},
		{"sidecar-probe-two-handlers", `{"image":"nginx","initContainers":[{"name":"a","image":"envoy","restartPolicy":"Always","livenessProbe":{"tcpSocket":{"port":1},"exec":{"command":["true"]}}}]}`, "spec.initContainers[0].livenessProbe", "exactly one of"},
		{"sidecar-liveness-success-2", `{"image":"nginx","initContainers":[{"name":"a","image":"envoy","restartPolicy":"Always","livenessProbe":{"tcpSocket":{"port":1},"successThreshold":2}}]}`, "spec.initContainers[0].livenessProbe.successThreshold", "must be 1"},
		{"init-container-mount-of-no-volume", `{"image":"nginx","initContainers":[{"name":"a","image":"busybox","volumeMounts":[{"name":"data","mountPath":"/data"}]}]}`, "spec.initContainers", "every mount of an init container must name a volume"},
		{"init-container-env-name", `{"image":"nginx","initContainers":[{"name":"a","image":"busybox","env":[{"name":"A=B","value":"1"}]}]}`, "spec.initContainers[0].env[0].name", "valid environment variable name"},
		{"init-container-request-above-limit", `{"image":"nginx","initContainers":[{"name":"a","image":"busybox","resources":{"limits":{"cpu":"1"},"requests":{"cpu":"2"}}}]}`, "spec.initContainers[0].resources", "must not exceed"},
		{"nine-init-containers", `{"image":"nginx","initContainers":[` + initContainers(9) + `]}`, "spec.initContainers", "must have at most 8 items"},
		{"pod-supplemental-group-past-int32", `{"image":"nginx","podSecurityContext":{"supplementalGroups":[0,2147483648]}}`, "spec.podSecurityContext.supplementalGroups", "from 0 to 2147483647"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := create(t, tc.name, tc.spec)
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				t.Fatalf("want the MyApp rejected as invalid, got %v", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error does not name %s: %v", tc.field, err)
			}
			if tc.message != "" && !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error does not say %q: %v", tc.message, err)
			}
		})
	}
}

func TestAdmissionAcceptsAndDefaults(t *testing.T) {
	cases := testutil.ValidMyApps
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			if err := create(t, tc.Name, tc.Spec); err != nil {
				t.Fatalf("want accepted, got %v", err)
			}
		})
	}

	app := &examplev1.MyApp{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "minimal"}, app); err != nil {
		t.Fatal(err)
	}
	if *app.Spec.Replicas != 1 || *app.Spec.Port != 8080 || app.Spec.ServiceType != examplev1.ServiceTypeClusterIP {
		t.Errorf("defaults not applied: %+v", app.Spec)
	}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "autoscaling-off-without-max"}, app); err != nil {
		t.Fatal(err)
	}
	if *app.Spec.AutoScaling.MinReplicas != 1 || *app.Spec.AutoScaling.TargetCPUUtilizationPercentage != 80 {
		t.Errorf("autoscaling defaults not applied: %+v", app.Spec.AutoScaling)
	}
	// No new field has a CRD default (OLM v1 refuses an upgrade that adds one): the builders
	// default them.
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "minimal"}, app); err != nil {
		t.Fatal(err)
	}
	if app.Spec.ReadinessProbe != nil || app.Spec.SecurityContext != nil || app.Spec.PodSecurityContext != nil || app.Spec.RollingUpdate != nil {
		t.Errorf("a new field got a CRD default: %+v", app.Spec)
	}
	// Quantities keep the form the user wrote, as in a Pod.
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "int-quantities"}, app); err != nil {
		t.Fatal(err)
	}
	if got := app.Spec.Resources.Limits["memory"]; got != "1073741824" {
		t.Errorf("limits.memory = %q, want 1073741824", got)
	}
}

// manyResources is n distinct extended resources as JSON object members.
func manyResources(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`"example.com/r%d":"1"`, i)
	}
	return strings.Join(items, ",")
}

// manyVolumes is n distinct emptyDir volumes as JSON list items.
func manyVolumes(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"name":"v%d","emptyDir":{}}`, i)
	}
	return strings.Join(items, ",")
}

// elevenChecks are one metric check more than spec.canary.analysis takes.
var elevenChecks = func() string {
	var c []string
	for i := range 11 {
		c = append(c, fmt.Sprintf(`{"name":"c%d","query":"up","condition":{"operator":">","value":"0"}}`, i))
	}
	return strings.Join(c, ",")
}()

// initContainers is n distinct init containers as JSON list items.
func initContainers(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"name":"init-%d","image":"busybox"}`, i)
	}
	return strings.Join(items, ",")
}
