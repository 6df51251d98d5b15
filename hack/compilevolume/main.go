// Command compilevolume estimates how much Go source a set of go build commands compiles on
// an empty build cache, and how much of it is compiled more than once because the builds use
// different module versions or compile flags. It runs go list only, never the compiler:
//
//	go run ./hack/compilevolume -builds builds.txt [-json] [-top 25]
//
// The builds file (or standard input, with -builds -) holds one build a line; blank lines and
// lines starting with # are ignored. A line has five fields separated by '|':
//
//	name | module dir | env assignments | go build flags | packages
//
// for example
//
//	manager | . | CGO_ENABLED=0 | -trimpath -tags=netgo | ./cmd
//
// The module dir is relative to the current directory; the env assignments, flags and
// packages are separated by spaces. Of the flags only -tags, -trimpath and -gcflags change
// what is compiled; -o, -ldflags and the other flags that take a value are skipped, and any
// other flag is reported on standard error and ignored.
//
// A compiled package is identified by a key that approximates the go command's action ID:
// a SHA-256 over the import path, the module path and version, the Go version, GOOS and
// GOARCH, the sorted file names, -trimpath, the package's gcflags and the keys of the
// packages it imports. Two builds share the compile of a package only if its key is the same
// in both, so a different version of a module changes the key of each of its packages and of
// every package above them. The size of a package is the size of its Go, cgo and assembly
// files.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

func main() {
	buildsFile := flag.String("builds", "", "the file of builds, one a line, or - for standard input")
	asJSON := flag.Bool("json", false, "write the figures as JSON instead of text")
	top := flag.Int("top", 25, "how many modules to list by the source they compile more than once")
	flag.Parse()
	if *buildsFile == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*buildsFile, *asJSON, *top, os.Stdout); err != nil {
		_, _ = fmt.Fprintln(os.Stderr, "compilevolume:", err)
		os.Exit(1)
	}
}

func run(buildsFile string, asJSON bool, top int, w io.Writer) error {
	in := io.Reader(os.Stdin)
	if buildsFile != "-" {
		f, err := os.Open(buildsFile)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		in = f
	}
	builds, err := parseBuilds(in)
	if err != nil {
		return err
	}
	results := make([]buildResult, 0, len(builds))
	for _, b := range builds {
		for _, f := range b.Ignored {
			_, _ = fmt.Fprintf(os.Stderr, "compilevolume: %s: flag %s is ignored\n", b.Name, f)
		}
		r, err := list(b)
		if err != nil {
			return fmt.Errorf("%s: %w", b.Name, err)
		}
		results = append(results, r)
	}
	rep := aggregate(results, top)
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return writeText(w, rep)
}

// build is one line of the builds file.
type build struct {
	Name     string
	Dir      string
	Env      []string
	Tags     string   // the value of the last -tags flag, passed on to go list
	Trimpath bool     // -trimpath
	Gcflags  []string // the values of the -gcflags flags, in order
	Packages []string
	Ignored  []string // flags this program does not model, reported and skipped
}

// valueFlags are the go build flags that take a value, so that the value written as a
// separate word is not read as a package or flag.
var valueFlags = map[string]bool{
	"C": true, "o": true, "p": true, "asmflags": true, "buildmode": true, "buildvcs": true,
	"compiler": true, "covermode": true, "coverpkg": true, "gccgoflags": true, "gcflags": true,
	"installsuffix": true, "ldflags": true, "mod": true, "modfile": true, "overlay": true,
	"pgo": true, "pkgdir": true, "tags": true, "toolexec": true,
}

// harmlessFlags change neither which files nor how they are compiled, so they are skipped
// without a warning. (-mod and -modfile are not among them: they may choose other module
// versions, which go list does not see.)
var harmlessFlags = map[string]bool{
	"o": true, "ldflags": true, "p": true, "buildvcs": true,
	"v": true, "x": true, "n": true, "a": true, "work": true, "modcacherw": true,
}

