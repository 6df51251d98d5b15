package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// meta is the part of a file-based catalog object the graph checks read: olm.package,
// olm.channel and olm.bundle share one shape here, each using its own fields.
type meta struct {
	Schema         string     `json:"schema"`
	Name           string     `json:"name"`
	Package        string     `json:"package"`
	DefaultChannel string     `json:"defaultChannel"`
	Image          string     `json:"image"`
	Entries        []entry    `json:"entries"`
	Properties     []property `json:"properties"`
}

// entry is one bundle of a channel and the bundles it upgrades from.
type entry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces"`
	Skips     []string `json:"skips"`
	SkipRange string   `json:"skipRange"`
}

type property struct {
	Type  string         `json:"type"`
	Value map[string]any `json:"value"`
}

// catalog is one package's objects.
type catalog struct {
	pkg      *meta
	channels []meta
	bundles  map[string]meta
}

// load reads every YAML or JSON file under dir as a stream of catalog objects, grouped by package.
func load(dir string) (map[string]*catalog, error) {
	var objs []meta
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ext := filepath.Ext(path)
		if ext != ".yaml" && ext != ".yml" && ext != ".json" {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
		for {
			var m meta
			if err := dec.Decode(&m); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if m.Schema != "" {
				objs = append(objs, m)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return group(objs), nil
}

// group sorts objects into their packages.
func group(objs []meta) map[string]*catalog {
	pkgs := map[string]*catalog{}
	get := func(name string) *catalog {
		if pkgs[name] == nil {
			pkgs[name] = &catalog{bundles: map[string]meta{}}
		}
		return pkgs[name]
	}
	for i := range objs {
		o := objs[i]
		switch o.Schema {
		case "olm.package":
			get(o.Name).pkg = &o
		case "olm.channel":
			c := get(o.Package)
			c.channels = append(c.channels, o)
		case "olm.bundle":
			get(o.Package).bundles[o.Name] = o
		}
	}
	return pkgs
}

// check returns every problem of the upgrade graphs and bundle references of the catalog,
// sorted; none means it is publishable.
func check(pkgs map[string]*catalog, requireDigests bool) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for name, c := range pkgs {
		if c.pkg == nil {
			add("package %s: no olm.package object", name)
		}
		inChannel := map[string]bool{}
		channelNames := map[string]bool{}
		for _, ch := range c.channels {
			channelNames[ch.Name] = true
			for _, e := range ch.Entries {
				inChannel[e.Name] = true
			}
			checkChannel(c, ch, fmt.Sprintf("package %s channel %s", name, ch.Name), add)
		}
		if c.pkg != nil && c.pkg.DefaultChannel != "" && !channelNames[c.pkg.DefaultChannel] {
			add("package %s: default channel %s does not exist", name, c.pkg.DefaultChannel)
		}
		for bname, b := range c.bundles {
			if !inChannel[bname] {
				add("package %s: bundle %s is dangling: in no channel", name, bname)
			}
			switch {
			case b.Image == "" && requireDigests:
				add("package %s: bundle %s has no image (rendered from a directory?)", name, bname)
			case requireDigests && !strings.Contains(b.Image, "@sha256:"):
				add("package %s: bundle %s image %s is not pinned by digest", name, bname, b.Image)
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// checkChannel adds every problem of one channel's upgrade graph: entries without a bundle or
// listed twice, a replaces outside the channel or not older, an invalid skipRange, a loop
// along replaces, and anything but one head from which every entry can be reached.
func checkChannel(c *catalog, ch meta, where string, add func(string, ...any)) {
	entries := map[string]entry{}
	for _, e := range ch.Entries {
		if _, dup := entries[e.Name]; dup {
			add("%s: entry %s listed twice", where, e.Name)
		}
		entries[e.Name] = e
		if _, ok := c.bundles[e.Name]; !ok {
			add("%s: entry %s has no olm.bundle", where, e.Name)
		}
	}
	if len(entries) == 0 {
		add("%s: no entries", where)
		return
	}
	// Every replaces must name an entry of this channel: OLM v1 follows replaces only
	// inside a channel, so one pointing elsewhere leaves its bundle without an upgrade.
	upgradesFrom := map[string][]string{} // entry -> entries it replaces or skips
	replacedOrSkipped := map[string]bool{}
	for _, e := range ch.Entries {
		if e.Replaces != "" {
			if _, ok := entries[e.Replaces]; !ok {
				add("%s: %s replaces %s, which is not in the channel", where, e.Name, e.Replaces)
			} else {
				upgradesFrom[e.Name] = append(upgradesFrom[e.Name], e.Replaces)
			}
			replacedOrSkipped[e.Replaces] = true
		}
		for _, s := range e.Skips {
			replacedOrSkipped[s] = true
			if _, ok := entries[s]; ok {
				upgradesFrom[e.Name] = append(upgradesFrom[e.Name], s)
			}
		}
		if e.SkipRange != "" {
			if _, err := semver.ParseRange(e.SkipRange); err != nil {
				add("%s: %s has an invalid skipRange %q", where, e.Name, e.SkipRange)
			}
		}
		if e.Replaces != "" {
			older, newer := bundleVersion(c.bundles[e.Replaces]), bundleVersion(c.bundles[e.Name])
			if older != nil && newer != nil && !newer.GT(*older) {
				add("%s: %s (%s) replaces %s (%s), which is not older", where, e.Name, newer, e.Replaces, older)
			}
		}
	}
	// A loop along replaces: follow each chain until it ends or comes back.
	for _, e := range ch.Entries {
		seen := map[string]bool{e.Name: true}
		for cur := entries[e.Name].Replaces; cur != ""; cur = entries[cur].Replaces {
			if seen[cur] {
				add("%s: replaces chain from %s loops back to %s", where, e.Name, cur)
				break
			}
			seen[cur] = true
		}
	}
	// One head, from which every entry is reachable by replaces or skips.
	var heads []string
	for _, e := range ch.Entries {
		if !replacedOrSkipped[e.Name] {
			heads = append(heads, e.Name)
		}
	}
	sort.Strings(heads)
	if len(heads) != 1 {
		add("%s: want one head (an entry nothing replaces or skips), found %d: %s", where, len(heads), strings.Join(heads, ", "))
		return
	}
	reached := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		if reached[n] {
			return
		}
		reached[n] = true
		for _, m := range upgradesFrom[n] {
			walk(m)
		}
	}
	walk(heads[0])
	for _, e := range ch.Entries {
		if !reached[e.Name] {
			add("%s: entry %s is stranded: no upgrade path from it to the head %s", where, e.Name, heads[0])
		}
	}
}

// bundleVersion is the version of the bundle's olm.package property, nil if it has none.
func bundleVersion(b meta) *semver.Version {
	for _, p := range b.Properties {
		if p.Type != "olm.package" {
			continue
		}
		s, _ := p.Value["version"].(string)
		if v, err := semver.Parse(s); err == nil {
			return &v
		}
	}
	return nil
}
