package v1_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// The API server does not enforce an integer's format: a field typed int32 in Go admits any
// integer unless the schema bounds it, and one stored object that the operator cannot decode
// stops its cache from listing every MyApp. These tests walk the generated CRD, so a field
// added later is covered without a new case.

// intPath is the JSON path of an integer in the MyApp schema: property names, "[]" for a
// list's item and "{}" for a map's value.
type intPath struct {
	segments []string
	node     apiextensionsv1.JSONSchemaProps
}

func (p intPath) String() string { return strings.Join(p.segments, ".") }

// mapKeyFiller is the key under which a map's value is set: a key every map of the spec
// admits (resource maps admit only resource names).
const mapKeyFiller = "cpu"

// requiredFillers are values for required properties the walk meets beside an integer. A
// required property missing here fails the test, naming it, so that a new field gets one.
var requiredFillers = map[string]any{
	"image":             "nginx",
	"topologyKey":       "zone",
	"whenUnsatisfiable": "DoNotSchedule",
	"maxSkew":           int64(1),
	"weight":            int64(1),
	"preference":        map[string]any{},
	"podAffinityTerm":   map[string]any{"topologyKey": "zone"},
	"nodeSelectorTerms": []any{map[string]any{}},
	"type":              "RuntimeDefault",
	"command":           []any{"true"},
	"key":               "k",
	"operator":          "Exists",
	"name":              "x",
	"value":             "v",
	"resource":          "limits.memory",
	"path":              "p",
	"secretName":        "s",
	"content":           "c",
}

// fillersAt are required fillers for one object of the schema, by its path, where the
// filler of that name in requiredFillers does not fit: a file's path is absolute.
var fillersAt = map[string]map[string]any{
	"files.[]":               {"path": "/p"},
	"volumes.[].downwardAPI": {"items": []any{map[string]any{"path": "p", "fieldRef": map[string]any{"fieldPath": "metadata.name"}}}},
	"volumes.[].projected.sources.[].downwardAPI": {"items": []any{map[string]any{"path": "p", "fieldRef": map[string]any{"fieldPath": "metadata.name"}}}},
	"volumes.[].projected":                        {"sources": []any{map[string]any{"configMap": map[string]any{"name": "c"}}}},
	// An autoscaler's policy: its type is Pods or Percent, its value and period integers.
	"autoScaling.behavior.scaleUp.policies.[]":   {"type": "Pods", "value": int64(1), "periodSeconds": int64(15)},
	"autoScaling.behavior.scaleDown.policies.[]": {"type": "Pods", "value": int64(1), "periodSeconds": int64(15)},
	// A canary's metric check: a query and a condition of an operator and a number.
	"canary.analysis.metrics.[]": {"name": "x", "query": "up", "condition": map[string]any{"operator": ">", "value": "0"}},
	// A canary has steps: one weight.
	"canary": {"steps": []any{map[string]any{"setWeight": int64(10)}}},
}

// objectFillers complete an object of the schema, by its path, with what it needs beside the
// integer for admission to judge the integer alone, required or not: a downward API file
// needs one of its two sources.
var objectFillers = map[string]func(obj map[string]any){
	"volumes.[].downwardAPI.items.[]":                      downwardAPIFile,
	"volumes.[].projected.sources.[].downwardAPI.items.[]": downwardAPIFile,
	// Only a sidecar has probes.
	"initContainers.[]": func(obj map[string]any) { obj["restartPolicy"] = "Always" },
}

// downwardAPIFile gives a downward API file a field of the pod, unless it has a resource.
func downwardAPIFile(obj map[string]any) {
	if _, set := obj["resourceFieldRef"]; !set {
		obj["fieldRef"] = map[string]any{"fieldPath": "metadata.name"}
	}
}

// siblingFillers are what the object holding an integer needs beside it for admission to
// judge the integer alone: Kubernetes accepts tolerationSeconds only with the NoExecute
// effect, for example.
var siblingFillers = map[string]map[string]any{
	"tolerationSeconds": {"operator": "Exists", "effect": "NoExecute"},
}