// parseBuilds reads the builds file.
func parseBuilds(r io.Reader) ([]build, error) {
	var builds []build
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		b, ok, err := parseLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if ok {
			builds = append(builds, b)
		}
	}
	return builds, sc.Err()
}

// parseLine reads one line of the builds file; ok is false for a blank line or a comment.
func parseLine(line string) (b build, ok bool, err error) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return build{}, false, nil
	}
	fields := strings.Split(line, "|")
	if len(fields) != 5 {
		return build{}, false, fmt.Errorf("%d fields, want 5: name | module dir | env | flags | packages", len(fields))
	}
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	b = build{Name: fields[0], Dir: fields[1], Env: strings.Fields(fields[2]), Packages: strings.Fields(fields[4])}
	if b.Name == "" || b.Dir == "" || len(b.Packages) == 0 {
		return build{}, false, errors.New("a build needs a name, a module dir and packages")
	}
	for _, e := range b.Env {
		if k, _, found := strings.Cut(e, "="); !found || k == "" {
			return build{}, false, fmt.Errorf("env %q is not NAME=VALUE", e)
		}
	}
	words := strings.Fields(fields[3])
	for i := 0; i < len(words); i++ {
		word := words[i]
		if !strings.HasPrefix(word, "-") {
			return build{}, false, fmt.Errorf("flag %q does not start with -", word)
		}
		// The flag package accepts -name and --name, and a value as -name=value or as the
		// next word.
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(word, "-"), "-"), "=")
		if valueFlags[name] && !hasValue {
			if i+1 == len(words) {
				return build{}, false, fmt.Errorf("flag %s needs a value", word)
			}
			i++
			value = words[i]
		}
		switch {
		case name == "tags":
			b.Tags = value
		case name == "gcflags":
			b.Gcflags = append(b.Gcflags, value)
		case name == "trimpath":
			if !hasValue {
				value = "true"
			}
			if b.Trimpath, err = strconv.ParseBool(value); err != nil {
				return build{}, false, fmt.Errorf("flag %s: %w", word, err)
			}
		case !harmlessFlags[name]:
			b.Ignored = append(b.Ignored, word)
		}
	}
	return b, true, nil
}

// gcflagsFor returns the compiler flags a package gets. As in the go command, a -gcflags
// value without a pattern applies to the packages named on the command line only, a value
// pattern=flags to the packages the pattern matches, and the last value that applies wins.
// Every pattern is taken to match every package, which is exact for the usual "all".
func gcflagsFor(gcflags []string, named bool) string {
	out := ""
	for _, v := range gcflags {
		pattern, flags, found := strings.Cut(v, "=")
		switch {
		case !found || strings.HasPrefix(pattern, "-"):
			if named {
				out = v
			}
		default:
			out = flags
		}
	}
	return out
}

// pkg is one package of a build, as go list reports it.
type pkg struct {
	ImportPath string
	Module     string // the module path; "std" for the standard library
	Version    string // the module version; "(main)" for the main module
	Named      bool   // named on the command line, not only a dependency
	Files      []string
	Imports    []string
	Size       int64
}

// variant is what a build sets for all its packages and the key includes.
type variant struct {
	GoVersion string // the toolchain's, as the compiler's own ID is in the action ID
	Target    string // GOOS/GOARCH
	Trimpath  bool
	Gcflags   []string
}

