package main

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// These tests need no binary: they check the generator's parts on small inputs.
// render_test.go checks the chart it makes from config/ with helm.

func TestFill(t *testing.T) {
	h := &holes{}
	name := h.text(`{{ include "x.fullname" $ }}-`)
	block := h.block("$.Values.resources")
	k, _ := h.keyLines("{{- with $.Values.a }}", "a: {{ . }}", "{{- toYaml . | nindent %[2]d }}", "{{- end }}")
	item := h.itemLines("{{- if $.Values.b }}", "- --b", "{{- end }}")
	in := "metadata:\n  name: " + name + "manager\nspec:\n  resources: " + block + "\n  " + k.Value + ": ~\n  args:\n  - --a\n  - " + item.Value + "\n"
	want := `metadata:
  name: {{ include "x.fullname" $ }}-manager
spec:
  resources: {{- toYaml $.Values.resources | nindent 4 }}
  {{- with $.Values.a }}
  a: {{ . }}
  {{- toYaml . | nindent 4 }}
  {{- end }}
  args:
  - --a
  {{- if $.Values.b }}
  - --b
  {{- end }}
`
	got, err := h.fill(in)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := h.fill("  a: " + item.Value + " " + name + "\n"); err == nil {
		t.Error("a line token sharing its line was filled")
	}
}