// probeHandlers are the handlers of a Probe, of which exactly one is set.
var probeHandlers = []string{"httpGet", "tcpSocket", "grpc", "exec"}

func myAppSchema(t *testing.T) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "example.com_myapps.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		t.Fatal(err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1" {
			return v.Schema.OpenAPIV3Schema.Properties["spec"]
		}
	}
	t.Fatal("no v1 in the CRD")
	return apiextensionsv1.JSONSchemaProps{}
}

// integerPaths lists every integer of the schema under spec, and every int-or-string.
func integerPaths(node apiextensionsv1.JSONSchemaProps, at []string) []intPath {
	var out []intPath
	if node.Type == "integer" || node.XIntOrString {
		out = append(out, intPath{segments: slices.Clone(at), node: node})
	}
	for name, child := range node.Properties {
		out = append(out, integerPaths(child, append(slices.Clone(at), name))...)
	}
	if node.Items != nil && node.Items.Schema != nil {
		out = append(out, integerPaths(*node.Items.Schema, append(slices.Clone(at), "[]"))...)
	}
	if node.AdditionalProperties != nil && node.AdditionalProperties.Schema != nil {
		out = append(out, integerPaths(*node.AdditionalProperties.Schema, append(slices.Clone(at), "{}"))...)
	}
	slices.SortFunc(out, func(a, b intPath) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// specWith builds the smallest spec that sets value at path, filling in what the schema
// requires around it.
func specWith(t *testing.T, root apiextensionsv1.JSONSchemaProps, path []string, value any) map[string]any {
	t.Helper()
	var build func(node apiextensionsv1.JSONSchemaProps, rest []string) any
	build = func(node apiextensionsv1.JSONSchemaProps, rest []string) any {
		if len(rest) == 0 {
			return value
		}
		switch rest[0] {
		case "[]":
			return []any{build(*node.Items.Schema, rest[1:])}
		case "{}":
			return map[string]any{mapKeyFiller: build(*node.AdditionalProperties.Schema, rest[1:])}
		}
		obj := map[string]any{rest[0]: build(node.Properties[rest[0]], rest[1:])}
		if len(rest) == 1 {
			for k, v := range siblingFillers[rest[0]] {
				obj[k] = v
			}
		}
		if fill, ok := objectFillers[strings.Join(path[:len(path)-len(rest)], ".")]; ok {
			fill(obj)
		}
		for _, req := range node.Required {
			if _, set := obj[req]; set {
				continue
			}
			filler, ok := fillersAt[strings.Join(path[:len(path)-len(rest)], ".")][req]
			if !ok {
				filler, ok = requiredFillers[req]
			}
			if !ok {
				t.Fatalf("no filler for the required property %q beside %s: add one to requiredFillers", req, strings.Join(path, "."))
			}
			obj[req] = filler
		}
		if _, isProbe := node.Properties["successThreshold"]; isProbe && !slices.ContainsFunc(probeHandlers, func(h string) bool { _, set := obj[h]; return set }) {
			tcp := map[string]any{}
			if slices.Contains(node.Properties["tcpSocket"].Required, "port") {
				tcp["port"] = 8080 // a sidecar's probe names its port
			}
			obj["tcpSocket"] = tcp
		}
		return obj
	}
	spec := build(root, path).(map[string]any)
	if _, set := spec["image"]; !set {
		spec["image"] = "nginx"
	}
	return spec
}

// extremes are the integers tried where the schema sets no bound: past int32, at and past
// int64, and far past both.
var extremes = []string{"2147483648", "9223372036854775807", "9223372036854775808", "100000000000000000000"}

// candidates are the values tried at an integer: the schema's bounds, or extremes where it
// sets none.
func candidates(node apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	if node.Maximum != nil {
		out = append(out, fmt.Sprintf("%.0f", *node.Maximum))
	} else {
		out = append(out, extremes...)
	}
	if node.Minimum != nil {
		out = append(out, fmt.Sprintf("%.0f", *node.Minimum))
	} else {
		for _, e := range extremes {
			out = append(out, "-"+e)
		}
	}
	return out
}

// baseline is a small value within the schema's bounds.
func baseline(node apiextensionsv1.JSONSchemaProps) int64 {
	v := int64(1)
	if node.Minimum != nil && *node.Minimum > 1 {
		v = int64(*node.Minimum)
	}
	return v
}

func createSpec(ctx context.Context, name string, spec map[string]any) error {
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "MyApp"})
	obj.SetNamespace("default")
	obj.SetName(name)
	return k8s.Create(ctx, obj, client.FieldValidation("Strict"))
}

