// Command crdbounds gives strings of the core types the MyApp CRD embeds the length bounds
// Kubernetes itself enforces on them: go run ./hack/crdbounds CRD_FILE rewrites the file.
//
// controller-gen copies the schemas of embedded core types (tolerations, sysctls, Windows
// options, annotations) without a maxLength, and the API server estimates an unbounded string at the size
// of a whole request. A CEL rule that checks such a string's format, as Kubernetes checks it
// in the pod, then exceeds the CRD's cost budget, and the API server refuses the CRD. With
// Kubernetes' own bound on each string the rules fit. Each bound refuses only strings the API
// server would refuse in the MyApp's pods or Service, so no MyApp that can run is refused.
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// bound is a maxLength set on the schema at path: dot-separated properties under the
// version's openAPIV3Schema, where a trailing [] steps into a list's items and {} into a
// map's values.
type bound struct {
	path      string
	maxLength int64
}

var bounds = []bound{
	// A toleration key is a qualified name: a DNS subdomain prefix of at most 253
	// characters, '/', and a name of at most 63 (IsQualifiedName).
	{"spec.tolerations[].key", 253 + 1 + 63},
	// With operator Equal a toleration value is a label value (at most 63 characters);
	// with Exists it must be empty.
	{"spec.tolerations[].value", 63},
	// SysctlMaxLength of Kubernetes' pod validation. (A rule on the names' format does not
	// fit the cost budget even so: Kubernetes bounds the number of sysctls of a pod in no way.)
	{"spec.podSecurityContext.sysctls[].name", 253},
	// Windows options, as Kubernetes' pod validation bounds them: a gMSA credential spec
	// name is a DNS subdomain (at most 253 characters), a spec holds at most 64 KiB, and a
	// runAsUserName is a domain of fewer than 256 bytes, a backslash and a user of at most 104.
	{"spec.securityContext.windowsOptions.gmsaCredentialSpecName", 253},
	{"spec.securityContext.windowsOptions.gmsaCredentialSpec", 65536},
	{"spec.securityContext.windowsOptions.runAsUserName", 255 + 1 + 104},
	{"spec.podSecurityContext.windowsOptions.gmsaCredentialSpecName", 253},
	{"spec.podSecurityContext.windowsOptions.gmsaCredentialSpec", 65536},
	{"spec.podSecurityContext.windowsOptions.runAsUserName", 255 + 1 + 104},
	// One value cannot be longer than what all the annotations of an object may hold
	// (256 KiB), less what the operator keeps for its own annotation on the Service.
	{"spec.podAnnotations{}", 262144},
	{"spec.serviceAnnotations{}", 262144 - 64},
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crdbounds CRD_FILE")
		os.Exit(2)
	}
	if err := rewrite(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "crdbounds:", err)
		os.Exit(1)
	}
}

func rewrite(file string) error {
	in, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, err := apply(in)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.WriteFile(file, out, 0o644)
}

// apply sets every bound in every version of the CRD. A path that does not lead to a string
// schema is an error, so that a change of the API cannot drop a bound unnoticed.
func apply(in []byte) ([]byte, error) {
	var crd map[string]any
	if err := yaml.Unmarshal(in, &crd); err != nil {
		return nil, err
	}
	versions, _ := nested(crd, "spec", "versions").([]any)
	if len(versions) == 0 {
		return nil, fmt.Errorf("no versions")
	}
	for _, v := range versions {
		root, _ := nested(v, "schema", "openAPIV3Schema").(map[string]any)
		if root == nil {
			return nil, fmt.Errorf("a version without openAPIV3Schema")
		}
		for _, b := range bounds {
			s, err := schemaAt(root, b.path)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", b.path, err)
			}
			if s["type"] != "string" {
				return nil, fmt.Errorf("%s: a %v, not a string", b.path, s["type"])
			}
			s["maxLength"] = b.maxLength
		}
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return nil, err
	}
	// controller-gen starts the file with a document separator.
	if bytes.HasPrefix(in, []byte("---\n")) {
		out = append([]byte("---\n"), out...)
	}
	return out, nil
}

func schemaAt(root map[string]any, path string) (map[string]any, error) {
	s := root
	for _, seg := range strings.Split(path, ".") {
		name, step := seg, ""
		if n, ok := strings.CutSuffix(seg, "[]"); ok {
			name, step = n, "items"
		} else if n, ok := strings.CutSuffix(seg, "{}"); ok {
			name, step = n, "additionalProperties"
		}
		next, _ := nested(s, "properties", name).(map[string]any)
		if next == nil {
			return nil, fmt.Errorf("no property %q", name)
		}
		if step != "" {
			if next, _ = next[step].(map[string]any); next == nil {
				return nil, fmt.Errorf("%q has no %s", name, step)
			}
		}
		s = next
	}
	return s, nil
}

// nested is the field at path in v, a JSON object as sigs.k8s.io/yaml decodes it; nil when v
// is not an object or the path leads nowhere.
func nested(v any, path ...string) any {
	m, _ := v.(map[string]any)
	f, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	return f
}
