package v1_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

// "A MyApp the API server accepts always makes children the API server accepts", checked on
// MyApps generated across every field of the schema (schemagen_test.go): each generated
// MyApp goes to the API server with a server-side dry run, and the children the desired
// package builds from each one it accepts are dry-run too. A child refused is a
// counterexample: admission accepts a MyApp the operator can never make.

var (
	makeableSeed     = flag.Uint64("makeable.seed", 1, "seed of the MyApps TestMakeableForGeneratedMyApps generates")
	makeableAccepted = flag.Int("makeable.accepted", 300, "how many accepted MyApps TestMakeableForGeneratedMyApps checks")
	makeableReport   = flag.String("makeable.report", "", "a file to append each class of counterexample to, as Markdown")
)

// knownGaps are classes of counterexamples that admission does not refuse yet, each with
// why it is allowed to stay; a counterexample of such a class is logged instead of failing.
// None is left: what the CRD's rules cannot check within the cost budget, the operator's
// admission policy does (internal/admission).
var knownGaps = []struct {
	class  *regexp.Regexp
	reason string
}{}

func knownGap(class string) string {
	for _, g := range knownGaps {
		if g.class.MatchString(class) {
			return g.reason
		}
	}
	return ""
}

// makeability is what the API server said about a MyApp and its children.
type makeability struct {
	// accepted: the API server accepts the MyApp.
	accepted bool
	// classes name what was refused, one per cause the refusal gives, from its structured
	// fields; none when every child is accepted. MyApps refused for the same reason share a
	// class.
	classes []string
	// refusal is the error of the refused child.
	refusal error
}

// arrayIndex matches list indexes in a field path, which differ between MyApps refused for
// the same reason.
var arrayIndex = regexp.MustCompile(`\[[0-9]+\]`)

// refusalClasses name a child's refusal by its kind, the API server's reason and, for each
// cause, the field and cause type.
func refusalClasses(kind string, err error) []string {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return []string{kind + ": " + err.Error()}
	}
	s := st.Status()
	class := fmt.Sprintf("%s: %s (%d)", kind, s.Reason, s.Code)
	if s.Details == nil || len(s.Details.Causes) == 0 {
		return []string{class}
	}
	causes := map[string]bool{}
	for _, c := range s.Details.Causes {
		causes[fmt.Sprintf("%s: %s %s", class, c.Type, arrayIndex.ReplaceAllString(c.Field, "[*]"))] = true
	}
	return sortedKeys(causes)
}

// checkMakeable creates the MyApp with a server-side dry run and, when the API server
// accepts it, builds its children as the operator does and dry-runs each one. An error is
// an answer of the API server that is neither an acceptance nor a refusal of the MyApp.
func checkMakeable(ctx context.Context, name string, spec map[string]any, migrating bool) (makeability, error) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "MyApp",
		"metadata": map[string]any{"namespace": "default", "name": name},
		"spec":     deepCopyJSON(spec),
	}}
	if err := k8s.Create(ctx, obj, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsRequestEntityTooLargeError(err) {
			return makeability{}, nil
		}
		return makeability{}, fmt.Errorf("creating the MyApp: %w", err)
	}
	// As the operator reads it: decoded from the stored JSON, defaults filled in.
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return makeability{}, err
	}
	stored := &examplev1.MyApp{}
	if err := json.Unmarshal(raw, stored); err != nil {
		return makeability{accepted: true, classes: []string{"the operator cannot decode it"}, refusal: err}, nil
	}
	stored.UID = types.UID("00000000-0000-0000-0000-000000000001")

	children, err := testutil.Children(stored, migrating)
	if err != nil {
		return makeability{accepted: true, classes: []string{"the builders refuse it: " + arrayIndex.ReplaceAllString(err.Error(), "[*]")}, refusal: err}, nil
	}
	for _, c := range children {
		if err := dryRunApply(ctx, c.Config, c.Object); err != nil {
			kind := strings.TrimPrefix(fmt.Sprintf("%T", c.Object), "*")
			return makeability{accepted: true, classes: refusalClasses(kind, err), refusal: err}, nil
		}
		if d, ok := c.Object.(*appsv1.Deployment); ok {
			if err := dryRunPod(ctx, d); err != nil {
				return makeability{accepted: true, classes: refusalClasses("v1.Pod", err), refusal: err}, nil
			}
		}
	}
	return makeability{accepted: true}, nil
}

// counterexample is the first accepted MyApp found whose children are refused for a class.
type counterexample struct {
	name      string
	spec      map[string]any
	migrating bool
	refusal   error
	count     int
}

func (c *counterexample) String() string {
	return fmt.Sprintf("MyApp %q (migrating: %t) spec %s\nrefusal: %s", c.name, c.migrating, mustJSON(abbreviated(c.spec)),
		cut(fmt.Sprint(c.refusal), 2000))
}