func TestRename(t *testing.T) {
	h := &holes{}
	r := newRenamer(h, "op-", "op-system", []string{"op-manager", "op-manager-metrics-service", "op-cert", "other"})
	ns, prefix := r.nsToken, r.prefixToken
	tests := map[string]struct {
		in, want string
		err      bool
	}{
		"a name":                         {in: "op-manager", want: prefix + "manager"},
		"the longest name first":         {in: "op-manager-metrics-service", want: prefix + "manager-metrics-service"},
		"a DNS name":                     {in: "op-manager-metrics-service.op-system.svc", want: prefix + "manager-metrics-service." + ns + ".svc"},
		"the namespace":                  {in: "op-system", want: ns},
		"inside an expression":           {in: `absent(up{job="op-manager-metrics-service"} == 1)`, want: `absent(up{job="` + prefix + `manager-metrics-service"} == 1)`},
		"in a path, not a name":          {in: "/etc/op/cert", want: "/etc/op/cert"},
		"inside a longer word":           {in: "stop-manager", want: "stop-manager"},
		"template braces":                {in: "{{ $labels.name }}", want: "{{`{{`}} $labels.name }}"},
		"an object it does not know":     {in: "op-secret", err: true},
		"a longer name it does not know": {in: "op-manager-x", err: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := r.rename(tc.in)
			if tc.err != (err != nil) || got != tc.want && !tc.err {
				t.Errorf("rename(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

// A small config/default and config/monitoring: what generate needs of them.
const testDefault = `apiVersion: v1
kind: Namespace
metadata:
  name: op-system
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: op-manager
  namespace: op-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app.kubernetes.io/name: op
  name: op-manager
  namespace: op-system
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: op
  template:
    metadata:
      labels:
        app.kubernetes.io/name: op
    spec:
      serviceAccountName: op-manager
      containers:
      - name: manager
        image: example.com/op:v1.2.3
        args:
        - --leader-elect
        env:
        - name: WATCH_NAMESPACE
          value: ""
        resources:
          limits:
            memory: 64Mi
`

const testMonitoring = testDefault + `---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: op-monitor
  namespace: op-system
`

func testInput() input {
	return input{Default: []byte(testDefault), Monitoring: []byte(testMonitoring),
		Namespace: "op-system", NamePrefix: "op-", Version: "1.2.3", KubeVersion: "1.30.0"}
}

func TestGenerate(t *testing.T) {
	files, err := generate(testInput())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"Chart.yaml", "values.yaml", "values.schema.json", "README.md", "templates/_helpers.tpl",
		"templates/NOTES.txt", "templates/deployment.yaml", "templates/serviceaccount.yaml", "templates/servicemonitor.yaml"} {
		if _, ok := files[f]; !ok {
			t.Errorf("no %s", f)
		}
	}
	var values struct {
		Image struct {
			Repository string `yaml:"repository"`
		} `yaml:"image"`
		LeaderElection struct {
			Enabled bool `yaml:"enabled"`
		} `yaml:"leaderElection"`
		Resources map[string]map[string]string `yaml:"resources"`
	}
	if err := yaml.Unmarshal(files["values.yaml"], &values); err != nil {
		t.Fatal(err)
	}
	if values.Image.Repository != "example.com/op" || !values.LeaderElection.Enabled || values.Resources["limits"]["memory"] != "64Mi" {
		t.Errorf("values.yaml's defaults are not config/default's: %+v", values)
	}
	if chart := string(files["Chart.yaml"]); !strings.Contains(chart, `appVersion: "v1.2.3"`) || !strings.Contains(chart, "version: 1.2.3") {
		t.Errorf("Chart.yaml:\n%s", chart)
	}
	if sm := string(files["templates/servicemonitor.yaml"]); !strings.Contains(sm, "{{- if "+condServiceMonitor+" }}") {
		t.Errorf("the ServiceMonitor is not optional:\n%s", sm)
	}
	if strings.Contains(string(files["templates/deployment.yaml"]), "ZZtpl") {
		t.Error("a token is left in the Deployment")
	}
}

// What the generator cannot express, it refuses, rather than make a chart that differs from
// config/.
func TestGenerateRefuses(t *testing.T) {
	tests := map[string]func(in *input){
		"a kind without a template file": func(in *input) {
			in.Default = append(in.Default, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: op-config\n  namespace: op-system\n"...)
			in.Monitoring = append(in.Monitoring, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: op-config\n  namespace: op-system\n"...)
		},
		"a kind config/monitoring adds that has no value": func(in *input) {
			in.Monitoring = append(in.Monitoring, "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: op-extra\n  namespace: op-system\n"...)
		},
		"config/monitoring changes an object": func(in *input) {
			in.Monitoring = []byte(strings.Replace(string(in.Monitoring), "kind: ServiceAccount\nmetadata:\n", "kind: ServiceAccount\nmetadata:\n  annotations: {a: b}\n", 1))
		},
		"config/monitoring changes the manager beyond appending": func(in *input) {
			in.Monitoring = []byte(strings.Replace(string(in.Monitoring), "memory: 64Mi", "memory: 128Mi", 1))
		},
		"no WATCH_NAMESPACE": func(in *input) {
			in.Default = []byte(strings.ReplaceAll(string(in.Default), "WATCH_NAMESPACE", "OTHER"))
			in.Monitoring = []byte(strings.ReplaceAll(string(in.Monitoring), "WATCH_NAMESPACE", "OTHER"))
		},
		"a reference to an object the chart does not make": func(in *input) {
			in.Default = []byte(strings.ReplaceAll(string(in.Default), "serviceAccountName: op-manager", "serviceAccountName: op-elsewhere"))
			in.Monitoring = []byte(strings.ReplaceAll(string(in.Monitoring), "serviceAccountName: op-manager", "serviceAccountName: op-elsewhere"))
		},
		"no Namespace": func(in *input) {
			in.Namespace = "other"
		},
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			in := testInput()
			change(&in)
			_, err := generate(in)
			if err == nil {
				t.Fatal("generated")
			}
			t.Log(err)
		})
	}
}

// config/monitoring's additions to the manager become items under the ServiceMonitor's value.
func TestMonitoringAdditionsToTheManager(t *testing.T) {
	in := testInput()
	in.Monitoring = []byte(strings.Replace(string(in.Monitoring), "        - --leader-elect\n", "        - --leader-elect\n        - --metrics-cert-path=/etc/cert\n", 1))
	files, err := generate(in)
	if err != nil {
		t.Fatal(err)
	}
	want := "        {{- if " + condServiceMonitor + " }}\n        - --metrics-cert-path=/etc/cert\n        {{- end }}\n"
	if d := string(files["templates/deployment.yaml"]); !strings.Contains(d, want) {
		t.Errorf("no\n%s\nin\n%s", want, d)
	}
}
