package v1_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/example/myapp-operator/internal/testutil"
)

// The generator of MyApp specs for the "accepted means makeable" property. It reads the
// MyApp's schema from the generated CRD, so every field the schema has, including a field
// added later, is one the generator sets; the API server, not the generator, decides which
// of the specs it makes are valid.

// schemaNode is the part of an OpenAPI v3 schema the generator reads.
type schemaNode struct {
	Type                 string                 `json:"type"`
	Format               string                 `json:"format"`
	Properties           map[string]*schemaNode `json:"properties"`
	Required             []string               `json:"required"`
	Items                *schemaNode            `json:"items"`
	AdditionalProperties *schemaNode            `json:"additionalProperties"`
	Enum                 []json.RawMessage      `json:"enum"`
	Minimum              *float64               `json:"minimum"`
	Maximum              *float64               `json:"maximum"`
	MaxLength            *int64                 `json:"maxLength"`
	IntOrString          bool                   `json:"x-kubernetes-int-or-string"`
	PreserveUnknown      bool                   `json:"x-kubernetes-preserve-unknown-fields"`
}

// UnmarshalJSON accepts `additionalProperties: true`, which allows any value, as a schema
// that allows any value.
func (s *schemaNode) UnmarshalJSON(data []byte) error {
	if b := bytes.TrimSpace(data); bytes.Equal(b, []byte("true")) || bytes.Equal(b, []byte("false")) {
		*s = schemaNode{PreserveUnknown: true}
		return nil
	}
	type plain schemaNode
	return json.Unmarshal(data, (*plain)(s))
}

