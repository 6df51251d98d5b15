package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	cases := []struct {
		name    string
		line    string
		want    build
		wantOK  bool
		wantErr string
	}{
		{name: "blank line", line: "   "},
		{name: "comment", line: "  # name | . | | | ./cmd"},
		{
			name:   "no env and no flags",
			line:   "manager | . | | | ./cmd",
			want:   build{Name: "manager", Dir: ".", Packages: []string{"./cmd"}},
			wantOK: true,
		},
		{
			name: "every field",
			line: "opm | hack/tools/opm | CGO_ENABLED=0 GOOS=linux | -trimpath -tags json1 -o bin/opm -ldflags=-s | a/b ./c/...",
			want: build{Name: "opm", Dir: "hack/tools/opm", Env: []string{"CGO_ENABLED=0", "GOOS=linux"}, Tags: "json1",
				Trimpath: true, Packages: []string{"a/b", "./c/..."}},
			wantOK: true,
		},
		{
			name:   "flags written with = and with two dashes, the last -tags winning",
			line:   "x | . | | --tags=a -tags=b,c -gcflags=all=-N -gcflags -l -trimpath=false | ./cmd",
			want:   build{Name: "x", Dir: ".", Tags: "b,c", Gcflags: []string{"all=-N", "-l"}, Packages: []string{"./cmd"}},
			wantOK: true,
		},
		{
			name:   "a flag that is not modeled is kept to be reported",
			line:   "x | . | | -race -v | ./cmd",
			want:   build{Name: "x", Dir: ".", Packages: []string{"./cmd"}, Ignored: []string{"-race"}},
			wantOK: true,
		},
		{name: "too few fields", line: "x | . | | ./cmd", wantErr: "4 fields"},
		{name: "no packages", line: "x | . | | | ", wantErr: "needs"},
		{name: "env that is no assignment", line: "x | . | CGO_ENABLED | | ./cmd", wantErr: "NAME=VALUE"},
		{name: "flag without its value", line: "x | . | | -tags | ./cmd", wantErr: "needs a value"},
		{name: "word that is no flag", line: "x | . | | tags | ./cmd", wantErr: "does not start with -"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok, err := parseLine(c.line)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// %+v prints a nil and an empty list alike, which the parser does not tell apart.
			if ok != c.wantOK || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", c.want) {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, c.want, c.wantOK)
			}
		})
	}
}

