// Package deploy checks what `make deploy` installs, config/default built with kustomize: the
// manager's pod passes the restricted Pod Security Standard (admitted by a real API server) with
// a read-only root filesystem, and NetworkPolicies let in the metrics scrape and the kubelet's
// probes and nothing else.
package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

const configDefault = "../../config/default"

// built is a kustomization as kustomize renders it.
type built struct {
	deployment *appsv1.Deployment
	policies   []networkingv1.NetworkPolicy
	services   []corev1.Service
	kinds      []string
	// others are the objects of kinds this package does not decode.
	others []*unstructured.Unstructured
}

// buildDefault runs kustomize on config/default.
func buildDefault(t *testing.T) built { return build(t, configDefault) }

// build runs kustomize (make test passes its path in KUSTOMIZE) on a kustomization.
func build(t *testing.T, dir string) built {
	t.Helper()
	bin := os.Getenv("KUSTOMIZE")
	if bin == "" {
		t.Fatal("KUSTOMIZE is not set: run `make test`, which builds kustomize")
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "build", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", dir, err, stderr.String())
	}
	var b built
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading kustomize's output: %v", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		b.kinds = append(b.kinds, u.GetKind())
		switch u.GetKind() {
		case "Deployment":
			d := &appsv1.Deployment{}
			fromUnstructured(t, u, d)
			if b.deployment != nil {
				t.Fatalf("%s has two Deployments: %s and %s", dir, b.deployment.Name, d.Name)
			}
			b.deployment = d
		case "NetworkPolicy":
			p := networkingv1.NetworkPolicy{}
			fromUnstructured(t, u, &p)
			b.policies = append(b.policies, p)
		case "Service":
			svc := corev1.Service{}
			fromUnstructured(t, u, &svc)
			b.services = append(b.services, svc)
		default:
			b.others = append(b.others, u)
		}
	}
	if b.deployment == nil {
		t.Fatalf("%s has no Deployment; kinds: %v", dir, b.kinds)
	}
	return b
}

func fromUnstructured(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatalf("reading %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// managerContainer returns the Deployment's manager container.
func managerContainer(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "manager" {
			return c
		}
	}
	t.Fatalf("the Deployment %s has no container named manager", d.Name)
	return corev1.Container{}
}

// TestManagerRootFilesystemIsReadOnly requires the manager container to run with a read-only
// root filesystem (the restricted Pod Security Standard does not ask for it; we do) and every
// path it writes to, /tmp, to be a volume.
func TestManagerRootFilesystemIsReadOnly(t *testing.T) {
	d := buildDefault(t).deployment
	c := managerContainer(t, d)
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("the manager container's securityContext.readOnlyRootFilesystem is not true: %+v", c.SecurityContext)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	for _, want := range []string{"/tmp"} {
		found := false
		for _, m := range c.VolumeMounts {
			if m.MountPath == want && !m.ReadOnly {
				found = true
				if v, ok := volumes[m.Name]; !ok || v.EmptyDir == nil {
					t.Errorf("%s is mounted from %q, which is not an emptyDir volume", want, m.Name)
				}
			}
		}
		if !found {
			t.Errorf("the manager writes to %s (controller-runtime's certificate folders), but no writable volume is mounted there", want)
		}
	}
}

// ports are the manager's listening ports, read from its flags and probes.
type ports struct{ metrics, probes int32 }

func managerPorts(t *testing.T, c corev1.Container) ports {
	t.Helper()
	var p ports
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		if v, ok := strings.CutPrefix(a, "--metrics-bind-address="); ok {
			n, err := strconv.Atoi(v[strings.LastIndex(v, ":")+1:])
			if err != nil {
				t.Fatalf("reading the metrics port from %q: %v", a, err)
			}
			p.metrics = int32(n)
		}
	}
	for _, probe := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		if probe == nil || probe.HTTPGet == nil {
			t.Fatalf("the manager container lacks an HTTP liveness or readiness probe")
		}
		if p.probes != 0 && p.probes != probe.HTTPGet.Port.IntVal {
			t.Fatalf("the liveness and readiness probes use different ports")
		}
		p.probes = probe.HTTPGet.Port.IntVal
	}
	if p.metrics == 0 || p.probes == 0 {
		t.Fatalf("could not read the manager's metrics and probe ports from %v %v", c.Args, c.LivenessProbe)
	}
	return p
}