// loadSpecSchema reads the schema of spec from the generated CRD.
func loadSpecSchema() (*schemaNode, error) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "example.com_myapps.yaml"))
	if err != nil {
		return nil, err
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema schemaNode `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return nil, err
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1" {
			if spec := v.Schema.OpenAPIV3Schema.Properties["spec"]; spec != nil {
				return spec, nil
			}
		}
	}
	return nil, fmt.Errorf("the CRD has no v1 schema with a spec")
}

// step is one step of a path into the schema: a property, any item of a list, or any value
// of a map.
type step struct {
	property string // "" for an item or a map value
	item     bool
}

// schemaPath is where a field sits in the schema, with the schema of that field.
type schemaPath struct {
	steps  []step
	schema *schemaNode
}

func (p schemaPath) String() string {
	var b strings.Builder
	for _, s := range p.steps {
		switch {
		case s.property != "":
			b.WriteString("." + s.property)
		case s.item:
			b.WriteString("[]")
		default:
			b.WriteString("{}")
		}
	}
	return b.String()
}

// schemaPaths lists every field of the schema, parents before children, in a stable order.
func schemaPaths(root *schemaNode) []schemaPath {
	var out []schemaPath
	var walk func(prefix []step, s *schemaNode)
	walk = func(prefix []step, s *schemaNode) {
		next := func(st step, child *schemaNode) {
			p := append(append([]step{}, prefix...), st)
			out = append(out, schemaPath{steps: p, schema: child})
			walk(p, child)
		}
		for _, name := range sortedKeys(s.Properties) {
			next(step{property: name}, s.Properties[name])
		}
		if s.Items != nil {
			next(step{item: true}, s.Items)
		}
		if s.AdditionalProperties != nil {
			next(step{}, s.AdditionalProperties)
		}
	}
	walk(nil, root)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// chooser makes the generator's choices: a seeded random source in the property test, the
// fuzzer's bytes in the fuzz target.
type chooser interface {
	// intn returns a number in [0, n); n > 0.
	intn(n int) int
}

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.IntN(n) }

// byteChooser takes its choices from bytes; once they run out, every choice is the first.
type byteChooser struct{ data []byte }

func (c *byteChooser) intn(n int) int {
	if n <= 1 {
		return 0
	}
	v := 0
	for size := 1; size < n; size <<= 8 {
		if len(c.data) == 0 {
			break
		}
		v = v<<8 | int(c.data[0])
		c.data = c.data[1:]
	}
	return v % n
}

// Pools of values that sit at the edges of what Kubernetes validates.
var (
	interestingStrings = []string{
		"", "_", ".", "..", "-", "-1", "0", "1", "0.5", "1.5", "1m", "500m", "1Gi", "64Mi", "2Mi", "1e3", "-0",
		"0%", "25%", "100%", "101%", "a", "A", "a_b", "a.b", "a-b", "A-B", "-a", "a-", "1a", "x y", " ", "\t",
		"Localhost", "RuntimeDefault", "Unconfined", "Exists", "Equal", "DoesNotExist", "In", "NotIn", "Gt", "Lt",
		"NoSchedule", "PreferNoSchedule", "NoExecute", "DoNotSchedule", "ScheduleAnyway", "Never", "Honor", "Ignore",
		"TCP", "UDP", "SCTP", "HTTP", "HTTPS", "http", "Always", "IfNotPresent", "ClusterIP", "NodePort", "LoadBalancer",
		"nginx", "web", "X-Probe", "X_Probe", "Host", "/", "/healthz", "healthz", "localhost", "10.0.0.1", "::1",
		"kubernetes.io/hostname", "topology.kubernetes.io/zone", "example.com/tier", "nvidia.com/gpu", "hugepages-2Mi",
		"CAP_SYS_ADMIN", "NET_BIND_SERVICE", "ALL", "profiles/p.json", "../p.json", "/abs/p.json", "$(A)", "$$(A)",
		"shop.example.com", "*.example.com", "a.*.com", "/shop/", "/a//b", "/a/../b", "/%2f", "/.", "/...",
		"grüße, 世界 🚀", "\u00e9", "a\nb", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253),
		strings.Repeat("a", 254), strings.Repeat("x", 1024), strings.Repeat("v", 270*1024),
	}
	// plausibleStrings are accepted by most string fields of the schema.
	plausibleStrings = []string{"a", "web", "zone", "app", "1", "kubernetes.io/hostname", "topology.kubernetes.io/zone",
		"example.com/tier", "In", "Exists", "Equal", "NoSchedule", "NoExecute", "DoNotSchedule", "ScheduleAnyway",
		"RuntimeDefault", "Localhost", "profiles/p.json", "/healthz", "HTTP",
		// The downward API's paths, which a field of the pod or the container names.
		"metadata.name", "status.podIP", "metadata.labels['app']", "metadata.annotations['Example.com/x']", "limits.memory", "requests.cpu"}
	// numericStrings are what a field that holds a number or a string (quantities, percents)
	// mostly gets.
	numericStrings = []string{"0", "1", "2", "0.5", "1.5", "-1", "1m", "500m", "2000m", "1k", "2Mi", "64Mi", "1Gi",
		"1e3", "0%", "25%", "50%", "100%", "101%", "1.5%"}
	interestingKeys = []string{
		"cpu", "memory", "ephemeral-storage", "storage", "pods", "nvidia.com/gpu", "example.com/dongle",
		"hugepages-2Mi", "hugepages-1Gi", "hugepages-", "requests.cpu", "kubernetes.io/foo", "a", "A", "_", "a_b", "-a",
		"a.b", "app", "team", "example.com/tier", "example.com/", "/a", "a/b/c", "kubernetes.io/hostname",
		"kubernetes.io/os", "myapp.example.com/name", "app.kubernetes.io/name", "pod-template-hash", "..",
		"prometheus.io/scrape", strings.Repeat("k", 63), strings.Repeat("k", 64), strings.Repeat("d", 254) + "/k",
	}
	interestingInts = []int64{0, 1, -1, 2, 3, 10, 100, 101, 255, 256, 1000, 65535, 65536, 86400, 1073741824,
		2147483647, 2147483648, -2147483648, -2147483649, 9007199254740991}
)

// generator makes MyApp specs: a valid edge case of the API with a few changes at random
// fields of the schema.
type generator struct {
	c     chooser
	spec  *schemaNode
	paths []schemaPath
	// touched records each schema path the generator set or removed in the last spec.
	touched map[string]bool
}

func newGenerator(spec *schemaNode, c chooser) *generator {
	return &generator{c: c, spec: spec, paths: schemaPaths(spec)}
}

// remove is what a change returns to remove the field it was given.
type removeField struct{}

// myApp returns a MyApp name and spec: a valid edge case with one to four fields changed,
// the first of them first when given.
func (g *generator) myApp(first ...schemaPath) (string, map[string]any) {
	g.touched = map[string]bool{}
	base := testutil.ValidMyApps[g.c.intn(len(testutil.ValidMyApps))]
	var spec map[string]any
	dec := json.NewDecoder(strings.NewReader(base.Spec))
	dec.UseNumber()
	if err := dec.Decode(&spec); err != nil {
		panic(fmt.Sprintf("valid edge case %s is not JSON: %v", base.Name, err))
	}
	for n := 1 + g.c.intn(4); n > 0; n-- {
		var p schemaPath
		if len(first) > 0 {
			p, first = first[0], first[1:]
		} else {
			p = g.paths[g.c.intn(len(g.paths))]
		}
		g.touched[p.String()] = true
		if v := g.change(spec, g.spec, p.steps); v != nil {
			if m, ok := v.(map[string]any); ok {
				spec = m
			}
		}
	}
	names := []string{"gen", "a", "a0", "a-b", strings.Repeat("a", 63), "z" + strings.Repeat("9", 62)}
	return names[g.c.intn(len(names))], spec
}

// change returns v, of schema s, with the field at path changed; removeField to remove v.
func (g *generator) change(v any, s *schemaNode, path []step) any {
	if len(path) == 0 {
		return g.changeHere(v, s)
	}
	st := path[0]
	switch {
	case st.property != "":
		m, _ := v.(map[string]any)
		if m == nil {
			m = g.fresh(s, 3, false).(map[string]any)
		}
		if out := g.change(m[st.property], s.Properties[st.property], path[1:]); out == (removeField{}) {
			delete(m, st.property)
		} else {
			m[st.property] = out
		}
		return m
	case st.item:
		a, _ := v.([]any)
		i := len(a)
		if len(a) > 0 && g.c.intn(3) > 0 {
			i = g.c.intn(len(a))
		} else {
			a = append(a, g.fresh(s.Items, 3, false))
		}
		if out := g.change(a[i], s.Items, path[1:]); out == (removeField{}) {
			a = append(a[:i], a[i+1:]...)
		} else {
			a[i] = out
		}
		return a
	default:
		m, _ := v.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		key := interestingKeys[g.c.intn(len(interestingKeys))]
		if keys := sortedKeys(m); len(keys) > 0 && g.c.intn(2) == 0 {
			key = keys[g.c.intn(len(keys))]
		}
		if out := g.change(m[key], s.AdditionalProperties, path[1:]); out == (removeField{}) {
			delete(m, key)
		} else {
			m[key] = out
		}
		return m
	}
}

// changeHere returns a new value for v: removed or made afresh; a list may also get an
// item twice, so that a list whose items must differ by a key holds one key twice.
func (g *generator) changeHere(v any, s *schemaNode) any {
	if a, _ := v.([]any); s.Type == "array" && s.Items != nil {
		switch g.c.intn(4) {
		case 0:
			return removeField{}
		case 1:
			item := g.fresh(s.Items, 0, true)
			if len(a) > 0 {
				item = a[g.c.intn(len(a))]
			}
			return append(a, item, deepCopyJSON(item))
		case 2:
			return append(a, g.fresh(s.Items, 0, true))
		}
		return g.fresh(s, 0, true)
	}
	if g.c.intn(5) == 0 {
		return removeField{}
	}
	return g.fresh(s, 0, true)
}

// fresh makes a value of schema s; depth limits how deep optional fields are filled in.
// With optional, an object gets random optional fields; without, only its required ones.
func (g *generator) fresh(s *schemaNode, depth int, optional bool) any {
	switch {
	case s.IntOrString:
		switch g.c.intn(4) {
		case 0:
			return g.integer(s)
		case 1:
			return g.str()
		}
		return numericStrings[g.c.intn(len(numericStrings))]
	case len(s.Enum) > 0 && g.c.intn(5) > 0:
		var v any
		_ = json.Unmarshal(s.Enum[g.c.intn(len(s.Enum))], &v)
		return v
	}
	switch s.Type {
	case "string":
		return g.str()
	case "integer":
		return g.integer(s)
	case "number":
		return []any{json.Number("0"), json.Number("0.5"), json.Number("-1"), json.Number("1e3")}[g.c.intn(4)]
	case "boolean":
		return g.c.intn(2) == 0
	case "array":
		a := []any{}
		for n := 1 + g.c.intn(2); n > 0 && s.Items != nil; n-- {
			a = append(a, g.fresh(s.Items, depth+1, optional))
		}
		return a
	case "object":
		m := map[string]any{}
		required := map[string]bool{}
		for _, r := range s.Required {
			required[r] = true
		}
		for _, name := range sortedKeys(s.Properties) {
			if required[name] || (optional && depth < 3 && g.c.intn(4) == 0) {
				m[name] = g.fresh(s.Properties[name], depth+1, optional)
			}
		}
		if s.AdditionalProperties != nil {
			for n := g.c.intn(3); n > 0; n-- {
				m[interestingKeys[g.c.intn(len(interestingKeys))]] = g.fresh(s.AdditionalProperties, depth+1, optional)
			}
		}
		return m
	default:
		return g.str()
	}
}

func (g *generator) str() string {
	// Half the time a value most fields accept, so that the API server accepts MyApps with
	// changes deep in the schema; mostly short values, so that a long one does not hide
	// every other change.
	switch g.c.intn(8) {
	case 0, 1, 2, 3:
		return plausibleStrings[g.c.intn(len(plausibleStrings))]
	case 4:
		return interestingStrings[g.c.intn(len(interestingStrings))]
	}
	return interestingStrings[g.c.intn(len(interestingStrings)-4)]
}

func (g *generator) integer(s *schemaNode) json.Number {
	if g.c.intn(2) == 0 {
		return json.Number(fmt.Sprint([]int64{0, 1, -1, 2, 100, 101}[g.c.intn(6)]))
	}
	pool := append([]int64{}, interestingInts...)
	for _, bound := range []*float64{s.Minimum, s.Maximum} {
		if bound != nil {
			pool = append(pool, int64(*bound)-1, int64(*bound), int64(*bound)+1)
		}
	}
	return json.Number(fmt.Sprint(pool[g.c.intn(len(pool))]))
}

func deepCopyJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = deepCopyJSON(x)
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, x := range v {
			a[i] = deepCopyJSON(x)
		}
		return a
	default:
		return v
	}
}

// abbreviated is v with every long string cut, for reports.
func abbreviated(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[abbreviatedString(k)] = abbreviated(x)
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, x := range v {
			a[i] = abbreviated(x)
		}
		return a
	case string:
		return abbreviatedString(v)
	default:
		return v
	}
}

func abbreviatedString(s string) string {
	if len(s) <= 80 {
		return s
	}
	return fmt.Sprintf("%s...(%d bytes)", s[:20], len(s))
}
