package bundle

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/blang/semver/v4"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"
)

// TestOperatorHubMinKubeVersionHoldsForCEL checks the minimum Kubernetes version the CSV
// claims (minKubeVersion, which make check-operatorhub validates against) against the CRD's
// CEL validation rules. An API server accepts a new rule only if it compiles with the CEL
// libraries of its minimum compatibility version, one minor below its own
// (k8s.io/apiserver/pkg/cel/environment: DefaultCompatibilityVersion is the effective
// version's MinCompatibilityVersion), so every rule must compile with the libraries of
// minKubeVersion - 1. Today the quantity library (introduced at 1.28) sets the floor at 1.29.
func TestOperatorHubMinKubeVersionHoldsForCEL(t *testing.T) {
	minKube, err := semver.Parse(readCSV(t).Spec.MinKubeVersion)
	if err != nil || minKube.Major != 1 || minKube.Minor < 1 {
		t.Fatalf("spec.minKubeVersion %q is not a Kubernetes 1.x version: %v", readCSV(t).Spec.MinKubeVersion, err)
	}
	compat := version.MajorMinor(1, uint(minKube.Minor-1))
	envSet := environment.MustBaseEnvSet(compat)

	files, err := filepath.Glob(filepath.Join(bundleDir, "manifests", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rules := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, crd); err != nil || crd.Kind != "CustomResourceDefinition" {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			internal := &apiextensionsinternal.JSONSchemaProps{}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
				t.Fatalf("%s %s: %v", crd.Name, v.Name, err)
			}
			s, err := schema.NewStructural(internal)
			if err != nil {
				t.Fatalf("%s %s: not a structural schema: %v", crd.Name, v.Name, err)
			}
			rules += compileRules(t, crd.Name+"/"+v.Name, s, true, envSet, compat)
		}
	}
	if rules == 0 {
		t.Fatal("found no CEL validation rule in the bundle's CRDs: nothing was checked")
	}
	t.Logf("%d CEL rules compile with the libraries of Kubernetes %s (minKubeVersion %s)", rules, compat, minKube)
}

// typeNames numbers the CEL type of each schema with rules: the API server gives each its own
// name too, as types of one name would clash.
var typeNames atomic.Int64

// compileRules compiles the x-kubernetes-validations rules of s and of every schema below it
// and returns how many there were.
func compileRules(t *testing.T, path string, s *schema.Structural, root bool, envSet *environment.EnvSet, compat *version.Version) int {
	t.Helper()
	if s == nil {
		return 0
	}
	n := 0
	if root {
		// As the API server does: apiVersion, kind, metadata.name and metadata.generateName
		// are visible to rules on the root.
		s = model.WithTypeAndObjectMeta(s)
	}
	if len(s.XValidations) > 0 {
		declType := model.SchemaDeclType(s, root)
		if declType == nil {
			t.Fatalf("%s: no CEL type for the schema", path)
		}
		results, err := cel.Compile(s, declType.MaybeAssignTypeName("self"+strconv.FormatInt(typeNames.Add(1), 10)), celconfig.PerCallLimit, envSet, cel.NewExpressionsEnvLoader())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for i, r := range results {
			n++
			if r.Error != nil {
				t.Errorf("%s: rule %q does not compile on Kubernetes %s's CEL (the minKubeVersion claim is too low): %s",
					path, s.XValidations[i].Rule, compat, r.Error.Detail)
			}
		}
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p := s.Properties[k]
		n += compileRules(t, path+"."+k, &p, false, envSet, compat)
	}
	n += compileRules(t, path+"[*]", s.Items, false, envSet, compat)
	if s.AdditionalProperties != nil {
		n += compileRules(t, path+"{*}", s.AdditionalProperties.Structural, false, envSet, compat)
	}
	return n
}
