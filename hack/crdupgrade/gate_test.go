package main

import (
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

var (
	currentCRD  = filepath.Join("..", "..", "config", "crd", "bases", "example.com_myapps.yaml")
	previousCRD = filepath.Join("..", "..", "releases", "0.2.0", "manifests", "example.com_myapps.yaml")
)

func mustRead(t *testing.T, path string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd, err := readCRD(path)
	if err != nil {
		t.Fatal(err)
	}
	return crd
}

// specProps is the schema of the MyApp spec of the CRD's first version.
func specProps(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.JSONSchemaProps {
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	return &spec
}

func setSpecProps(crd *apiextensionsv1.CustomResourceDefinition, spec *apiextensionsv1.JSONSchemaProps) {
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = *spec
}

// TestGateCatchesEachRule derives, from the real current CRD, one next version per rule of OLM
// v1 and checks that the gate refuses it with that rule, on that field, even with the reviewed
// exceptions of 0.2.0 in force.
func TestGateCatchesEachRule(t *testing.T) {
	ex, err := readExceptions("from-0.2.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		mutate     func(*apiextensionsv1.CustomResourceDefinition)
		rule, path string
	}{
		{name: "stored version removed", rule: "storedVersionRemoval", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Name = "v2"
		}},
		{name: "new required field", rule: "required", path: "^.spec", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			s := specProps(c)
			s.Required = append(s.Required, "port")
			setSpecProps(c, s)
		}},
		{name: "new default", rule: "default", path: "^.spec.image", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			s := specProps(c)
			p := s.Properties["image"]
			p.Default = &apiextensionsv1.JSON{Raw: []byte(`"nginx"`)}
			s.Properties["image"] = p
			setSpecProps(c, s)
		}},
		{name: "changed default", rule: "default", path: "^.spec.replicas", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			s := specProps(c)
			p := s.Properties["replicas"]
			p.Default = &apiextensionsv1.JSON{Raw: []byte(`2`)}
			s.Properties["replicas"] = p
			setSpecProps(c, s)
		}},
		{name: "new enum restriction", rule: "enum", path: "^.spec.image", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			s := specProps(c)
			p := s.Properties["image"]
			p.Enum = []apiextensionsv1.JSON{{Raw: []byte(`"nginx"`)}}
			s.Properties["image"] = p
			setSpecProps(c, s)
		}},
		{name: "tighter maximum", rule: "maximum", path: "^.spec.port", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			s := specProps(c)
			p := s.Properties["port"]
			p.Maximum = ptr.To(*p.Maximum - 1)
			s.Properties["port"] = p
			setSpecProps(c, s)
		}},
		{name: "new maximum where there was none", rule: "maximum", path: "^.spec.replicas", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			s := specProps(c)
			p := s.Properties["replicas"]
			p.Maximum = ptr.To(100.0)
			s.Properties["replicas"] = p
			setSpecProps(c, s)
		}},
		{name: "unhandled change of a keyword the exception does not list", rule: "unhandled", path: "^.spec.image", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			s := specProps(c)
			p := s.Properties["image"]
			p.Format = "uri"
			s.Properties["image"] = p
			setSpecProps(c, s)
		}},
		{name: "tighter maxLength on an allow-listed field", rule: "maxLength", path: "^.spec.image", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			s := specProps(c)
			p := s.Properties["image"]
			p.MaxLength = ptr.To(*p.MaxLength - 1)
			s.Properties["image"] = p
			setSpecProps(c, s)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			current := mustRead(t, currentCRD)
			next := current.DeepCopy()
			tc.mutate(next)
			found, err := violations(current, next)
			if err != nil {
				t.Fatal(err)
			}
			failures, _ := gate(found, ex.Exceptions)
			for _, v := range failures {
				if v.Rule == tc.rule && (tc.path == "" || v.Property == tc.path) {
					return
				}
			}
			t.Fatalf("want a %s failure on %q, got %v", tc.rule, tc.path, failures)
		})
	}
}

// TestCurrentIsSafeWithItsUnchangedSelf: no change, nothing to report.
func TestCurrentIsSafeWithItsUnchangedSelf(t *testing.T) {
	current := mustRead(t, currentCRD)
	found, err := violations(current, current.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatalf("want no violations, got %v", found)
	}
}

// TestReleasedUpgrade is the gate of make verify: 0.2.0 -> current passes with the reviewed
// exceptions, each of which is used; without them it fails, naming the quantity type change
// OLM v1 reports.
func TestReleasedUpgrade(t *testing.T) {
	ex, err := readExceptions("from-0.2.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	found, err := violations(mustRead(t, previousCRD), mustRead(t, currentCRD))
	if err != nil {
		t.Fatal(err)
	}
	failures, stale := gate(found, ex.Exceptions)
	if len(failures) > 0 || len(stale) > 0 {
		t.Fatalf("with the reviewed exceptions: failures %v, stale %v", failures, stale)
	}
	failures, _ = gate(found, nil)
	var typeChange bool
	for _, v := range failures {
		typeChange = typeChange || (v.Rule == "type" && v.Property == "^.spec.resources.limits.cpu" &&
			strings.Contains(v.Message, `"string" -> ""`))
	}
	if !typeChange {
		t.Fatalf("without exceptions, want the type change of ^.spec.resources.limits.cpu, got %v", failures)
	}
	// An exception is exact: the same rule on another field does not cover it, and one that
	// matches nothing is reported as stale.
	moved := []exception{{Version: "v1", Property: "^.spec.resources.limits.ephemeral-storage", Rule: "type", Reason: "x"}}
	failures, stale = gate(found, moved)
	if len(failures) != len(found) || len(stale) != 1 {
		t.Fatalf("an exception on another field: want %d failures and 1 stale, got %d and %d", len(found), len(failures), len(stale))
	}
}
