package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// good is a catalog of three versions in one channel, the shape of ours.
const good = `
schema: olm.package
name: p
defaultChannel: alpha
---
schema: olm.channel
package: p
name: alpha
entries:
- name: p.v0.1.0
- name: p.v0.2.0
  replaces: p.v0.1.0
- name: p.v0.3.0
  replaces: p.v0.2.0
  skipRange: '>=0.1.0 <0.3.0'
` + bundle010 + bundle020 + bundle030

const (
	bundle010 = "---\n" + `schema: olm.bundle
package: p
name: p.v0.1.0
image: example.com/p-bundle@sha256:0101010101010101010101010101010101010101010101010101010101010101
properties: [{type: olm.package, value: {packageName: p, version: 0.1.0}}]
`
	bundle020 = "---\n" + `schema: olm.bundle
package: p
name: p.v0.2.0
image: example.com/p-bundle@sha256:0202020202020202020202020202020202020202020202020202020202020202
properties: [{type: olm.package, value: {packageName: p, version: 0.2.0}}]
`
	bundle030 = "---\n" + `schema: olm.bundle
package: p
name: p.v0.3.0
image: example.com/p-bundle@sha256:0303030303030303030303030303030303030303030303030303030303030303
properties: [{type: olm.package, value: {packageName: p, version: 0.3.0}}]
`
)

func TestCheck(t *testing.T) {
	cases := []struct {
		name    string
		catalog string
		want    string // a problem that must be reported; "" for none at all
	}{
		{name: "good", catalog: good},
		{name: "dangling bundle", catalog: good + "---\n" + strings.ReplaceAll(bundle030[4:], "0.3.0", "0.4.0"),
			want: "bundle p.v0.4.0 is dangling: in no channel"},
		{name: "loop", catalog: strings.Replace(good, "- name: p.v0.1.0\n", "- name: p.v0.1.0\n  replaces: p.v0.3.0\n", 1),
			want: "loops back"},
		{name: "replaces outside the channel", catalog: strings.Replace(good, "replaces: p.v0.1.0", "replaces: p.v0.0.9", 1),
			want: "p.v0.2.0 replaces p.v0.0.9, which is not in the channel"},
		{name: "entry without a bundle", catalog: strings.Replace(good, bundle010, "", 1),
			want: "entry p.v0.1.0 has no olm.bundle"},
		{name: "two heads", catalog: strings.Replace(good, "  replaces: p.v0.2.0\n", "", 1),
			want: "want one head"},
		{name: "stranded in a loop apart from the head", catalog: strings.Replace(good, "- name: p.v0.1.0\n",
			"- name: p.v0.1.0\n- name: p.v0.1.5\n  replaces: p.v0.1.6\n- name: p.v0.1.6\n  replaces: p.v0.1.5\n", 1) +
			"---\n" + strings.ReplaceAll(bundle010[4:], "0.1.0", "0.1.5") + "---\n" + strings.ReplaceAll(bundle010[4:], "0.1.0", "0.1.6"),
			want: "entry p.v0.1.5 is stranded"},
		{name: "replaces a newer version", catalog: strings.Replace(good, "version: 0.2.0", "version: 0.0.2", 1), want: "p.v0.2.0 (0.0.2) replaces p.v0.1.0 (0.1.0), which is not older"},
		{name: "bundle from a directory", catalog: strings.Replace(good, "image: example.com/p-bundle@sha256:0202020202020202020202020202020202020202020202020202020202020202", `image: ""`, 1),
			want: "bundle p.v0.2.0 has no image"},
		{name: "bundle by tag", catalog: strings.Replace(good, "p-bundle@sha256:0303030303030303030303030303030303030303030303030303030303030303", "p-bundle:v0.3.0", 1),
			want: "image example.com/p-bundle:v0.3.0 is not pinned by digest"},
		{name: "bad skipRange", catalog: strings.Replace(good, "'>=0.1.0 <0.3.0'", "'not a range'", 1),
			want: "invalid skipRange"},
		{name: "missing default channel", catalog: strings.Replace(good, "defaultChannel: alpha", "defaultChannel: stable", 1),
			want: "default channel stable does not exist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "catalog.yaml"), []byte(tc.catalog), 0o644); err != nil {
				t.Fatal(err)
			}
			pkgs, err := load(dir)
			if err != nil {
				t.Fatal(err)
			}
			problems := check(pkgs, true)
			if tc.want == "" {
				if len(problems) > 0 {
					t.Fatalf("want no problems, got %q", problems)
				}
				return
			}
			for _, p := range problems {
				if strings.Contains(p, tc.want) {
					return
				}
			}
			t.Fatalf("want a problem containing %q, got %q", tc.want, problems)
		})
	}
}

// TestCommittedCatalog checks catalog/ as committed: the published one must pass.
func TestCommittedCatalog(t *testing.T) {
	pkgs, err := load(filepath.Join("..", "..", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		t.Fatal("no catalog objects under catalog/")
	}
	if problems := check(pkgs, true); len(problems) > 0 {
		t.Fatalf("catalog/ has problems: %q", problems)
	}
}
