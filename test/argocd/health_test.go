// Package argocd tests the Argo CD resource health checks the operator ships in
// config/argocd, laid out as Argo CD's resource_customizations are: <group>/<kind>/health.lua, testdata/*.yaml and a
// health_test.yaml naming the health expected of each fixture.
package argocd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
	"sigs.k8s.io/yaml"
)

// The health statuses a script may return. Argo CD also knows Missing and Unknown, but it
// sets those itself: Missing when the object is absent, Unknown when the script fails.
var allowedStatuses = []string{"Healthy", "Progressing", "Degraded", "Suspended"}

// libs says which Lua libraries a script runs with.
type libs int

const (
	// sandboxLibs is what Argo CD gives a script from argocd-cm unless
	// resource.customizations.useOpenLibs.<group>_<kind> is "true": package, base and table
	// (plus a cut-down os that our scripts do not use).
	sandboxLibs libs = iota
	// openLibs is the whole standard library, as built-in checks and useOpenLibs get.
	openLibs
)

func (l libs) String() string {
	if l == sandboxLibs {
		return "sandbox"
	}
	return "openLibs"
}

// healthStatus is what a health script returns.
type healthStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// healthTests is the shape of a health_test.yaml.
type healthTests struct {
	Tests []struct {
		HealthStatus healthStatus `json:"healthStatus"`
		InputPath    string       `json:"inputPath"`
	} `json:"tests"`
}

// shipped is the folder of the health checks as users install them.
var shipped = filepath.Join("..", "..", "config", "argocd")

// TestHealthChecks runs every <group>/<kind>/health.lua on the fixtures its health_test.yaml
// lists, in both library settings, and compares status and message.
func TestHealthChecks(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join(shipped, "*", "*", "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) == 0 {
		t.Fatal("no <group>/<kind>/health.lua found")
	}
	for _, script := range scripts {
		dir := filepath.Dir(script)
		name, err := filepath.Rel(shipped, dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.ToSlash(name), func(t *testing.T) {
			for _, f := range checkFixtures(t, dir, readFile(t, script)) {
				t.Error(f)
			}
		})
	}
}

