// Command manifestlint runs kubeconform and kube-score over what the project ships and what
// the operator makes. kubeconform must find every object valid against the strict schemas of
// the Kubernetes API the control plane is built from (and of the MyApp CRD, for the samples),
// and what the project ships (config/default, the CSV's Deployments, the Helm chart's
// renderings, the samples and their children) valid against the API of every older minor
// release the bundle supports, from its minKubeVersion on; kube-score may only find what
// hack/kube-score.yaml justifies.
//
// Two scopes are scored, each with its own justified checks:
//   - operator: the kustomize output of config/default (given as a file) and the Deployments
//     of the bundle's ClusterServiceVersion, as OLM creates them;
//   - children: the Deployment, Service, HorizontalPodAutoscaler and PodDisruptionBudget the
//     operator builds for every valid edge case of the MyApp API (internal/testutil).
//
// A finding is a check graded below "all OK" (critical or warning). A justification that
// matches no finding fails too, so that the file never outlives what it excuses.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/yaml"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

func main() {
	kubeScore := flag.String("kube-score", "", "the kube-score binary")
	config := flag.String("config", "", "the justified checks (hack/kube-score.yaml)")
	kubeconform := flag.String("kubeconform", "", "the kubeconform binary")
	swagger := flag.String("swagger", "", "the OpenAPI (v2) document of the Kubernetes API (api/openapi-spec/swagger.json of k8s.io/kubernetes)")
	crd := flag.String("crd", "", "the CRDs of the kinds checked, comma-separated: the MyApp's, and the Gateway API's HTTPRoute")
	samples := flag.String("samples", "", "a folder of sample MyApps")
	kustomized := flag.String("kustomized", "", "the output of kustomize build config/default")
	csvPath := flag.String("csv", "", "the bundle's ClusterServiceVersion")
	out := flag.String("out", "", "a folder for the checked YAML files and the schemas")
	kubeVersion := flag.String("kube-version", "", "the Kubernetes release of -swagger (v1.36.3)")
	older := flag.String("older", "", "comma-separated releases of k8s.io/kubernetes (v1.30.14,...), one per minor from -min-kube-version up to -kube-version's, whose OpenAPI documents check what the project ships")
	minKubeVersion := flag.String("min-kube-version", "", "the bundle's minKubeVersion (1.30.0)")
	helmRenders := flag.String("helm", "", "comma-separated files of helm template output")
	flag.Parse()
	err := func() error {
		if *kubeScore == "" || *config == "" || *kubeconform == "" || *swagger == "" || *crd == "" ||
			*samples == "" || *kustomized == "" || *csvPath == "" || *out == "" || *kubeVersion == "" ||
			*older == "" || *minKubeVersion == "" || *helmRenders == "" {
			return errors.New("every flag is required")
		}
		in, err := writeInputs(*out, *kustomized, *csvPath, *samples)
		if err != nil {
			return err
		}
		in.helm = strings.Split(*helmRenders, ",")
		releases, err := releasesToCheck(*kubeVersion, *swagger, *minKubeVersion, strings.Split(*older, ","), in)
		if err != nil {
			return err
		}
		if err := conform(*kubeconform, strings.Split(*crd, ","), *out, releases); err != nil {
			return err
		}
		return score(*kubeScore, *config, in)
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "manifestlint:", err)
		os.Exit(1)
	}
}

// inputs are the files checked: what the project ships (the operator's, the chart's
// renderings and the samples), and the children the operator builds for the valid edge cases
// of the API and for the samples.
type inputs struct {
	operator, helm, samples, children, sampleChildren []string
}

// shipped are the files a user of any Kubernetes release the bundle supports applies, or
// gets from the operator for a sample.
func (in inputs) shipped() []string {
	return slices.Concat(in.operator, in.helm, in.samples, in.sampleChildren)
}

func (in inputs) all() []string {
	return slices.Concat(in.shipped(), in.children)
}