// TestMakeableForGeneratedMyApps: for MyApps generated from the valid edge cases by changes
// at random fields of the schema, from a fixed seed, every one the API server accepts makes
// children the API server accepts. Each class of counterexample is reported once, with the
// MyApp made as small as it stays a counterexample of that class.
func TestMakeableForGeneratedMyApps(t *testing.T) {
	ctx := context.Background()
	spec, err := loadSpecSchema()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c := randChooser{rand.New(rand.NewPCG(*makeableSeed, *makeableSeed))}
	g := newGenerator(spec, c)
	found := map[string]*counterexample{}
	changed, changedAccepted := map[string]bool{}, map[string]bool{}
	generated, accepted := 0, 0
	for accepted < *makeableAccepted && generated < 10**makeableAccepted {
		generated++
		// Every field of the schema is changed first once, then fields at random.
		var first []schemaPath
		if generated <= len(g.paths) {
			first = g.paths[generated-1 : generated]
		}
		name, s := g.myApp(first...)
		migrating := c.intn(4) == 0
		m, err := checkMakeable(ctx, name, s, migrating)
		if err != nil {
			t.Fatalf("MyApp %q spec %s: %v", name, mustJSON(abbreviated(s)), err)
		}
		for p := range g.touched {
			changed[p] = true
		}
		if !m.accepted {
			continue
		}
		accepted++
		for p := range g.touched {
			changedAccepted[p] = true
		}
		for _, class := range m.classes {
			if found[class] == nil {
				found[class] = &counterexample{name: name, spec: s, migrating: migrating, refusal: m.refusal}
			}
			found[class].count++
		}
	}
	t.Logf("%d MyApps generated, %d accepted, in %s; the accepted ones changed %d of the schema's %d fields",
		generated, accepted, time.Since(start).Round(time.Second), len(changedAccepted), len(g.paths))
	if accepted < *makeableAccepted/2 {
		t.Errorf("the API server accepted only %d of %d generated MyApps: the generator explores too little of what is valid", accepted, generated)
	}
	var unaccepted []string
	for _, p := range g.paths {
		if !changed[p.String()] {
			t.Errorf("no generated MyApp changes spec%s: the property says nothing about it", p)
		} else if !changedAccepted[p.String()] {
			unaccepted = append(unaccepted, "spec"+p.String())
		}
	}
	t.Logf("fields changed only in MyApps the API server refused: %s", strings.Join(unaccepted, ", "))

	var report strings.Builder
	for _, class := range sortedKeys(found) {
		ce := found[class]
		shrinkCounterexample(ctx, t, ce, class)
		fmt.Fprintf(&report, "- `%s` (%d of %d accepted MyApps, seed %d)\n  `%s`\n", class, ce.count, accepted, *makeableSeed, mustJSON(abbreviated(ce.spec)))
		if reason := knownGap(class); reason != "" {
			t.Logf("known gap (%s), %d of %d accepted MyApps: %s\n%s", reason, ce.count, accepted, class, ce)
			continue
		}
		t.Errorf("an accepted MyApp makes a child the API server refuses, %d of %d accepted MyApps: %s\n%s",
			ce.count, accepted, class, ce)
	}
	if *makeableReport != "" && report.Len() > 0 {
		f, err := os.OpenFile(*makeableReport, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = f.WriteString(report.String())
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			t.Error(err)
		}
	}
}

// shrinkCounterexample removes fields from the counterexample's spec as long as the API
// server still accepts the MyApp and refuses a child for a cause of the same class.
func shrinkCounterexample(ctx context.Context, t *testing.T, ce *counterexample, class string) {
	for round := 0; round < 3; round++ {
		shrunk := false
		for _, p := range jsonPaths(ce.spec, nil) {
			candidate, ok := withoutPath(ce.spec, p).(map[string]any)
			if !ok {
				continue
			}
			m, err := checkMakeable(ctx, ce.name, candidate, ce.migrating)
			if err != nil {
				t.Fatalf("MyApp %q spec %s: %v", ce.name, mustJSON(candidate), err)
			}
			if m.accepted && slices.Contains(m.classes, class) {
				ce.spec, ce.refusal, shrunk = candidate, m.refusal, true
			}
		}
		if !shrunk {
			return
		}
	}
}

// jsonPaths lists the path of every value inside v, parents first.
func jsonPaths(v any, prefix []any) [][]any {
	var out [][]any
	add := func(key any, x any) {
		p := append(append([]any{}, prefix...), key)
		out = append(out, p)
		out = append(out, jsonPaths(x, p)...)
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			add(k, v[k])
		}
	case []any:
		for i := len(v) - 1; i >= 0; i-- {
			add(i, v[i])
		}
	}
	return out
}

// withoutPath returns a copy of v without the value at path; v itself when path is not in v.
func withoutPath(v any, path []any) any {
	if len(path) == 0 {
		return v
	}
	switch v := v.(type) {
	case map[string]any:
		k, ok := path[0].(string)
		if _, present := v[k]; !ok || !present {
			return v
		}
		m := deepCopyJSON(v).(map[string]any)
		if len(path) == 1 {
			delete(m, k)
		} else {
			m[k] = withoutPath(v[k], path[1:])
		}
		return m
	case []any:
		i, ok := path[0].(int)
		if !ok || i >= len(v) {
			return v
		}
		a := deepCopyJSON(v).([]any)
		if len(path) == 1 {
			return append(a[:i], a[i+1:]...)
		}
		a[i] = withoutPath(v[i], path[1:])
		return a
	}
	return v
}

// cut returns s, or its first n bytes and how long it is.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:n], len(s))
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// FuzzMakeableAcceptedMyApps is the same property with the fuzzer's bytes making the
// generator's choices; `make fuzz` runs it longer than `make test`.
func FuzzMakeableAcceptedMyApps(f *testing.F) {
	spec, err := loadSpecSchema()
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{})
	f.Add([]byte("accepted means makeable"))
	f.Add([]byte{10, 0, 200, 3, 77, 1, 2, 3, 4, 5, 6, 7, 8, 9, 250, 251, 252, 253})
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &byteChooser{data: data}
		g := newGenerator(spec, c)
		name, s := g.myApp()
		migrating := c.intn(4) == 0
		m, err := checkMakeable(context.Background(), name, s, migrating)
		if err != nil {
			t.Fatalf("MyApp %q spec %s: %v", name, mustJSON(abbreviated(s)), err)
		}
		for _, class := range m.classes {
			if knownGap(class) == "" {
				t.Fatalf("an accepted MyApp makes a child the API server refuses: %s\n%s", class,
					&counterexample{name: name, spec: s, migrating: migrating, refusal: m.refusal})
			}
		}
	})
}