// TestNetworkPolicies requires config/default to isolate the manager's pod for ingress and let
// in exactly: the metrics port from namespaces labelled metrics: enabled, and the probe port.
// Any other port, or metrics from an unlabelled namespace, is refused.
func TestNetworkPolicies(t *testing.T) {
	b := buildDefault(t)
	c := managerContainer(t, b.deployment)
	p := managerPorts(t, c)
	podLabels := labels.Set(b.deployment.Spec.Template.Labels)
	ns := b.deployment.Namespace

	var selecting []networkingv1.NetworkPolicy
	for _, np := range b.policies {
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil {
			t.Fatalf("NetworkPolicy %s: %v", np.Name, err)
		}
		if np.Namespace == ns && sel.Matches(podLabels) {
			selecting = append(selecting, np)
		}
	}
	if len(selecting) == 0 {
		t.Fatalf("no NetworkPolicy in config/default selects the manager's pod (labels %v); kinds built: %v", podLabels, b.kinds)
	}
	isolated := false
	for _, np := range selecting {
		for _, pt := range np.Spec.PolicyTypes {
			isolated = isolated || pt == networkingv1.PolicyTypeIngress
		}
	}
	if !isolated {
		t.Fatalf("the NetworkPolicies selecting the manager's pod do not isolate it for ingress")
	}

	metricsNS := labels.Set{"metrics": "enabled", "kubernetes.io/metadata.name": "monitoring"}
	otherNS := labels.Set{"kubernetes.io/metadata.name": "apps"}
	cases := map[string]struct {
		port    int32
		fromNS  labels.Set
		allowed bool
	}{
		"metrics from a namespace labelled metrics: enabled": {p.metrics, metricsNS, true},
		"metrics from any other namespace":                   {p.metrics, otherNS, false},
		"probes from anywhere":                               {p.probes, otherNS, true},
		"another port from the metrics namespace":            {9443, metricsNS, false},
		"another port from anywhere":                         {8080, otherNS, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := allows(t, selecting, tc.port, tc.fromNS); got != tc.allowed {
				t.Errorf("ingress to port %d from a pod in a namespace labelled %v: allowed=%v, want %v", tc.port, tc.fromNS, got, tc.allowed)
			}
		})
	}
}

// allows evaluates the policies as the NetworkPolicy API defines them (the union of their
// ingress rules) for a TCP connection to port from any pod of a namespace with nsLabels.
func allows(t *testing.T, policies []networkingv1.NetworkPolicy, port int32, nsLabels labels.Set) bool {
	t.Helper()
	for _, np := range policies {
		for _, rule := range np.Spec.Ingress {
			if !portMatches(rule.Ports, port) {
				continue
			}
			if len(rule.From) == 0 {
				return true
			}
			for _, peer := range rule.From {
				if peer.IPBlock != nil {
					t.Fatalf("NetworkPolicy %s uses an ipBlock, which this test does not evaluate", np.Name)
				}
				if peer.NamespaceSelector == nil {
					continue // pods of the manager's own namespace only
				}
				sel, err := metav1.LabelSelectorAsSelector(peer.NamespaceSelector)
				if err != nil {
					t.Fatalf("NetworkPolicy %s: %v", np.Name, err)
				}
				if sel.Matches(nsLabels) && (peer.PodSelector == nil || len(peer.PodSelector.MatchLabels)+len(peer.PodSelector.MatchExpressions) == 0) {
					return true
				}
			}
		}
	}
	return false
}

func portMatches(ports []networkingv1.NetworkPolicyPort, port int32) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP {
			continue
		}
		if p.Port == nil {
			return true
		}
		lo, hi := p.Port.IntVal, p.Port.IntVal
		if p.EndPort != nil {
			hi = *p.EndPort
		}
		if port >= lo && port <= hi {
			return true
		}
	}
	return false
}
