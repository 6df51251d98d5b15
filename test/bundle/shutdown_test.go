package bundle

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/operator-framework/api/pkg/manifests"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// TestTerminationGraceExceedsShutdownTimeout checks that the kubelet waits longer for the
// manager's pod to stop than the manager waits for its own graceful shutdown (the
// GracefulShutdownTimeout in cmd/main.go) and then for its queued events to be written
// (eventFlushTimeout): otherwise a rollout or a node drain SIGKILLs the manager mid-shutdown,
// before it releases the leader lease (the next leader waits out the lease) or writes the
// last events. Both the kustomize manifest and the bundle's CSV are checked.
func TestTerminationGraceExceedsShutdownTimeout(t *testing.T) {
	graceful, err := gracefulShutdownTimeout("../../cmd/main.go")
	if err != nil {
		t.Fatalf("reading the manager's graceful shutdown timeout: %v", err)
	}
	flush, err := constDuration("../../cmd/main.go", "eventFlushTimeout")
	if err != nil {
		t.Fatalf("reading the manager's event flush timeout: %v", err)
	}
	timeout := graceful + flush
	graces := map[string]*int64{}

	b, err := os.ReadFile("../../config/manager/manager.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(b), "\n---") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatalf("config/manager/manager.yaml: %v", err)
		}
		if d.Kind == "Deployment" {
			graces["config/manager/manager.yaml Deployment "+d.Name] = d.Spec.Template.Spec.TerminationGracePeriodSeconds
		}
	}
	bundle, err := manifests.GetBundleFromDir(bundleDir)
	if err != nil {
		t.Fatalf("reading the bundle: %v", err)
	}
	for _, d := range bundle.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		graces["CSV deployment "+d.Name] = d.Spec.Template.Spec.TerminationGracePeriodSeconds
	}
	if len(graces) != 2 {
		t.Fatalf("want the manager Deployment in config/manager and in the CSV, found %v", keys(graces))
	}
	for where, grace := range graces {
		if grace == nil {
			t.Errorf("%s: no terminationGracePeriodSeconds; Kubernetes' default of 30s does not exceed the manager's %s shutdown", where, timeout)
			continue
		}
		if time.Duration(*grace)*time.Second <= timeout {
			t.Errorf("%s: terminationGracePeriodSeconds %d does not exceed the manager's graceful shutdown timeout and event flush timeout, %s in all", where, *grace, timeout)
		}
	}
	t.Logf("graceful shutdown %s, event flush %s; termination grace %v", graceful, flush, describe(graces))
}

// gracefulShutdownTimeout finds `GracefulShutdownTimeout: <expr>` in a Go file and
// evaluates expr, which may be wrapped in a one-argument call such as ptr(...) and may
// multiply integer literals by time.Second and its siblings.
func gracefulShutdownTimeout(path string) (time.Duration, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return 0, err
	}
	var found []ast.Expr
	ast.Inspect(f, func(n ast.Node) bool {
		if kv, ok := n.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok && id.Name == "GracefulShutdownTimeout" {
				found = append(found, kv.Value)
			}
		}
		return true
	})
	if len(found) != 1 {
		return 0, fmt.Errorf("%s sets GracefulShutdownTimeout %d times, want once", path, len(found))
	}
	return evalDuration(found[0])
}

// constDuration finds `const <name> = <expr>` in a Go file and evaluates expr as
// gracefulShutdownTimeout does.
func constDuration(path, name string) (time.Duration, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return 0, err
	}
	var found []ast.Expr
	ast.Inspect(f, func(n ast.Node) bool {
		if spec, ok := n.(*ast.ValueSpec); ok && len(spec.Names) == 1 && len(spec.Values) == 1 && spec.Names[0].Name == name {
			found = append(found, spec.Values[0])
		}
		return true
	})
	if len(found) != 1 {
		return 0, fmt.Errorf("%s declares %s %d times, want once", path, name, len(found))
	}
	return evalDuration(found[0])
}

var timeUnits = map[string]time.Duration{
	"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond, "Millisecond": time.Millisecond,
	"Second": time.Second, "Minute": time.Minute, "Hour": time.Hour,
}

func evalDuration(e ast.Expr) (time.Duration, error) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return evalDuration(e.X)
	case *ast.CallExpr:
		if len(e.Args) == 1 {
			return evalDuration(e.Args[0])
		}
	case *ast.BasicLit:
		if e.Kind == token.INT {
			v, err := strconv.ParseInt(e.Value, 0, 64)
			return time.Duration(v), err
		}
	case *ast.SelectorExpr:
		if pkg, ok := e.X.(*ast.Ident); ok && pkg.Name == "time" {
			if d, ok := timeUnits[e.Sel.Name]; ok {
				return d, nil
			}
		}
	case *ast.BinaryExpr:
		if e.Op == token.MUL {
			x, err := evalDuration(e.X)
			if err != nil {
				return 0, err
			}
			y, err := evalDuration(e.Y)
			return x * y, err
		}
	}
	return 0, fmt.Errorf("cannot evaluate %T %v: keep GracefulShutdownTimeout a literal such as ptr(30 * time.Second), or teach this test", e, e)
}

func keys(m map[string]*int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func describe(m map[string]*int64) string {
	var parts []string
	for k, v := range m {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s: %ds", k, *v))
		}
	}
	return strings.Join(parts, ", ")
}