// writeInputs writes the CSV's Deployments and the children of every valid MyApp into out.
func writeInputs(out, kustomized, csvPath, samples string) (inputs, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return inputs{}, err
	}
	csvDeployments := filepath.Join(out, "csv-deployments.yaml")
	if err := writeCSVDeployments(csvDeployments, csvPath); err != nil {
		return inputs{}, err
	}
	edgeCases := make([]*examplev1.MyApp, 0, len(testutil.ValidMyApps))
	for _, c := range testutil.ValidMyApps {
		app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: "app-" + c.Name, Namespace: "default"}}
		if err := json.Unmarshal([]byte(c.Spec), &app.Spec); err != nil {
			return inputs{}, fmt.Errorf("%s: %w", c.Name, err)
		}
		edgeCases = append(edgeCases, app)
	}
	children, err := writeChildren(out, edgeCases)
	if err != nil {
		return inputs{}, err
	}
	sampleFiles, err := filepath.Glob(filepath.Join(samples, "*_myapp*.yaml"))
	if err != nil || len(sampleFiles) == 0 {
		return inputs{}, fmt.Errorf("no sample MyApp in %s (%v)", samples, err)
	}
	sampleApps := make([]*examplev1.MyApp, 0, len(sampleFiles))
	for _, f := range sampleFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return inputs{}, err
		}
		app := &examplev1.MyApp{}
		if err := yaml.UnmarshalStrict(b, app); err != nil {
			return inputs{}, fmt.Errorf("%s: %w", f, err)
		}
		app.Name = "sample-" + app.Name
		sampleApps = append(sampleApps, app)
	}
	sampleChildren, err := writeChildren(out, sampleApps)
	if err != nil {
		return inputs{}, err
	}
	return inputs{operator: []string{kustomized, csvDeployments}, samples: sampleFiles, children: children, sampleChildren: sampleChildren}, nil
}

// releasesToCheck are the Kubernetes releases kubeconform checks against: the control
// plane's, for everything, and one of every older minor the bundle supports, for what the
// project ships. The older ones' OpenAPI documents come from their k8s.io/kubernetes modules.
func releasesToCheck(kubeVersion, swagger, minKubeVersion string, older []string, in inputs) ([]release, error) {
	releases := []release{{version: kubeVersion, swagger: swagger, files: in.all()}}
	newest, err := minorOf(kubeVersion)
	if err != nil {
		return nil, err
	}
	lowest, err := minorOf(minKubeVersion)
	if err != nil {
		return nil, err
	}
	covered := map[int]bool{newest: true}
	for _, v := range older {
		m, err := minorOf(v)
		if err != nil {
			return nil, err
		}
		covered[m] = true
		dir, err := moduleDir("k8s.io/kubernetes@" + v)
		if err != nil {
			return nil, err
		}
		releases = append(releases, release{version: v, swagger: filepath.Join(dir, "api", "openapi-spec", "swagger.json"), files: in.shipped()})
	}
	for m := lowest; m <= newest; m++ {
		if !covered[m] {
			return nil, fmt.Errorf("no release of Kubernetes 1.%d to check against: the bundle supports %s to %s", m, minKubeVersion, kubeVersion)
		}
	}
	return releases, nil
}

// minorOf is the minor version of a Kubernetes 1.x version (v1.30.14 or 1.30.0).
func minorOf(version string) (int, error) {
	parts := strings.Split(strings.TrimPrefix(version, "v"), ".")
	var minor int
	if len(parts) < 2 || parts[0] != "1" {
		return 0, fmt.Errorf("%q is not a Kubernetes 1.x version", version)
	}
	if _, err := fmt.Sscanf(parts[1], "%d", &minor); err != nil {
		return 0, fmt.Errorf("%q is not a Kubernetes 1.x version", version)
	}
	return minor, nil
}

