package main

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// crdWith is a CRD of one version whose spec holds the given properties.
func crdWith(spec string) []byte {
	return []byte("---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n          spec:\n            properties:\n" + spec)
}

const everyBoundedString = `              tolerations:
                items:
                  properties:
                    key: {type: string}
                    value: {type: string}
              podSecurityContext:
                properties:
                  sysctls:
                    items:
                      properties:
                        name: {type: string}
                  windowsOptions:
                    properties:
                      gmsaCredentialSpecName: {type: string}
                      gmsaCredentialSpec: {type: string}
                      runAsUserName: {type: string}
              securityContext:
                properties:
                  windowsOptions:
                    properties:
                      gmsaCredentialSpecName: {type: string}
                      gmsaCredentialSpec: {type: string}
                      runAsUserName: {type: string}
              podAnnotations:
                additionalProperties: {type: string}
              serviceAnnotations:
                additionalProperties: {type: string}
`

func TestApplySetsEveryBoundAndIsStable(t *testing.T) {
	once, err := apply(crdWith(everyBoundedString))
	if err != nil {
		t.Fatal(err)
	}
	twice, err := apply(once)
	if err != nil {
		t.Fatal(err)
	}
	if string(once) != string(twice) {
		t.Errorf("a second run changed the file:\n%s\nthen\n%s", once, twice)
	}
	if !strings.HasPrefix(string(once), "---\n") {
		t.Errorf("the document separator is gone")
	}
	var crd map[string]any
	if err := yaml.Unmarshal(once, &crd); err != nil {
		t.Fatal(err)
	}
	root := nested(crd, "spec", "versions").([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
	for _, b := range bounds {
		s, err := schemaAt(root, b.path)
		if err != nil {
			t.Fatalf("%s: %v", b.path, err)
		}
		if got, ok := s["maxLength"].(float64); !ok || int64(got) != b.maxLength {
			t.Errorf("%s: maxLength %v, want %d", b.path, s["maxLength"], b.maxLength)
		}
	}
}

func TestApplyFailsWhenABoundedStringIsGone(t *testing.T) {
	for name, spec := range map[string]string{
		"no tolerations": strings.Replace(everyBoundedString, "tolerations:", "tolerationz:", 1),
		"not a string":   strings.Replace(everyBoundedString, "key: {type: string}", "key: {type: integer}", 1),
		"no items":       strings.Replace(everyBoundedString, "sysctls:\n                    items:", "sysctls:\n                    itemz:", 1),
	} {
		if _, err := apply(crdWith(spec)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