// checkFixtures runs script on every fixture of dir and returns one line per mismatch.
// Problems with the fixtures themselves fail t at once.
func checkFixtures(t *testing.T, dir, script string) []string {
	t.Helper()
	proto, err := compileHealth(script)
	if err != nil {
		return []string{err.Error()}
	}
	var cases healthTests
	if err := yaml.UnmarshalStrict([]byte(readFile(t, filepath.Join(dir, "health_test.yaml"))), &cases); err != nil {
		t.Fatalf("%s/health_test.yaml: %v", dir, err)
	}
	if len(cases.Tests) == 0 {
		t.Fatalf("%s/health_test.yaml lists no tests", dir)
	}

	group, kind := filepath.Base(filepath.Dir(dir)), filepath.Base(dir)
	var failures []string
	listed := map[string]bool{}
	for _, tc := range cases.Tests {
		listed[filepath.Clean(tc.InputPath)] = true
		obj := loadObject(t, filepath.Join(dir, tc.InputPath))
		if gotGroup, gotKind := groupKind(obj); gotGroup != group || gotKind != kind {
			t.Fatalf("%s is a %s/%s, not a %s/%s", tc.InputPath, gotGroup, gotKind, group, kind)
		}
		for _, l := range []libs{sandboxLibs, openLibs} {
			got, err := runHealth(proto, obj, l)
			switch {
			case err != nil:
				failures = append(failures, fmt.Sprintf("%s (%s): %v", tc.InputPath, l, err))
			case got != tc.HealthStatus:
				failures = append(failures, fmt.Sprintf("%s (%s): got %+v, want %+v", tc.InputPath, l, got, tc.HealthStatus))
			}
		}
	}

	// A fixture nobody lists is a case nobody checks.
	files, err := filepath.Glob(filepath.Join(dir, "testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		rel, err := filepath.Rel(dir, f)
		if err != nil {
			t.Fatal(err)
		}
		if !listed[rel] {
			t.Fatalf("%s is not listed in %s/health_test.yaml", rel, dir)
		}
	}
	return failures
}

// TestMyAppHealthOddInputs feeds the MyApp script objects no operator writes, and objects
// from before the operator wrote anything. Whatever the input, the script must answer with a
// status Argo CD accepts and a message, because an erroring script shows as Unknown.
func TestMyAppHealthOddInputs(t *testing.T) {
	proto, err := compileHealth(readFile(t, filepath.Join(shipped, "example.com", "MyApp", "health.lua")))
	if err != nil {
		t.Fatal(err)
	}
	const head = "apiVersion: example.com/v1\nkind: MyApp\n"
	cases := map[string]struct {
		yaml string
		want healthStatus // the zero value: any allowed status with a message
	}{
		"no metadata and no status": {yaml: head},
		"no status": {
			yaml: head + "metadata: {generation: 3}\nspec: {image: nginx}\n",
			want: healthStatus{"Progressing", "Waiting for the operator to observe generation 3"},
		},
		"status as empty table": {
			yaml: head + "metadata: {generation: 2}\nstatus: {}\n",
			want: healthStatus{"Progressing", "Waiting for the operator to observe generation 2"},
		},
		"status as empty list": {yaml: head + "metadata: {generation: 2}\nstatus: []\n"},
		"status as a string":   {yaml: head + "metadata: {generation: 2}\nstatus: broken\n"},
		"status null":          {yaml: head + "metadata: {generation: 2}\nstatus: null\n"},
		"empty conditions": {
			yaml: head + "metadata: {generation: 2}\nstatus: {observedGeneration: 2, conditions: []}\n",
			want: healthStatus{"Progressing", "Waiting for the operator to report the Ready condition"},
		},
		"conditions as empty object": {
			yaml: head + "metadata: {generation: 2}\nstatus: {observedGeneration: 2, conditions: {}}\n",
		},
		"conditions as a string": {
			yaml: head + "metadata: {generation: 2}\nstatus: {observedGeneration: 2, conditions: Ready}\n",
		},
		"conditions with missing fields": {
			yaml: head + "metadata: {generation: 2}\nstatus:\n  observedGeneration: 2\n  conditions:\n" +
				"  - {}\n  - {status: \"True\"}\n  - {type: Stalled, reason: ChildNotOwned}\n  - {type: Ready}\n",
			want: healthStatus{"Progressing", "Ready is Unknown"},
		},
		"conditions that are not objects": {
			yaml: head + "metadata: {generation: 2}\nstatus:\n  observedGeneration: 2\n" +
				"  conditions: [Ready, 3, null, true, [], {type: 5, status: \"True\"}]\n",
		},
		"Ready True without message or reason": {
			yaml: head + "metadata: {generation: 1}\nstatus:\n  observedGeneration: 1\n" +
				"  conditions: [{type: Ready, status: \"True\"}]\n",
			want: healthStatus{"Healthy", "Ready is True"},
		},
		"Degraded True without message": {
			yaml: head + "metadata: {generation: 1}\nstatus:\n  observedGeneration: 1\n" +
				"  conditions: [{type: Ready, status: \"True\"}, {type: Degraded, status: \"True\", reason: ApplyFailed}]\n",
			want: healthStatus{"Healthy", "Degraded is True: ApplyFailed"},
		},
		"Stalled True with an empty message": {
			yaml: head + "metadata: {generation: 1}\nstatus:\n  observedGeneration: 1\n" +
				"  conditions: [{type: Stalled, status: \"True\", reason: InvalidSpec, message: \"\"}]\n",
			want: healthStatus{"Degraded", "Stalled is True: InvalidSpec"},
		},
		"duplicate Ready, the first wins": {
			yaml: head + "metadata: {generation: 1}\nstatus:\n  observedGeneration: 1\n  conditions:\n" +
				"  - {type: Ready, status: \"False\", message: first}\n  - {type: Ready, status: \"True\", message: second}\n",
			want: healthStatus{"Progressing", "first"},
		},
		"no generation": {
			yaml: head + "metadata: {name: web}\nstatus:\n" +
				"  conditions: [{type: Ready, status: \"True\", message: 1 of 1 replicas available}]\n",
			want: healthStatus{"Healthy", "1 of 1 replicas available"},
		},
		"no generation and no status": {
			yaml: head + "metadata: {name: web}\n",
			want: healthStatus{"Progressing", "Waiting for the operator to report status"},
		},
		"generation as a string": {
			yaml: head + "metadata: {generation: \"3\"}\nstatus: {observedGeneration: 1, conditions: []}\n",
		},
		"observedGeneration as a string": {
			yaml: head + "metadata: {generation: 3}\nstatus: {observedGeneration: \"3\"}\n",
			want: healthStatus{"Progressing", "Waiting for the operator to observe generation 3"},
		},
		"condition observedGeneration as a string": {
			yaml: head + "metadata: {generation: 3}\nstatus:\n  observedGeneration: 3\n" +
				"  conditions: [{type: Ready, status: \"True\", message: ok, observedGeneration: \"2\"}]\n",
		},
		"metadata as a list": {yaml: head + "metadata: [1, 2]\nstatus: {conditions: [{type: Ready}]}\n"},
		"large generation": {
			yaml: head + "metadata: {generation: 123456789012}\nstatus: {observedGeneration: 123456789011}\n",
			want: healthStatus{"Progressing", "Waiting for the operator to observe generation 123456789012"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			obj := parseObject(t, []byte(tc.yaml))
			for _, l := range []libs{sandboxLibs, openLibs} {
				got, err := runHealth(proto, obj, l)
				g.Expect(err).NotTo(HaveOccurred(), "libs %s", l)
				g.Expect(allowedStatuses).To(ContainElement(got.Status), "libs %s", l)
				g.Expect(got.Message).NotTo(BeEmpty(), "libs %s", l)
				if tc.want != (healthStatus{}) {
					g.Expect(got).To(Equal(tc.want), "libs %s", l)
				}
			}
		})
	}
}

// myAppConditionTypes are the condition types of MyApp 0.3.0.
var myAppConditionTypes = []string{"Ready", "Reconciling", "Stalled", "Progressing", "Degraded"}

// TestMyAppHealthConditionCombinations runs the MyApp script on every combination of the five
// conditions (each absent, True, False or Unknown), with the status current, behind the
// spec, or with one condition behind, and compares it with the mapping the README documents.
func TestMyAppHealthConditionCombinations(t *testing.T) {
	script := readFile(t, filepath.Join(shipped, "example.com", "MyApp", "health.lua"))
	for _, f := range checkCombinations(script, 0) {
		t.Error(f)
	}
}

// checkCombinations returns one line per combination where script disagrees with
// expectedMyAppHealth, stopping after limit lines (0: no limit). The combinations run in the
// sandbox only: the fixtures already show both library settings agree, and the sandbox is
// the stricter of the two.
func checkCombinations(script string, limit int) []string {
	proto, err := compileHealth(script)
	if err != nil {
		return []string{err.Error()}
	}
	var failures []string
	for _, c := range conditionCombinations() {
		for _, staleness := range []string{current, statusBehind, readyBehind} {
			want := expectedMyAppHealth(c, staleness)
			got, err := runHealth(proto, myAppWithConditions(c, staleness), sandboxLibs)
			if err == nil && got == want {
				continue
			}
			failures = append(failures, fmt.Sprintf("%v, %s: got %+v, %v; want %+v", c, staleness, got, err, want))
			if limit > 0 && len(failures) >= limit {
				return failures
			}
		}
	}
	return failures
}

// How far behind metadata.generation the status of a combination is.
const (
	current      = "current"
	statusBehind = "status.observedGeneration behind"
	readyBehind  = "Ready's observedGeneration behind"
)

// conditionCombinations lists every assignment of "", "True", "False" or "Unknown" to the
// five condition types, "" meaning the condition is absent.
func conditionCombinations() []map[string]string {
	combos := []map[string]string{{}}
	for _, typ := range myAppConditionTypes {
		var next []map[string]string
		for _, c := range combos {
			for _, s := range []string{"", "True", "False", "Unknown"} {
				n := map[string]string{}
				for k, v := range c {
					n[k] = v
				}
				if s != "" {
					n[typ] = s
				}
				next = append(next, n)
			}
		}
		combos = next
	}
	return combos
}

// myAppWithConditions builds a MyApp at generation 5 with the given conditions, each with the
// message "<type> says so", as the JSON decoder would hand it over.
func myAppWithConditions(statuses map[string]string, staleness string) map[string]any {
	const generation = 5.0
	conditions := make([]any, 0, len(myAppConditionTypes))
	for _, typ := range myAppConditionTypes {
		s, ok := statuses[typ]
		if !ok {
			continue
		}
		observed := generation
		if staleness == readyBehind && typ == "Ready" {
			observed = generation - 1
		}
		conditions = append(conditions, map[string]any{
			"type": typ, "status": s, "reason": "Some" + typ + "Reason",
			"message": typ + " says so", "observedGeneration": observed,
		})
	}
	observed := generation
	if staleness == statusBehind {
		observed = generation - 1
	}
	return map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "MyApp",
		"metadata":   map[string]any{"name": "web", "namespace": "shop", "generation": generation},
		"status":     map[string]any{"observedGeneration": observed, "conditions": conditions},
	}
}