// moduleDir downloads a module from the module proxy (or finds it in the module cache) and
// returns its folder. It runs outside any module, so that no go.mod or go.sum changes.
func moduleDir(modVersion string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", modVersion)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stderr = os.Stderr
	// On failure go still prints the JSON, whose Error says why.
	b, runErr := cmd.Output()
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("go mod download %s: %w (%v)", modVersion, err, runErr)
	}
	if runErr != nil || m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %s (%v)", modVersion, m.Error, runErr)
	}
	return m.Dir, nil
}

// justification excuses one kube-score check in one scope.
type justification struct {
	Scope  string `json:"scope"`
	Check  string `json:"check"`
	Reason string `json:"reason"`
}

// score runs kube-score over the inputs, scope by scope, and fails on a finding config does
// not justify and on a justification that matches no finding.
func score(kubeScore, config string, in inputs) error {
	var file struct {
		Justified []justification `json:"justified"`
	}
	b, err := os.ReadFile(config)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(b, &file); err != nil {
		return fmt.Errorf("%s: %w", config, err)
	}
	justified := map[string]map[string]bool{"operator": {}, "children": {}}
	for _, j := range file.Justified {
		if _, ok := justified[j.Scope]; !ok || j.Check == "" || strings.TrimSpace(j.Reason) == "" {
			return fmt.Errorf("%s: %+v needs a scope (operator or children), a check and a reason", config, j)
		}
		justified[j.Scope][j.Check] = true
	}

	var problems []string
	for _, scope := range []struct {
		name  string
		files []string
	}{
		{"operator", in.operator},
		{"children", in.children},
	} {
		findings, err := kubeScoreFindings(kubeScore, scope.files)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, f := range findings {
			seen[f.check] = true
			if !justified[scope.name][f.check] {
				problems = append(problems, fmt.Sprintf("%s: %s", scope.name, f))
			}
		}
		for check := range justified[scope.name] {
			if !seen[check] {
				problems = append(problems, fmt.Sprintf("%s: %s is justified in %s but kube-score no longer finds it; remove it", scope.name, check, config))
			}
		}
		fmt.Printf("manifestlint: %s: %d files scored, %d findings, all justified in %s unless listed below\n", scope.name, len(scope.files), len(findings), config)
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("%d unjustified findings or stale justifications (fix the manifest, or justify the check in %s):\n  %s",
			len(problems), config, strings.Join(problems, "\n  "))
	}
	return nil
}

// finding is one check kube-score graded below "all OK" for one object.
type finding struct {
	check, object, grade, comment string
}

func (f finding) String() string {
	return fmt.Sprintf("%s %s on %s: %s", f.grade, f.check, f.object, f.comment)
}

// scoredKinds are the kinds kube-score scores; it passes over the others in silence.
var scoredKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "Service": true, "Ingress": true,
	"NetworkPolicy": true, "PodDisruptionBudget": true, "HorizontalPodAutoscaler": true, "CronJob": true, "Pod": true}

// kubeScoreFindings runs kube-score over each file and returns its findings. Each file is
// scored alone, since kube-score merges objects of one name across files, and each must yield
// one scored object per document of a kind kube-score scores: a kind or a file dropped from
// the run fails it, so that a broken run can never pass as a clean one.
func kubeScoreFindings(kubeScore string, files []string) ([]finding, error) {
	var findings []finding
	for _, f := range files {
		want, err := kindsIn([]string{f})
		if err != nil {
			return nil, err
		}
		scored, err := kubeScoreFile(kubeScore, f, &findings)
		if err != nil {
			return nil, err
		}
		n := 0
		for _, k := range want {
			if scoredKinds[k.kind] {
				n++
			}
		}
		if scored != n {
			return nil, fmt.Errorf("kube-score scored %d objects of %s, which holds %d of the kinds it scores", scored, f, n)
		}
	}
	return findings, nil
}

