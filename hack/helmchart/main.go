// Command helmchart generates the operator's Helm chart from the objects kustomize builds from
// config/default and config/monitoring, so that the chart never says anything config/ does
// not: it puts the release's name, namespace and labels and the values' settings into those
// objects, and writes the values' defaults from them. make helm-chart runs it; make verify
// fails when the committed chart differs from what it generates (docs/operations/helm.md).
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

func main() {
	var (
		defaultYAML, monitoringYAML, kustomization, out string
		in                                              input
	)
	flag.StringVar(&defaultYAML, "default", "", "The output of kustomize build config/default.")
	flag.StringVar(&monitoringYAML, "monitoring", "", "The output of kustomize build config/monitoring.")
	flag.StringVar(&kustomization, "kustomization", "config/default/kustomization.yaml",
		"config/default's kustomization, whose namespace and namePrefix the chart replaces.")
	flag.StringVar(&in.Version, "version", "", "The chart's version: the operator's, without a v.")
	flag.StringVar(&in.KubeVersion, "kube-version", "", "The oldest Kubernetes version the operator supports.")
	flag.StringVar(&out, "out", "charts/myapp-operator", "The chart's folder; its files are replaced.")
	flag.Parse()
	if err := run(defaultYAML, monitoringYAML, kustomization, out, in); err != nil {
		fmt.Fprintln(os.Stderr, "helmchart:", err)
		os.Exit(1)
	}
}

func run(defaultYAML, monitoringYAML, kustomization, out string, in input) error {
	if in.Version == "" || in.KubeVersion == "" {
		return fmt.Errorf("-version and -kube-version are required")
	}
	var err error
	if in.Default, err = os.ReadFile(defaultYAML); err != nil {
		return err
	}
	if in.Monitoring, err = os.ReadFile(monitoringYAML); err != nil {
		return err
	}
	k, err := os.ReadFile(kustomization)
	if err != nil {
		return err
	}
	var kust struct {
		Namespace  string `yaml:"namespace"`
		NamePrefix string `yaml:"namePrefix"`
	}
	if err := yaml.Unmarshal(k, &kust); err != nil {
		return fmt.Errorf("%s: %w", kustomization, err)
	}
	if kust.Namespace == "" || kust.NamePrefix == "" {
		return fmt.Errorf("%s sets no namespace or namePrefix", kustomization)
	}
	in.Namespace, in.NamePrefix = kust.Namespace, kust.NamePrefix
	files, err := generate(in)
	if err != nil {
		return err
	}
	return writeChart(out, files)
}

// writeChart replaces the chart's folder with the files: a file the generator no longer makes
// goes away.
func writeChart(dir string, files map[string][]byte) error {
	if err := os.RemoveAll(dir); err != nil && !os.IsNotExist(err) {
		return err
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, fs.FileMode(0o644)); err != nil {
			return err
		}
	}
	return nil
}