// expectedMyAppHealth is the mapping of the README, written out again in Go.
func expectedMyAppHealth(statuses map[string]string, staleness string) healthStatus {
	says := func(typ string) string { return typ + " says so" }
	switch {
	case staleness == statusBehind || (staleness == readyBehind && statuses["Ready"] != ""):
		return healthStatus{"Progressing", "Waiting for the operator to observe generation 5"}
	case statuses["Stalled"] == "True":
		return healthStatus{"Degraded", says("Stalled")}
	case statuses["Reconciling"] == "True":
		return healthStatus{"Progressing", says("Reconciling")}
	case statuses["Ready"] == "True" && statuses["Degraded"] == "True":
		return healthStatus{"Healthy", says("Degraded")}
	case statuses["Ready"] == "True":
		return healthStatus{"Healthy", says("Ready")}
	case statuses["Ready"] != "":
		return healthStatus{"Progressing", says("Ready")}
	}
	return healthStatus{"Progressing", "Waiting for the operator to report the Ready condition"}
}

// TestMyAppHealthTestsCatchMutations breaks the MyApp script in ways that each drop one rule
// of the mapping, and checks that the fixtures or the combinations notice every one, so a
// rule without a test cannot creep in.
func TestMyAppHealthTestsCatchMutations(t *testing.T) {
	dir := filepath.Join(shipped, "example.com", "MyApp")
	script := readFile(t, filepath.Join(dir, "health.lua"))
	mutations := map[string][2]string{
		"generation ignored":        {"observed < generation", "observed < 0"},
		"stale conditions ignored":  {"c.observedGeneration < generation", "c.observedGeneration < 0"},
		"Stalled ignored":           {"isTrue(byType.Stalled)", "false"},
		"Degraded message dropped":  {"isTrue(byType.Degraded)", "false"},
		"Degraded as an alarm":      {"if isTrue(byType.Degraded) then\n      return result(\"Healthy\"", "if isTrue(byType.Degraded) then\n      return result(\"Degraded\""},
		"Reconciling ignored":       {"isTrue(byType.Reconciling)", "false"},
		"Ready True not Healthy":    {`result("Healthy"`, `result("Progressing"`},
		"Ready False as Healthy":    {"if isTrue(ready) then", "if ready ~= nil then"},
		"Suspended for no reason":   {`return result("Progressing", waiting)`, `return result("Suspended", waiting)`},
		"generation not in message": {`" .. generation`, `"`},
	}
	for name, m := range mutations {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(script, m[0]) {
				t.Fatalf("health.lua no longer contains %q: update this mutation", m[0])
			}
			broken := strings.Replace(script, m[0], m[1], 1)
			failures := append(checkFixtures(t, dir, broken), checkCombinations(broken, 1)...)
			if len(failures) == 0 {
				t.Fatalf("no fixture and no combination notices the mutation %q -> %q", m[0], m[1])
			}
			t.Logf("noticed: %s", failures[0])
		})
	}
}