// keys computes the key of every package of one build, by import path.
func keys(pkgs map[string]*pkg, v variant) map[string]string {
	out := map[string]string{}
	var keyOf func(path string) string
	keyOf = func(path string) string {
		if k, ok := out[path]; ok {
			return k
		}
		p, ok := pkgs[path]
		if !ok {
			// go list has reported an error for a package it cannot find; its path stands in
			// for its key.
			return "missing " + path
		}
		// An import cycle, which go list reports as an error, ends here instead of recursing
		// without end.
		out[path] = "cycle " + path
		var deps []string
		for _, imp := range p.Imports {
			if imp != "C" && imp != "unsafe" {
				deps = append(deps, keyOf(imp))
			}
		}
		slices.Sort(deps)
		h := sha256.New()
		_, _ = fmt.Fprintf(h, "import %s\nmodule %s@%s\ngo %s\ntarget %s\ntrimpath %v\ngcflags %q\n",
			p.ImportPath, p.Module, p.Version, v.GoVersion, v.Target, v.Trimpath, gcflagsFor(v.Gcflags, p.Named))
		for _, f := range slices.Sorted(slices.Values(p.Files)) {
			_, _ = fmt.Fprintf(h, "file %s\n", f)
		}
		for _, d := range deps {
			_, _ = fmt.Fprintf(h, "dep %s\n", d)
		}
		out[path] = hex.EncodeToString(h.Sum(nil))
		return out[path]
	}
	for path := range pkgs {
		keyOf(path)
	}
	return out
}

// listed is what go list -json reports of a package.
type listed struct {
	ImportPath string
	Dir        string
	Standard   bool
	DepOnly    bool
	Module     *listedModule
	GoFiles    []string
	CgoFiles   []string
	SFiles     []string
	Imports    []string // resolved import paths (vendor/... in the standard library)
	Error      *struct{ Err string }
}

type listedModule struct {
	Path    string
	Version string
	Dir     string
	Main    bool
	Replace *listedModule
}

// moduleOf returns the module path and version a package is compiled from. A replacement
// decides the version: a module version it names, or the directory it points to.
func moduleOf(l *listed) (path, version string) {
	m := l.Module
	switch {
	case l.Standard || m == nil:
		return "std", "" // The caller sets the toolchain's version.
	case m.Main:
		return m.Path, "(main)"
	case m.Replace == nil:
		return m.Path, m.Version
	case m.Replace.Version == "":
		return m.Path, "dir " + m.Replace.Dir
	case m.Replace.Path != m.Path:
		return m.Path, m.Replace.Path + "@" + m.Replace.Version
	default:
		return m.Path, m.Replace.Version
	}
}

// goCmd runs the go command in the build's module dir with the build's env added.
func goCmd(b build, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = b.Dir
	cmd.Env = append(os.Environ(), b.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

// list runs go list for one build and keys its packages. go list runs with -e so that a
// package with an error is still counted; the error goes to standard error.
func list(b build) (buildResult, error) {
	envOut, err := goCmd(b, "env", "GOVERSION", "GOOS", "GOARCH")
	if err != nil {
		return buildResult{}, err
	}
	env := strings.Fields(string(envOut))
	if len(env) != 3 {
		return buildResult{}, fmt.Errorf("go env printed %q", envOut)
	}
	v := variant{GoVersion: env[0], Target: env[1] + "/" + env[2], Trimpath: b.Trimpath, Gcflags: b.Gcflags}

	args := []string{"list", "-e", "-deps", "-json=ImportPath,Dir,Standard,DepOnly,Module,GoFiles,CgoFiles,SFiles,Imports,Error"}
	if b.Tags != "" {
		args = append(args, "-tags="+b.Tags)
	}
	out, err := goCmd(b, append(args, b.Packages...)...)
	if err != nil {
		return buildResult{}, err
	}
	pkgs := map[string]*pkg{}
	var order []string
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var l listed
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			return buildResult{}, fmt.Errorf("reading go list's output: %w", err)
		}
		if l.Error != nil {
			_, _ = fmt.Fprintf(os.Stderr, "compilevolume: %s: go list: %s: %s\n", b.Name, l.ImportPath, l.Error.Err)
		}
		// "C" stands for cgo's C code and "unsafe" is built into the compiler: neither is
		// compiled from Go source.
		if l.ImportPath == "C" || l.ImportPath == "unsafe" {
			continue
		}
		p := &pkg{ImportPath: l.ImportPath, Named: !l.DepOnly, Imports: l.Imports}
		p.Module, p.Version = moduleOf(&l)
		if p.Module == "std" {
			// The standard library's version is the toolchain's: a go.mod that asks for a
			// newer Go makes the go command switch to that toolchain.
			p.Version = v.GoVersion
		}
		p.Files = slices.Concat(l.GoFiles, l.CgoFiles, l.SFiles)
		for _, f := range p.Files {
			fi, err := os.Stat(filepath.Join(l.Dir, f))
			if err != nil {
				return buildResult{}, err
			}
			p.Size += fi.Size()
		}
		pkgs[p.ImportPath] = p
		order = append(order, p.ImportPath)
	}
	k := keys(pkgs, v)
	r := buildResult{Name: b.Name}
	for _, path := range order {
		p := pkgs[path]
		r.Pkgs = append(r.Pkgs, compiled{ImportPath: path, Module: p.Module, Version: p.Version,
			Variant: fmt.Sprintf("%s %s trimpath=%v gcflags=%q", v.GoVersion, v.Target, v.Trimpath, gcflagsFor(v.Gcflags, p.Named)),
			Key:     k[path], Size: p.Size})
	}
	return r, nil
}

