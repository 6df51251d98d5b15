package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The JSON schemas kubeconform validates against, written offline: kubeconform reads them by
// the name its schema-location template gives (kindSchemaFile), one file per kind, strict
// (no field the API does not know). They come from the OpenAPI (v2) document of the
// Kubernetes source the control plane is built from, and from the MyApp CRD.

// kindSchemaFile is the file kubeconform's template {{ .ResourceKind }}{{ .KindSuffix }}.json
// names for a kind: the kind in lower case, the first label of the group, the version.
func kindSchemaFile(group, version, kind string) string {
	suffix := ""
	if group != "" {
		suffix = "-" + strings.ToLower(strings.Split(group, ".")[0])
	}
	return strings.ToLower(kind) + suffix + "-" + strings.ToLower(version) + ".json"
}

// writeKubernetesSchemas writes a strict schema for every kind of the OpenAPI document at
// swaggerPath that kinds names (group/version/kind, group empty for the core group).
func writeKubernetesSchemas(dir, swaggerPath string, kinds []string) error {
	b, err := os.ReadFile(swaggerPath)
	if err != nil {
		return err
	}
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", swaggerPath, err)
	}
	byKind := map[string]string{}
	for name, def := range doc.Definitions {
		gvks, _ := def["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			m, _ := g.(map[string]any)
			byKind[fmt.Sprintf("%s/%s/%s", m["group"], m["version"], m["kind"])] = name
		}
	}
	for _, k := range kinds {
		name, ok := byKind[k]
		if !ok {
			return fmt.Errorf("%s defines no kind %s", swaggerPath, k)
		}
		// The definitions the kind reaches, each made strict.
		reached := map[string]any{}
		var walk func(string)
		walk = func(n string) {
			if _, done := reached[n]; done {
				return
			}
			def, ok := doc.Definitions[n]
			if !ok {
				return
			}
			reached[n] = nil
			reached[n] = strict(n, def, walk)
		}
		walk(name)
		parts := strings.SplitN(k, "/", 3)
		schema := map[string]any{
			"$schema":     "http://json-schema.org/schema#",
			"$ref":        "#/definitions/" + name,
			"definitions": reached,
		}
		if err := writeJSON(filepath.Join(dir, kindSchemaFile(parts[0], parts[1], parts[2])), schema); err != nil {
			return err
		}
	}
	return nil
}

// strict rewrites one OpenAPI schema as JSON schema: objects with properties refuse unknown
// fields, int-or-string and quantities take a number too (YAML writes cpu: 1), and every
// field may be null, as the API server decodes a null as unset. visit is called with the name
// of every definition it refers to.
func strict(name string, s map[string]any, visit func(string)) map[string]any {
	switch {
	case s["format"] == "int-or-string" || name == "io.k8s.apimachinery.pkg.util.intstr.IntOrString":
		return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}, map[string]any{"type": "null"}}}
	case name == "io.k8s.apimachinery.pkg.api.resource.Quantity":
		return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}, map[string]any{"type": "null"}}}
	}
	out := map[string]any{}
	for k, v := range s {
		switch k {
		case "$ref":
			ref := strings.TrimPrefix(v.(string), "#/definitions/")
			visit(ref)
			out[k] = "#/definitions/" + ref
		case "properties":
			props := map[string]any{}
			for p, ps := range v.(map[string]any) {
				props[p] = strict("", ps.(map[string]any), visit)
			}
			out[k] = props
		case "items":
			out[k] = strict("", v.(map[string]any), visit)
		case "additionalProperties":
			if m, ok := v.(map[string]any); ok {
				out[k] = strict("", m, visit)
			} else {
				out[k] = v
			}
		case "allOf", "oneOf", "anyOf":
			var list []any
			for _, e := range v.([]any) {
				list = append(list, strict("", e.(map[string]any), visit))
			}
			out[k] = list
		case "type":
			out[k] = []any{v, "null"}
		case "format", "x-kubernetes-group-version-kind":
			// Formats are the API server's to check; kubeconform would check only some.
		default:
			out[k] = v
		}
	}
	if _, hasProps := s["properties"]; hasProps {
		if _, open := s["additionalProperties"]; !open {
			out["additionalProperties"] = false
		}
	}
	return out
}