// TestREADMEInlinesTheScript keeps the argocd-cm snippet users paste from README.md identical
// to the health.lua the other tests run.
func TestREADMEInlinesTheScript(t *testing.T) {
	const key = "  resource.customizations.health.example.com_MyApp: |"
	const indent = "    "
	script := readFile(t, filepath.Join(shipped, "example.com", "MyApp", "health.lua"))
	lines := strings.Split(readFile(t, filepath.Join(shipped, "README.md")), "\n")
	var inlined []string
	for i, line := range lines {
		if line != key || i+1 >= len(lines) || strings.Contains(lines[i+1], "the contents of health.lua") {
			continue
		}
		for _, l := range lines[i+1:] {
			if l != "" && !strings.HasPrefix(l, indent) {
				break
			}
			inlined = append(inlined, strings.TrimPrefix(l, indent))
		}
		break
	}
	if inlined == nil {
		t.Fatalf("README.md has no argocd-cm snippet with the script inlined under %q", key)
	}
	// A YAML block scalar ends with one newline, as the file does.
	got := strings.TrimRight(strings.Join(inlined, "\n"), "\n") + "\n"
	if got != script {
		t.Errorf("the script inlined in README.md differs from health.lua; paste it again, indented by %d spaces",
			len(indent))
	}
}