// TestEveryStoredIntegerDecodes: at every integer of the schema, the largest and smallest
// value the schema admits is either refused at admission or stored in a form the operator
// decodes, through the same client and codec it lists MyApps with.
func TestEveryStoredIntegerDecodes(t *testing.T) {
	ctx := context.Background()
	root := myAppSchema(t)
	paths := integerPaths(root, nil)
	if len(paths) < 10 {
		t.Fatalf("found only %d integers in the schema: the walk is broken", len(paths))
	}
	for i, p := range paths {
		t.Run(p.String(), func(t *testing.T) {
			name := fmt.Sprintf("int-bound-%d", i)
			// A small value is accepted: the spec built around the integer is valid, so a
			// refusal below is the value's.
			if err := createSpec(ctx, name, specWith(t, root, p.segments, baseline(p.node))); err != nil {
				t.Fatalf("the spec around %s is refused with a small value: %v", p, err)
			}
			deleteMyApp(ctx, t, name)
			for _, v := range candidates(p.node) {
				n, _ := new(big.Int).SetString(v, 10)
				err := createSpec(ctx, name, specWith(t, root, p.segments, json.Number(n.String())))
				if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", v, err)
				}
				got := &examplev1.MyApp{}
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, got); err != nil {
					t.Errorf("%s = %s is stored and the operator cannot decode it: %v", p, v, err)
				}
				deleteMyApp(ctx, t, name)
			}
		})
	}
}

func deleteMyApp(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "MyApp"})
	obj.SetNamespace("default")
	obj.SetName(name)
	if err := k8s.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

// TestAPIServerChecksNoIntOrStringRange: the API server checks no range on an int-or-string,
// whatever its Go type holds, so the schema must bound it; it checks an integer's int32
// format on this version only (earlier versions the bundle allows ignore the format), so
// every int32 field carries a maximum too.
func TestAPIServerChecksNoIntOrStringRange(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	crd := &unstructured.Unstructured{}
	g.Expect(yaml.Unmarshal([]byte(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: formatprobes.bounds.example.com}
spec:
  group: bounds.example.com
  names: {kind: FormatProbe, plural: formatprobes, listKind: FormatProbeList, singular: formatprobe}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              count: {type: integer, format: int32}
              surge: {x-kubernetes-int-or-string: true}
`), &crd.Object)).To(Succeed())
	g.Expect(k8s.Create(ctx, crd)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), crd) })

	// probe dry-runs an object of the new kind, once the API server serves it.
	probe := func(name string, spec map[string]any) error {
		var err error
		g.Eventually(func() bool {
			obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
			obj.SetGroupVersionKind(schema.GroupVersionKind{Group: "bounds.example.com", Version: "v1", Kind: "FormatProbe"})
			obj.SetNamespace("default")
			obj.SetName(name)
			err = k8s.Create(ctx, obj, client.DryRunAll)
			return !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err)
		}).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(BeTrue())
		return err
	}
	if err := probe("surge", map[string]any{"surge": json.Number("2147483648")}); err != nil {
		t.Errorf("an int-or-string past int32 is refused without a bound in the schema: %v", err)
	}
	if err := probe("count", map[string]any{"count": json.Number("2147483648")}); !apierrors.IsInvalid(err) {
		t.Errorf("an int32 integer past int32 is not refused by its format on this API server: %v", err)
	}
}
