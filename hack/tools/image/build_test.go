package main

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestBuildIsReproducibleAndLikeDistrolessStatic(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "manager")
	if err := os.WriteFile(bin, []byte("#!static binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := imageSpec{Tag: "example.com/x:v1", Files: []fileSpec{{Source: bin, Dest: "/manager"}},
		Entrypoint: "/manager", User: "65532:65532"}
	first, err := build(spec)
	if err != nil {
		t.Fatal(err)
	}
	second, err := build(spec)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := first.Digest()
	d2, _ := second.Digest()
	if d1 != d2 {
		t.Errorf("two builds of the same files differ: %s, %s", d1, d2)
	}

	cf, err := first.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != "/manager" {
		t.Errorf("config: user %q, entrypoint %q", cf.Config.User, cf.Config.Entrypoint)
	}

	layers, err := first.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	modes := map[string]int64{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		modes[h.Name] = h.Mode
	}
	for name, mode := range map[string]int64{"etc/passwd": 0o644, "etc/group": 0o644, "tmp/": 0o1777, "home/nonroot/": 0o700, "manager": 0o755} {
		if got, ok := modes[name]; !ok || got != mode {
			t.Errorf("%s: mode %o (present %v), want %o", name, got, ok, mode)
		}
	}
}