// compileHealth compiles a health script once, so the thousands of runs below do not each
// parse it again.
func compileHealth(script string) (*lua.FunctionProto, error) {
	chunk, err := parse.Parse(strings.NewReader(script), "health.lua")
	if err != nil {
		return nil, err
	}
	return lua.Compile(chunk, "health.lua")
}

// runHealth runs a health script on obj the way Argo CD does: obj becomes the global `obj`,
// the script runs under a one-second deadline, and the table it returns is the health.
func runHealth(script *lua.FunctionProto, obj map[string]any, l libs) (healthStatus, error) {
	L := lua.NewState(lua.Options{SkipOpenLibs: l == sandboxLibs})
	defer L.Close()
	if l == sandboxLibs {
		for _, lib := range []struct {
			name string
			open lua.LGFunction
		}{
			{lua.LoadLibName, lua.OpenPackage},
			{lua.BaseLibName, lua.OpenBase},
			{lua.TabLibName, lua.OpenTable},
		} {
			if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
				return healthStatus{}, fmt.Errorf("opening %s: %w", lib.name, err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	L.SetContext(ctx)

	L.SetGlobal("obj", toLua(L, obj))
	L.Push(L.NewFunctionFromProto(script))
	if err := L.PCall(0, lua.MultRet, nil); err != nil {
		return healthStatus{}, err
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		return healthStatus{}, fmt.Errorf("the script returned %s, not a table", L.Get(-1).Type())
	}
	var hs healthStatus
	for field, dst := range map[string]*string{"status": &hs.Status, "message": &hs.Message} {
		switch v := ret.RawGetString(field).(type) {
		case lua.LString:
			*dst = string(v)
		case *lua.LNilType:
		default:
			return healthStatus{}, fmt.Errorf("the returned %s is a %s, not a string", field, v.Type())
		}
	}
	if !slices.Contains(allowedStatuses, hs.Status) {
		return hs, fmt.Errorf("the returned status %q is not one of %v", hs.Status, allowedStatuses)
	}
	return hs, nil
}

// toLua converts a decoded JSON value into Lua as Argo CD does: objects become tables keyed
// by string, arrays become tables indexed from 1, and numbers, strings and booleans become
// their Lua counterparts. JSON null, and anything else, becomes nil.
func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := L.CreateTable(0, len(v))
		for k, item := range v {
			t.RawSetString(k, toLua(L, item))
		}
		return t
	case []any:
		t := L.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(toLua(L, item))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	}
	return lua.LNil
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func loadObject(t *testing.T, path string) map[string]any {
	t.Helper()
	return parseObject(t, []byte(readFile(t, path)))
}

// parseObject decodes a YAML object the way the API server's JSON reaches Argo CD.
func parseObject(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(js, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// groupKind returns the API group and kind of a decoded object.
func groupKind(obj map[string]any) (string, string) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	group := ""
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	return group, kind
}