func TestGcflagsFor(t *testing.T) {
	cases := []struct {
		name    string
		gcflags []string
		named   bool
		want    string
	}{
		{"none", nil, true, ""},
		{"no pattern, named package", []string{"-N -l"}, true, "-N -l"},
		{"no pattern, dependency", []string{"-N"}, false, ""},
		{"all, dependency", []string{"all=-N"}, false, "-N"},
		{"the last that applies wins", []string{"all=-N", "-l"}, true, "-l"},
		{"a later one for named packages only leaves a dependency's", []string{"all=-N", "-l"}, false, "-N"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := gcflagsFor(c.gcflags, c.named); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// graph is a build of four packages: cmd imports lib, lib imports dep, other stands alone.
func graph(depVersion string, libFiles ...string) map[string]*pkg {
	return map[string]*pkg{
		"ex/cmd":     {ImportPath: "ex/cmd", Module: "ex", Version: "(main)", Named: true, Files: []string{"main.go"}, Imports: []string{"ex/lib", "C", "unsafe"}},
		"ex/lib":     {ImportPath: "ex/lib", Module: "ex", Version: "(main)", Files: libFiles, Imports: []string{"dep.io/dep"}},
		"dep.io/dep": {ImportPath: "dep.io/dep", Module: "dep.io", Version: depVersion, Files: []string{"dep.go"}},
		"other.io/x": {ImportPath: "other.io/x", Module: "other.io", Version: "v1.0.0", Files: []string{"x.go"}},
	}
}

func TestKeys(t *testing.T) {
	base := variant{GoVersion: "go1.26.8", Target: "linux/amd64"}
	want := keys(graph("v1.0.0", "a.go", "b.go"), base)
	cases := []struct {
		name    string
		pkgs    map[string]*pkg
		v       variant
		changed []string // the packages whose key differs from want's
	}{
		{"same inputs", graph("v1.0.0", "a.go", "b.go"), base, nil},
		{"files in another order", graph("v1.0.0", "b.go", "a.go"), base, nil},
		{"another file", graph("v1.0.0", "a.go", "c.go"), base, []string{"ex/cmd", "ex/lib"}},
		{"another dependency version", graph("v1.1.0", "a.go", "b.go"), base, []string{"dep.io/dep", "ex/cmd", "ex/lib"}},
		{"-trimpath", graph("v1.0.0", "a.go", "b.go"), variant{GoVersion: "go1.26.8", Target: "linux/amd64", Trimpath: true},
			[]string{"dep.io/dep", "ex/cmd", "ex/lib", "other.io/x"}},
		{"another target", graph("v1.0.0", "a.go", "b.go"), variant{GoVersion: "go1.26.8", Target: "linux/arm64"},
			[]string{"dep.io/dep", "ex/cmd", "ex/lib", "other.io/x"}},
		{"-gcflags for the named package only", graph("v1.0.0", "a.go", "b.go"),
			variant{GoVersion: "go1.26.8", Target: "linux/amd64", Gcflags: []string{"-N"}}, []string{"ex/cmd"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := keys(c.pkgs, c.v)
			var changed []string
			for _, path := range []string{"dep.io/dep", "ex/cmd", "ex/lib", "other.io/x"} {
				if got[path] == "" {
					t.Fatalf("no key for %s", path)
				}
				if got[path] != want[path] {
					changed = append(changed, path)
				}
			}
			if !reflect.DeepEqual(changed, c.changed) {
				t.Errorf("changed keys %v, want %v", changed, c.changed)
			}
		})
	}
}

func TestModuleOf(t *testing.T) {
	cases := []struct {
		name        string
		l           listed
		wantPath    string
		wantVersion string
	}{
		{"standard library", listed{Standard: true}, "std", ""},
		{"main module", listed{Module: &listedModule{Path: "ex", Main: true}}, "ex", "(main)"},
		{"a version", listed{Module: &listedModule{Path: "a.io", Version: "v1.2.0"}}, "a.io", "v1.2.0"},
		{"replaced by another version", listed{Module: &listedModule{Path: "a.io", Version: "v1.2.0",
			Replace: &listedModule{Path: "a.io", Version: "v1.1.0"}}}, "a.io", "v1.1.0"},
		{"replaced by a fork", listed{Module: &listedModule{Path: "a.io", Version: "v1.2.0",
			Replace: &listedModule{Path: "fork.io/a", Version: "v1.1.0"}}}, "a.io", "fork.io/a@v1.1.0"},
		{"replaced by a directory", listed{Module: &listedModule{Path: "a.io", Version: "v1.2.0",
			Replace: &listedModule{Path: "../a", Dir: "/src/a"}}}, "a.io", "dir /src/a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, version := moduleOf(&c.l)
			if path != c.wantPath || version != c.wantVersion {
				t.Errorf("got %s %q, want %s %q", path, version, c.wantPath, c.wantVersion)
			}
		})
	}
}

func TestAggregate(t *testing.T) {
	// pkgOf is a package compiled under a key; the key stands for everything that makes it.
	pkgOf := func(path, module, version, variant, key string, size int64) compiled {
		return compiled{ImportPath: path, Module: module, Version: version, Variant: variant, Key: key, Size: size}
	}
	fmt1 := pkgOf("fmt", "std", "go1.26.8", "plain", "fmt", 100)
	fmt2 := pkgOf("fmt", "std", "go1.26.8", "trimpath", "fmt-trimpath", 100)
	y1 := pkgOf("y.io/y", "y.io", "v1.0.0", "plain", "y1", 1000)
	y2 := pkgOf("y.io/y", "y.io", "v2.0.0", "plain", "y2", 1200)
	y2b := pkgOf("y.io/y/b", "y.io", "v2.0.0", "plain", "y2b", 50)
	cases := []struct {
		name        string
		builds      []buildResult
		wantBuilds  []BuildFigures
		wantTotals  Totals
		wantModules []ModuleCost
	}{
		{
			name:       "one build",
			builds:     []buildResult{{"a", []compiled{fmt1, y1}}},
			wantBuilds: []BuildFigures{{"a", 2, 1100, 2, 1100}},
			wantTotals: Totals{Actions: 2, ActionBytes: 1100, Keys: 2, KeyBytes: 1100, ImportPaths: 2, ImportPathBytes: 1100},
		},
		{
			name:       "the same packages twice share every compile",
			builds:     []buildResult{{"a", []compiled{fmt1, y1}}, {"b", []compiled{y1, fmt1}}},
			wantBuilds: []BuildFigures{{"a", 2, 1100, 2, 1100}, {"b", 2, 1100, 0, 0}},
			wantTotals: Totals{Actions: 4, ActionBytes: 2200, Keys: 2, KeyBytes: 1100, ImportPaths: 2, ImportPathBytes: 1100},
		},
		{
			name:       "another version and another flag set",
			builds:     []buildResult{{"a", []compiled{fmt1, y1}}, {"b", []compiled{fmt2, y2, y2b}}, {"c", []compiled{fmt1, y2}}},
			wantBuilds: []BuildFigures{{"a", 2, 1100, 2, 1100}, {"b", 3, 1350, 3, 1350}, {"c", 2, 1300, 0, 0}},
			wantTotals: Totals{Actions: 7, ActionBytes: 3750, Keys: 5, KeyBytes: 2450, ImportPaths: 3, ImportPathBytes: 1150,
				MultiKeyPaths: 2, ExtraBytes: 1300},
			wantModules: []ModuleCost{
				{Module: "y.io", ExtraBytes: 1200, Paths: 1, MaxKeys: 2, Versions: []string{"v1.0.0", "v2.0.0"}, Variants: 1},
				{Module: "std", ExtraBytes: 100, Paths: 1, MaxKeys: 2, Versions: []string{"go1.26.8"}, Variants: 2},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := aggregate(c.builds, 25)
			if !reflect.DeepEqual(rep.Builds, c.wantBuilds) {
				t.Errorf("builds %+v, want %+v", rep.Builds, c.wantBuilds)
			}
			if rep.Totals != c.wantTotals {
				t.Errorf("totals %+v, want %+v", rep.Totals, c.wantTotals)
			}
			if !reflect.DeepEqual(rep.Modules, c.wantModules) {
				t.Errorf("modules %+v, want %+v", rep.Modules, c.wantModules)
			}
		})
	}
}