// compiled is one package as one build compiles it.
type compiled struct {
	ImportPath, Module, Version string
	Variant                     string // the toolchain, target and flags it is compiled with
	Key                         string
	Size                        int64
}

// buildResult is the packages one build compiles.
type buildResult struct {
	Name string
	Pkgs []compiled
}

// Report holds the figures the program writes. Sizes are in bytes.
type Report struct {
	Builds  []BuildFigures
	Totals  Totals
	Modules []ModuleCost // the modules costing the most beyond their first compile, most first
}

// BuildFigures is one build's packages, and what of them no build above it compiles.
type BuildFigures struct {
	Name        string
	Packages    int
	Bytes       int64
	NewPackages int
	NewBytes    int64
}

// Totals sums over all builds. Actions are the compiles summed over the builds, what builds
// that share no cache compile; Keys are the distinct keys, what builds that share one cold
// cache compile; ImportPaths are the distinct import paths, each counted at its first compile;
// MultiKeyPaths are the import paths compiled under more than one key, and ExtraBytes what
// they compile beyond their first compile (KeyBytes = ImportPathBytes + ExtraBytes).
type Totals struct {
	Actions         int
	ActionBytes     int64
	Keys            int
	KeyBytes        int64
	ImportPaths     int
	ImportPathBytes int64
	MultiKeyPaths   int
	ExtraBytes      int64
}

// ModuleCost is what a module's packages cost beyond their first compile.
type ModuleCost struct {
	Module     string
	ExtraBytes int64
	Paths      int      // its import paths compiled under more than one key
	MaxKeys    int      // the most keys one of its import paths is compiled under
	Versions   []string // the versions compiled, sorted
	Variants   int      // the toolchain, target and flag sets it is compiled with
}