// writeCRDSchemas writes a strict schema for every version of the CRD at crdPath, and
// returns the CRD's group.
func writeCRDSchemas(dir, crdPath string) (string, error) {
	b, err := os.ReadFile(crdPath)
	if err != nil {
		return "", err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(b, crd); err != nil {
		return "", fmt.Errorf("%s: %w", crdPath, err)
	}
	for _, v := range crd.Spec.Versions {
		raw, err := json.Marshal(v.Schema.OpenAPIV3Schema)
		if err != nil {
			return "", err
		}
		var s map[string]any
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		// apiVersion, kind and metadata are the API server's: the CRD's schema leaves
		// metadata open.
		schema := crdStrict(s)
		schema["$schema"] = "http://json-schema.org/schema#"
		if err := writeJSON(filepath.Join(dir, kindSchemaFile(crd.Spec.Group, v.Name, crd.Spec.Names.Kind)), schema); err != nil {
			return "", err
		}
	}
	return crd.Spec.Group, nil
}

// crdStrict rewrites a CRD's structural schema as JSON schema: objects with properties
// refuse unknown fields unless they preserve them, and int-or-string takes either.
func crdStrict(s map[string]any) map[string]any {
	if s["x-kubernetes-int-or-string"] == true {
		return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
	}
	out := map[string]any{}
	for k, v := range s {
		switch k {
		case "properties":
			props := map[string]any{}
			for p, ps := range v.(map[string]any) {
				props[p] = crdStrict(ps.(map[string]any))
			}
			out[k] = props
		case "items":
			out[k] = crdStrict(v.(map[string]any))
		case "additionalProperties":
			if m, ok := v.(map[string]any); ok {
				out[k] = crdStrict(m)
			} else {
				out[k] = v
			}
		case "x-kubernetes-validations", "format":
			// CEL and formats are the API server's to check.
		default:
			out[k] = v
		}
	}
	if _, hasProps := s["properties"]; hasProps && s["x-kubernetes-preserve-unknown-fields"] != true {
		if _, open := s["additionalProperties"]; !open {
			out["additionalProperties"] = false
		}
	}
	return out
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// optionalGroups are the API groups of the optional dependencies whose objects the chart can
// make (the Prometheus Operator's, cert-manager's): no Kubernetes release defines them, and
// kubeconform skips their kinds.
var optionalGroups = map[string]bool{"monitoring.coreos.com": true, "cert-manager.io": true}

// release is the OpenAPI document of one Kubernetes release (version names it) and the
// files checked against it.
type release struct {
	version, swagger string
	files            []string
}

// conform checks each release's files with kubeconform, against strict schemas written from
// the release's OpenAPI document and the CRDs (the MyApp's, and the Gateway API's HTTPRoute
// the operator makes).
func conform(kubeconform string, crds []string, out string, releases []release) error {
	for _, r := range releases {
		if err := conformTo(kubeconform, crds, filepath.Join(out, "schemas-"+r.version), r); err != nil {
			return err
		}
	}
	return nil
}

func conformTo(kubeconform string, crds []string, schemas string, r release) error {
	kinds, err := kindsIn(r.files)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(schemas, 0o755); err != nil {
		return err
	}
	crdGroups := map[string]bool{}
	for _, crd := range crds {
		group, err := writeCRDSchemas(schemas, crd)
		if err != nil {
			return err
		}
		crdGroups[group] = true
	}
	seen := map[gvk]bool{}
	var builtIn, skipped []string
	for _, k := range kinds {
		switch {
		case seen[k] || crdGroups[k.group]:
		case optionalGroups[k.group]:
			skipped = append(skipped, k.kind)
		default:
			builtIn = append(builtIn, k.String())
		}
		seen[k] = true
	}
	if err := writeKubernetesSchemas(schemas, r.swagger, builtIn); err != nil {
		return err
	}
	args := []string{"-strict", "-summary", "-schema-location", filepath.Join(schemas, "{{ .ResourceKind }}{{ .KindSuffix }}.json")}
	if len(skipped) > 0 {
		args = append(args, "-skip", strings.Join(skipped, ","))
	}
	fmt.Printf("kubeconform, Kubernetes %s: ", r.version)
	cmd := exec.Command(kubeconform, append(args, r.files...)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kubeconform found objects the API of Kubernetes %s would refuse (%d kinds, %d files): %w", r.version, len(seen), len(r.files), err)
	}
	return nil
}

// gvk is an object's group, version and kind.
type gvk struct{ group, version, kind string }

func (k gvk) String() string { return k.group + "/" + k.version + "/" + k.kind }

// kindsIn lists the kind of every object in files, one entry per object.
func kindsIn(files []string) ([]gvk, error) {
	var kinds []gvk
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, doc := range strings.Split(string(b), "\n---") {
			var tm struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if tm.Kind == "" {
				continue
			}
			group, version := "", tm.APIVersion
			if i := strings.Index(tm.APIVersion, "/"); i >= 0 {
				group, version = tm.APIVersion[:i], tm.APIVersion[i+1:]
			}
			kinds = append(kinds, gvk{group, version, tm.Kind})
		}
	}
	return kinds, nil
}