// kubeScoreFile runs kube-score over one file, appends its findings and returns how many
// objects it scored.
func kubeScoreFile(kubeScore, file string, findings *[]finding) (int, error) {
	cmd := exec.Command(kubeScore, "score", "--output-format", "json", file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// kube-score exits 1 when it finds a critical problem; the JSON says which.
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || stdout.Len() == 0 {
			return 0, fmt.Errorf("kube-score: %w: %s", err, stderr.String())
		}
	}
	var objects []struct {
		ObjectName string `json:"object_name"`
		Checks     []struct {
			Check struct {
				ID string `json:"id"`
			} `json:"check"`
			Grade    int  `json:"grade"`
			Skipped  bool `json:"skipped"`
			Comments []struct {
				Summary string `json:"summary"`
			} `json:"comments"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &objects); err != nil {
		return 0, fmt.Errorf("kube-score's output for %s: %w", file, err)
	}
	// kube-score's grades: 1 critical, 5 warning, 7 almost OK, 10 all OK.
	grades := map[int]string{1: "CRITICAL", 5: "WARNING", 7: "ALMOST-OK"}
	for _, o := range objects {
		for _, c := range o.Checks {
			if c.Skipped || c.Grade >= 10 {
				continue
			}
			var summaries []string
			for _, cm := range c.Comments {
				summaries = append(summaries, cm.Summary)
			}
			*findings = append(*findings, finding{
				check: c.Check.ID, object: o.ObjectName,
				grade: grades[c.Grade], comment: strings.Join(summaries, "; "),
			})
		}
	}
	return len(objects), nil
}

// writeCSVDeployments writes each Deployment of the CSV's install strategy as OLM creates it.
func writeCSVDeployments(path, csvPath string) error {
	b, err := os.ReadFile(csvPath)
	if err != nil {
		return err
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := yaml.Unmarshal(b, csv); err != nil {
		return err
	}
	docs := make([]any, 0, len(csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs))
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		docs = append(docs, &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: "myapp-operator-system", Labels: d.Label},
			Spec:       d.Spec,
		})
	}
	if len(docs) == 0 {
		return fmt.Errorf("%s has no Deployment", csvPath)
	}
	return writeYAML(path, docs)
}

// writeChildren writes the children the operator builds for each MyApp, one file per MyApp,
// and returns the files.
func writeChildren(out string, apps []*examplev1.MyApp) ([]string, error) {
	files := make([]string, 0, len(apps))
	for _, app := range apps {
		app.TypeMeta = metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "MyApp"}
		app.UID = types.UID("00000000-0000-0000-0000-000000000001")
		children, err := testutil.Children(app, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", app.Name, err)
		}
		docs := make([]any, 0, len(children))
		for _, ch := range children {
			docs = append(docs, withoutTemplateHash(ch.Config))
		}
		path := filepath.Join(out, "children-"+app.Name+".yaml")
		if err := writeYAML(path, docs); err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	return files, nil
}

// withoutTemplateHash is a Service that selects pods by their pod-template-hash (a canary's
// stable Service) without that key: the deployment controller puts the hash on the pods of a
// ReplicaSet, and kube-score matches a Service's selector against the Deployment's template,
// which never carries it. The rest of the selector is still matched. Other objects are as given.
func withoutTemplateHash(cfg any) any {
	svc, ok := cfg.(*corev1ac.ServiceApplyConfiguration)
	if !ok || svc.Spec == nil {
		return cfg
	}
	if _, ok := svc.Spec.Selector[appsv1.DefaultDeploymentUniqueLabelKey]; !ok {
		return cfg
	}
	c, spec := *svc, *svc.Spec
	spec.Selector = maps.Clone(spec.Selector)
	delete(spec.Selector, appsv1.DefaultDeploymentUniqueLabelKey)
	c.Spec = &spec
	return &c
}

func writeYAML(path string, docs []any) error {
	var all []byte
	for _, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return err
		}
		all = append(all, []byte("---\n")...)
		all = append(all, b...)
	}
	return os.WriteFile(path, all, 0o644)
}
