package bundle

import (
	"encoding/base64"
	"encoding/json"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/yaml"
)

// The OperatorHub checks below are what a community-operators submission is refused for
// before any cluster sees it; `make check-operatorhub` runs them (-run TestOperatorHub) after
// operator-sdk's operatorhub and operatorframework validators.

// readCSV reads the bundle's ClusterServiceVersion.
func readCSV(t *testing.T) *operatorsv1alpha1.ClusterServiceVersion {
	t.Helper()
	return readCSVIn(t, bundleDir)
}

// readCSVIn reads the ClusterServiceVersion of the bundle in dir.
func readCSVIn(t *testing.T, dir string) *operatorsv1alpha1.ClusterServiceVersion {
	t.Helper()
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		t.Fatalf("reading the bundle: %v", err)
	}
	if b.CSV == nil {
		t.Fatal("the bundle has no ClusterServiceVersion")
	}
	return b.CSV
}

// iconMediaTypes are the media types OperatorHub shows an icon in.
var iconMediaTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/svg+xml": true}

// TestOperatorHubCSVFields checks the CSV fields OperatorHub requires and shows: a display
// name of 3 to 50 characters, a description of at least 20, a base64 icon with a media type
// that decodes, a semver version matching the CSV's name, maintainers with names and e-mail
// addresses, a provider, links with names and http(s) URLs, and a minimum Kubernetes version.
func TestOperatorHubCSVFields(t *testing.T) {
	csv := readCSV(t)
	s := csv.Spec

	if n := len([]rune(s.DisplayName)); n < 3 || n > 50 {
		t.Errorf("spec.displayName %q has %d characters; OperatorHub wants 3 to 50", s.DisplayName, n)
	}
	if n := len([]rune(strings.TrimSpace(s.Description))); n < 20 {
		t.Errorf("spec.description has %d characters; OperatorHub wants at least 20", n)
	}
	if n := len([]rune(csv.Annotations["description"])); n < 20 {
		t.Errorf("the description annotation (OperatorHub's one-line summary) has %d characters; want at least 20", n)
	}

	if len(s.Icon) == 0 {
		t.Error("spec.icon is empty; OperatorHub wants a base64 icon with its media type")
	}
	for i, icon := range s.Icon {
		if !iconMediaTypes[icon.MediaType] {
			t.Errorf("spec.icon[%d].mediatype %q is not one of image/png, image/jpeg, image/gif, image/svg+xml", i, icon.MediaType)
		}
		data, err := base64.StdEncoding.DecodeString(icon.Data)
		if err != nil || len(data) == 0 {
			t.Errorf("spec.icon[%d].base64data is not base64 data: %v", i, err)
			continue
		}
		if icon.MediaType == "image/svg+xml" && !strings.Contains(string(data), "<svg") {
			t.Errorf("spec.icon[%d] says image/svg+xml but does not decode to an SVG", i)
		}
	}

	v, err := semver.Parse(s.Version.String())
	if err != nil || s.Version.String() == "0.0.0" {
		t.Errorf("spec.version %q is not a semantic version: %v", s.Version.String(), err)
	} else if want := "myapp-operator.v" + v.String(); csv.Name != want {
		t.Errorf("the CSV is named %q; for spec.version %s OLM and OperatorHub expect %q", csv.Name, v, want)
	}

	if len(s.Maintainers) == 0 {
		t.Error("spec.maintainers is empty")
	}
	for i, m := range s.Maintainers {
		if strings.TrimSpace(m.Name) == "" {
			t.Errorf("spec.maintainers[%d] has no name", i)
		}
		if _, err := mail.ParseAddress(m.Email); err != nil {
			t.Errorf("spec.maintainers[%d].email %q is not an e-mail address: %v", i, m.Email, err)
		}
	}

	if strings.TrimSpace(s.Provider.Name) == "" {
		t.Error("spec.provider.name is empty")
	}
	if s.Provider.URL != "" && !isHTTPURL(s.Provider.URL) {
		t.Errorf("spec.provider.url %q is not an http(s) URL", s.Provider.URL)
	}

	if len(s.Links) == 0 {
		t.Error("spec.links is empty")
	}
	for i, l := range s.Links {
		if strings.TrimSpace(l.Name) == "" || !isHTTPURL(l.URL) {
			t.Errorf("spec.links[%d] = {%q, %q}: want a name and an http(s) URL", i, l.Name, l.URL)
		}
	}

	if _, err := semver.Parse(s.MinKubeVersion); err != nil {
		t.Errorf("spec.minKubeVersion %q is not a version (make check-operatorhub validates against it): %v", s.MinKubeVersion, err)
	}
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// TestOperatorHubALMExamples requires an alm-examples entry for every CRD the CSV owns (the
// console's "create" form starts from it), and every CRD in the bundle to be owned.
func TestOperatorHubALMExamples(t *testing.T) {
	csv := readCSV(t)
	var examples []struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec map[string]any `json:"spec"`
	}
	if err := json.Unmarshal([]byte(csv.Annotations["alm-examples"]), &examples); err != nil {
		t.Fatalf("the alm-examples annotation is not a JSON list of objects: %v", err)
	}
	have := map[string]bool{}
	for i, e := range examples {
		if e.Metadata.Name == "" || len(e.Spec) == 0 {
			t.Errorf("alm-examples[%d] (%s %s) has no name or no spec", i, e.APIVersion, e.Kind)
		}
		have[e.APIVersion+"/"+e.Kind] = true
	}

	owned := map[string]bool{}
	for _, crd := range csv.Spec.CustomResourceDefinitions.Owned {
		group := crd.Name[strings.Index(crd.Name, ".")+1:]
		owned[crd.Name] = true
		if !have[group+"/"+crd.Version+"/"+crd.Kind] {
			t.Errorf("the CSV owns %s (%s/%s %s) but alm-examples has no example of it", crd.Name, group, crd.Version, crd.Kind)
		}
	}
	if len(owned) == 0 {
		t.Fatal("the CSV owns no CRD")
	}

	files, err := filepath.Glob(filepath.Join(bundleDir, "manifests", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		readYAML(t, f, &obj)
		if obj.Kind == "CustomResourceDefinition" && !owned[obj.Metadata.Name] {
			t.Errorf("the bundle ships the CRD %s, which the CSV does not list as owned", obj.Metadata.Name)
		}
	}
}

// TestOperatorHubNoNetworkPolicy: the OperatorHub pipeline rejects a bundle holding a
// NetworkPolicy. config/default has them for `make deploy`; config/manifests leaves them out.
func TestOperatorHubNoNetworkPolicy(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(bundleDir, "manifests", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("listing the bundle's manifests: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		var obj struct {
			Kind string `json:"kind"`
		}
		readYAML(t, f, &obj)
		if obj.Kind == "NetworkPolicy" {
			t.Errorf("%s is a NetworkPolicy; the OperatorHub pipeline rejects bundles with one", f)
		}
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