// aggregate computes the figures, taking the builds in input order.
func aggregate(results []buildResult, top int) Report {
	var rep Report
	seen := map[string]bool{}
	type pathStat struct {
		module string
		keys   []int64 // the size under each key, in the order the keys are first seen
	}
	paths := map[string]*pathStat{}
	type moduleStat struct {
		versions, variants map[string]bool
		cost               ModuleCost
	}
	modules := map[string]*moduleStat{}
	for _, r := range results {
		f := BuildFigures{Name: r.Name}
		for _, c := range r.Pkgs {
			f.Packages++
			f.Bytes += c.Size
			m := modules[c.Module]
			if m == nil {
				m = &moduleStat{versions: map[string]bool{}, variants: map[string]bool{}, cost: ModuleCost{Module: c.Module}}
				modules[c.Module] = m
			}
			m.versions[c.Version] = true
			m.variants[c.Variant] = true
			if seen[c.Key] {
				continue
			}
			seen[c.Key] = true
			f.NewPackages++
			f.NewBytes += c.Size
			if paths[c.ImportPath] == nil {
				paths[c.ImportPath] = &pathStat{module: c.Module}
			}
			paths[c.ImportPath].keys = append(paths[c.ImportPath].keys, c.Size)
		}
		rep.Builds = append(rep.Builds, f)
		rep.Totals.Actions += f.Packages
		rep.Totals.ActionBytes += f.Bytes
		rep.Totals.Keys += f.NewPackages
		rep.Totals.KeyBytes += f.NewBytes
	}
	for _, p := range paths {
		rep.Totals.ImportPaths++
		rep.Totals.ImportPathBytes += p.keys[0]
		if len(p.keys) == 1 {
			continue
		}
		var extra int64
		for _, size := range p.keys[1:] {
			extra += size
		}
		rep.Totals.MultiKeyPaths++
		rep.Totals.ExtraBytes += extra
		m := &modules[p.module].cost
		m.ExtraBytes += extra
		m.Paths++
		m.MaxKeys = max(m.MaxKeys, len(p.keys))
	}
	for _, m := range modules {
		if m.cost.Paths == 0 {
			continue
		}
		m.cost.Versions = slices.Sorted(maps.Keys(m.versions))
		m.cost.Variants = len(m.variants)
		rep.Modules = append(rep.Modules, m.cost)
	}
	slices.SortFunc(rep.Modules, func(a, b ModuleCost) int {
		return cmp.Or(cmp.Compare(b.ExtraBytes, a.ExtraBytes), cmp.Compare(a.Module, b.Module))
	})
	if len(rep.Modules) > top {
		rep.Modules = rep.Modules[:top]
	}
	return rep
}

// mb writes a size in megabytes (10^6 bytes).
func mb(n int64) string { return fmt.Sprintf("%.1f", float64(n)/1e6) }

func writeText(w io.Writer, rep Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "Builds, in input order; \"new\" is what a build adds to a cache holding the builds above it:")
	_, _ = fmt.Fprintln(tw, "build\tpackages\tMB\tnew packages\tnew MB")
	for _, b := range rep.Builds {
		_, _ = fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\n", b.Name, b.Packages, mb(b.Bytes), b.NewPackages, mb(b.NewBytes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	t := rep.Totals
	_, _ = fmt.Fprintln(w, "\nTotals:")
	_, _ = fmt.Fprintf(tw, "compile actions summed over builds (no sharing)\t%d\t%s MB\n", t.Actions, mb(t.ActionBytes))
	_, _ = fmt.Fprintf(tw, "distinct keys (cold compile volume, one shared cache)\t%d\t%s MB\n", t.Keys, mb(t.KeyBytes))
	_, _ = fmt.Fprintf(tw, "distinct import paths (each compiled once)\t%d\t%s MB\n", t.ImportPaths, mb(t.ImportPathBytes))
	_, _ = fmt.Fprintf(tw, "import paths compiled under more than one key\t%d\t%s MB beyond the first compile\n", t.MultiKeyPaths, mb(t.ExtraBytes))
	if err := tw.Flush(); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(w, "\nModules by MB compiled beyond the first compile of their packages (%d listed):\n", len(rep.Modules))
	_, _ = fmt.Fprintln(w, "(paths: its import paths compiled under more than one key; variants: toolchain, target and flag sets)")
	_, _ = fmt.Fprintln(tw, "module\textra MB\tpaths\tmax keys\tvariants\tversions")
	for _, m := range rep.Modules {
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", m.Module, mb(m.ExtraBytes), m.Paths, m.MaxKeys, m.Variants, strings.Join(m.Versions, " "))
	}
	return tw.Flush()
}
