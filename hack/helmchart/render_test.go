package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// These tests render the committed chart (charts/myapp-operator, which make helm-chart
// regenerates first) with the helm binary and compare it with what kustomize builds from
// config/: make helm-chart-check passes both binaries' paths.

const (
	chartDir    = "../../charts/myapp-operator"
	release     = "myapp-operator"
	releaseNS   = "myapp-operator-system"
	managerName = "myapp-operator-controller-manager"
)

type obj = map[string]any

func tool(t *testing.T, env string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		t.Fatalf("%s is not set: run make helm-chart-check, which builds helm and kustomize", env)
	}
	return p
}

func runTool(t *testing.T, bin string, args ...string) ([]byte, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

func decodeAll(t *testing.T, b []byte) []obj {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var out []obj
	for {
		var o obj
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if o != nil {
			out = append(out, o)
		}
	}
}

// helmTemplate renders the chart as release name in namespace ns with the given flags.
func helmTemplate(t *testing.T, name, ns string, flags ...string) []obj {
	t.Helper()
	out, err := runTool(t, tool(t, "HELM"), append([]string{"template", name, chartDir, "--namespace", ns}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, out)
}

// kustomizeBuild builds a folder of config/, without its Namespace (Helm installs into the
// release's namespace).
func kustomizeBuild(t *testing.T, dir string) []obj {
	t.Helper()
	out, err := runTool(t, tool(t, "KUSTOMIZE"), "build", filepath.Join("../../config", dir))
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(decodeAll(t, out), func(o obj) bool { return o["kind"] == "Namespace" })
}

func at(o obj, keys ...string) any {
	var v any = o
	for _, k := range keys {
		m, ok := v.(obj)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func key(o obj) string {
	ns, _ := at(o, "metadata", "namespace").(string)
	return fmt.Sprintf("%s %s/%s", o["kind"], ns, at(o, "metadata", "name"))
}

func byKey(t *testing.T, objs []obj) map[string]obj {
	t.Helper()
	m := map[string]obj{}
	for _, o := range objs {
		if _, dup := m[key(o)]; dup {
			t.Fatalf("%s twice", key(o))
		}
		m[key(o)] = o
	}
	return m
}

// withoutHelmLabels removes what only the chart adds: its helpers' labels on every object
// (config/ labels some objects with app.kubernetes.io/name and managed-by: kustomize, and
// others not at all), the release's instance label from selectors and the pod template, and
// the CRD's resource policy.
func withoutHelmLabels(o obj) obj {
	if labels, ok := at(o, "metadata", "labels").(obj); ok {
		for _, k := range helperLabels {
			delete(labels, k)
		}
		if len(labels) == 0 {
			delete(o["metadata"].(obj), "labels")
		}
	}
	if ann, ok := at(o, "metadata", "annotations").(obj); ok {
		delete(ann, "helm.sh/resource-policy")
	}
	var strip func(v any)
	strip = func(v any) {
		switch v := v.(type) {
		case obj:
			delete(v, labelInstance)
			for _, x := range v {
				strip(x)
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(o["spec"])
	return o
}

// sameObjects fails unless got and want hold the same objects, modulo Helm's labels.
func sameObjects(t *testing.T, got, want []obj) {
	t.Helper()
	g, w := byKey(t, got), byKey(t, want)
	for k, wo := range w {
		gobj, ok := g[k]
		if !ok {
			t.Errorf("the chart does not render %s", k)
			continue
		}
		if d := cmp.Diff(withoutHelmLabels(wo), withoutHelmLabels(gobj)); d != "" {
			t.Errorf("%s differs from config/ (-config +chart):\n%s", k, d)
		}
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			t.Errorf("the chart renders %s, which config/ does not have", k)
		}
	}
}

func TestDefaultValuesRenderConfigDefault(t *testing.T) {
	sameObjects(t, helmTemplate(t, release, releaseNS), kustomizeBuild(t, "default"))
}

func TestMonitoringValuesRenderConfigMonitoring(t *testing.T) {
	sameObjects(t, helmTemplate(t, release, releaseNS,
		"--set", "monitoring.serviceMonitor.enabled=true,monitoring.prometheusRule.enabled=true"),
		kustomizeBuild(t, "monitoring"))
}

// The helpers' labels are on every object the chart renders, so helm and kubectl find them by
// release.
func TestEveryObjectHasTheReleaseLabels(t *testing.T) {
	for _, o := range helmTemplate(t, release, releaseNS, "--set", "monitoring.serviceMonitor.enabled=true,monitoring.prometheusRule.enabled=true") {
		labels, _ := at(o, "metadata", "labels").(obj)
		for k, want := range map[string]any{labelInstance: release, labelManagedBy: "Helm", labelName: "myapp-operator", labelChart: nil} {
			got, ok := labels[k]
			if !ok || want != nil && got != want {
				t.Errorf("%s: label %s is %v, want %v", key(o), k, got, want)
			}
		}
	}
}

func manager(t *testing.T, objs []obj) (deployment, container obj) {
	t.Helper()
	for _, o := range objs {
		if o["kind"] == "Deployment" {
			for _, c := range at(o, "spec", "template", "spec", "containers").([]any) {
				if c.(obj)["name"] == "manager" {
					return o, c.(obj)
				}
			}
		}
	}
	t.Fatal("no manager container")
	return nil, nil
}

func args(c obj) []string {
	out := make([]string, 0, len(c["args"].([]any)))
	for _, a := range c["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}

func env(c obj, name string) obj {
	for _, e := range c["env"].([]any) {
		if e.(obj)["name"] == name {
			return e.(obj)
		}
	}
	return nil
}

// valueTests say what each value changes: check checks it, and changed lists the objects the
// value may change besides the manager's Deployment ("*": any).
var valueTests = map[string]struct {
	set     []string
	check   func(t *testing.T, objs []obj, deployment, container obj)
	changed []string
}{
	"image": {
		set: []string{"image.repository=registry.local/op", "image.tag=v9", "image.pullPolicy=Always"},
		check: func(t *testing.T, _ []obj, _, c obj) {
			if c["image"] != "registry.local/op:v9" || c["imagePullPolicy"] != "Always" {
				t.Errorf("image %v, pull policy %v", c["image"], c["imagePullPolicy"])
			}
		},
	},
	"image tag defaults to the chart's appVersion": {
		check: func(t *testing.T, _ []obj, _, c obj) {
			b, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var chart struct {
				AppVersion string `yaml:"appVersion"`
			}
			if err := yaml.Unmarshal(b, &chart); err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(c["image"].(string), ":"+chart.AppVersion) {
				t.Errorf("image %v, appVersion %s", c["image"], chart.AppVersion)
			}
			if _, ok := c["imagePullPolicy"]; ok {
				t.Errorf("imagePullPolicy %v, want Kubernetes' default", c["imagePullPolicy"])
			}
		},
	},
	"replicas and leader election": {
		set: []string{"replicaCount=2"},
		check: func(t *testing.T, _ []obj, d, c obj) {
			if at(d, "spec", "replicas") != 2 || !slices.Contains(args(c), "--leader-elect") {
				t.Errorf("replicas %v, args %v", at(d, "spec", "replicas"), args(c))
			}
		},
	},
	"leader election off": {
		set: []string{"leaderElection.enabled=false"},
		check: func(t *testing.T, _ []obj, _, c obj) {
			if slices.Contains(args(c), "--leader-elect") {
				t.Errorf("args %v", args(c))
			}
		},
	},
	"client rate limit and more flags": {
		set: []string{"kubeAPI.qps=50.5", "kubeAPI.burst=100", "extraArgs={--zap-log-level=debug,--sync-period=5m}"},
		check: func(t *testing.T, _ []obj, _, c obj) {
			for _, a := range []string{"--kube-api-qps=50.5", "--kube-api-burst=100", "--zap-log-level=debug", "--sync-period=5m"} {
				if !slices.Contains(args(c), a) {
					t.Errorf("no %s in %v", a, args(c))
				}
			}
		},
	},
	"resources": {
		set: []string{"resources.limits.memory=1Gi", "resources.requests.cpu=200m"},
		check: func(t *testing.T, _ []obj, _, c obj) {
			if at(c, "resources", "limits", "memory") != "1Gi" || at(c, "resources", "requests", "cpu") != "200m" {
				t.Errorf("resources %v", c["resources"])
			}
		},
	},
	"pod placement and metadata": {
		set: []string{"nodeSelector.pool=ops", "tolerations[0].key=ops", "tolerations[0].operator=Exists",
			"affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight=1",
			"affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key=pool",
			"affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].operator=Exists",
			"priorityClassName=system-cluster-critical", "imagePullSecrets[0].name=pull",
			"podAnnotations.a=b", "podLabels.team=ops"},
		check: func(t *testing.T, _ []obj, d, _ obj) {
			pod := at(d, "spec", "template").(obj)
			for _, p := range [][]string{{"spec", "nodeSelector", "pool"}, {"spec", "tolerations"}, {"spec", "affinity", "nodeAffinity"},
				{"spec", "priorityClassName"}, {"spec", "imagePullSecrets"}, {"metadata", "annotations", "a"}, {"metadata", "labels", "team"},
				{"metadata", "annotations", "kubectl.kubernetes.io/default-container"}, {"metadata", "labels", labelInstance}} {
				if at(pod, p...) == nil {
					t.Errorf("the pod has no %s", strings.Join(p, "."))
				}
			}
		},
	},
	"watched namespaces": {
		set:     []string{"watchNamespaces={team-a,team-b}"},
		changed: []string{"ClusterRoleBinding /myapp-operator-manager-rolebinding"},
		check: func(t *testing.T, objs []obj, _, c obj) {
			if e := env(c, "WATCH_NAMESPACE"); e["value"] != "team-a,team-b" || e["valueFrom"] != nil {
				t.Errorf("WATCH_NAMESPACE %v", e)
			}
			m := byKey(t, objs)
			if _, ok := m["ClusterRoleBinding /myapp-operator-manager-rolebinding"]; ok {
				t.Error("the manager's role is still bound cluster-wide")
			}
			for _, ns := range []string{"team-a", "team-b"} {
				rb, ok := m["RoleBinding "+ns+"/myapp-operator-manager-rolebinding"]
				if !ok {
					t.Errorf("no RoleBinding in %s", ns)
					continue
				}
				want := obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "myapp-operator-manager-role"}
				if d := cmp.Diff(want, rb["roleRef"]); d != "" {
					t.Errorf("roleRef in %s: %s", ns, d)
				}
				subject := obj{"kind": "ServiceAccount", "name": managerName, "namespace": releaseNS}
				if d := cmp.Diff([]any{subject}, rb["subjects"]); d != "" {
					t.Errorf("subjects in %s: %s", ns, d)
				}
			}
			if _, ok := m["RoleBinding "+releaseNS+"/myapp-operator-leader-election-rolebinding"]; !ok {
				t.Error("no leader election RoleBinding in the release's namespace")
			}
		},
	},
	"no CRD": {
		set:     []string{"crds.install=false"},
		changed: []string{"CustomResourceDefinition /myapps.example.com"},
		check: func(t *testing.T, objs []obj, _, _ obj) {
			if _, ok := byKey(t, objs)["CustomResourceDefinition /myapps.example.com"]; ok {
				t.Error("the CRD is rendered")
			}
		},
	},
	"CRD kept on uninstall by default": {
		check: func(t *testing.T, objs []obj, _, _ obj) {
			crd := byKey(t, objs)["CustomResourceDefinition /myapps.example.com"]
			if at(crd, "metadata", "annotations", "helm.sh/resource-policy") != "keep" {
				t.Errorf("CRD annotations %v", at(crd, "metadata", "annotations"))
			}
		},
	},
	"CRD not kept": {
		set:     []string{"crds.keep=false"},
		changed: []string{"CustomResourceDefinition /myapps.example.com"},
		check: func(t *testing.T, objs []obj, _, _ obj) {
			crd := byKey(t, objs)["CustomResourceDefinition /myapps.example.com"]
			if at(crd, "metadata", "annotations", "helm.sh/resource-policy") != nil {
				t.Errorf("CRD annotations %v", at(crd, "metadata", "annotations"))
			}
		},
	},
	"no NetworkPolicies": {
		set: []string{"networkPolicy.enabled=false"},
		changed: []string{"NetworkPolicy " + releaseNS + "/myapp-operator-allow-metrics-traffic",
			"NetworkPolicy " + releaseNS + "/myapp-operator-allow-probe-traffic"},
		check: func(t *testing.T, objs []obj, _, _ obj) {
			for _, o := range objs {
				if o["kind"] == "NetworkPolicy" {
					t.Errorf("%s is rendered", key(o))
				}
			}
		},
	},
	"monitoring labels": {
		set: []string{"monitoring.serviceMonitor.enabled=true", "monitoring.prometheusRule.enabled=true",
			"monitoring.serviceMonitor.labels.release=prom", "monitoring.prometheusRule.labels.role=alerts"},
		changed: []string{"*"},
		check: func(t *testing.T, objs []obj, _, _ obj) {
			m := byKey(t, objs)
			if at(m["ServiceMonitor "+releaseNS+"/myapp-operator-controller-manager-metrics-monitor"], "metadata", "labels", "release") != "prom" {
				t.Error("the ServiceMonitor has no release=prom label")
			}
			if at(m["PrometheusRule "+releaseNS+"/myapp-operator-alerts"], "metadata", "labels", "role") != "alerts" {
				t.Error("the PrometheusRule has no role=alerts label")
			}
		},
	},
}

// Each value changes what it says, and nothing else.
func TestValues(t *testing.T) {
	defaults := byKey(t, helmTemplate(t, release, releaseNS))
	for name, tc := range valueTests {
		t.Run(name, func(t *testing.T) {
			var flags []string
			for _, s := range tc.set {
				flags = append(flags, "--set", s)
			}
			objs := helmTemplate(t, release, releaseNS, flags...)
			d, c := manager(t, objs)
			tc.check(t, objs, d, c)
			if slices.Contains(tc.changed, "*") {
				return
			}
			got := byKey(t, objs)
			for k, want := range defaults {
				if k == key(d) || slices.Contains(tc.changed, k) {
					continue
				}
				if d := cmp.Diff(want, got[k]); d != "" {
					t.Errorf("%s changed (-default +got):\n%s", k, d)
				}
			}
		})
	}
}

// Another release's name and namespace reach every name and every reference: the service
// account the bindings and the Deployment name, the Service's DNS names in the certificate and
// the ServiceMonitor, the scrape job in the alerts, and every selector selects this release's
// pods and Service.
func TestAnotherReleaseNamesEverything(t *testing.T) {
	objs := helmTemplate(t, "edge", "ops", "--set", "monitoring.serviceMonitor.enabled=true,monitoring.prometheusRule.enabled=true")
	const prefix = "edge-myapp-operator-"
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case obj:
			for k, x := range v {
				if k != labelChart { // the chart's name and version
					walk(where+"."+k, x)
				}
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", where, i), x)
			}
		case string:
			if strings.Contains(v, releaseNS) || strings.Contains(strings.ReplaceAll(v, prefix, ""), "myapp-operator-") {
				t.Errorf("%s = %q names config/default's namespace or objects", where, v)
			}
		}
	}
	var service, pod obj
	for _, o := range objs {
		if o["kind"] == "CustomResourceDefinition" {
			continue
		}
		walk(key(o), o)
		if name := at(o, "metadata", "name").(string); !strings.HasPrefix(name, prefix) {
			t.Errorf("%s is not named after the release", key(o))
		}
		if ns := at(o, "metadata", "namespace"); ns != nil && ns != "ops" {
			t.Errorf("%s is not in the release's namespace", key(o))
		}
		switch o["kind"] {
		case "Service":
			service = o
		case "Deployment":
			pod = at(o, "spec", "template").(obj)
		}
	}
	selects := func(what string, selector, labels any) {
		t.Helper()
		s, _ := selector.(obj)
		l, _ := labels.(obj)
		if len(s) == 0 {
			t.Errorf("%s: empty selector", what)
		}
		for k, v := range s {
			if l[k] != v {
				t.Errorf("%s: selector %s=%v does not select %v", what, k, v, l)
			}
		}
		if s[labelInstance] != "edge" {
			t.Errorf("%s: selector %v does not select by release", what, s)
		}
	}
	for _, o := range objs {
		switch o["kind"] {
		case "Deployment":
			selects(key(o), at(o, "spec", "selector", "matchLabels"), at(pod, "metadata", "labels"))
		case "Service":
			selects(key(o), at(o, "spec", "selector"), at(pod, "metadata", "labels"))
		case "NetworkPolicy":
			selects(key(o), at(o, "spec", "podSelector", "matchLabels"), at(pod, "metadata", "labels"))
		case "ServiceMonitor":
			selects(key(o), at(o, "spec", "selector", "matchLabels"), at(service, "metadata", "labels"))
			if got, want := at(o, "spec", "endpoints").([]any)[0].(obj)["tlsConfig"].(obj)["serverName"], "edge-myapp-operator-controller-manager-metrics-service.ops.svc"; got != want {
				t.Errorf("serverName %v, want %s", got, want)
			}
		}
	}
}

func TestRefusals(t *testing.T) {
	tests := map[string]struct {
		set  string
		want string
	}{
		"replicas without leader election": {"replicaCount=2,leaderElection.enabled=false", "needs leaderElection.enabled"},
		"a misspelt value":                 {"watchNamespace={a}", "watchNamespace"},
		"a name too long for the Service":  {"fullnameOverride=a-release-name-of-thirty-chars", "28 characters at most"},
		"a namespace that cannot be":       {"watchNamespaces={Team_A}", "watchNamespaces"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := runTool(t, tool(t, "HELM"), "template", release, chartDir, "--namespace", releaseNS, "--set", tc.set)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one about %s", err, tc.want)
			}
		})
	}
}
