package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// imageSpec says what goes into an image.
type imageSpec struct {
	Tag        string
	Files      []fileSpec
	Entrypoint string // the program, then its arguments separated by commas; none if empty
	User       string // uid:gid
	Env        []string
	Labels     map[string]string
	Arch       string // the architecture the config names; this machine's if empty
}

// fileSpec is a file of this machine and where it goes in the image, or a symbolic link.
type fileSpec struct{ Source, Dest, LinkTarget string }

// expand lists a file, or every file under a folder, with where it goes under dest.
func expand(src, dest string) ([]fileSpec, error) {
	info, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []fileSpec{{Source: src, Dest: dest}}, nil
	}
	var files []fileSpec
	err = filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		files = append(files, fileSpec{Source: p, Dest: path.Join(dest, filepath.ToSlash(rel))})
		return nil
	})
	return files, err
}

// epoch is the time of every file and of the image itself, so builds are reproducible.
var epoch = time.Unix(0, 0).UTC()

// baseFiles are what the distroless "static" base gives a program: a user database naming
// root and nonroot (65532), a home for nonroot and a world-writable /tmp.
var baseFiles = map[string]string{
	"/etc/passwd": "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
	"/etc/group": "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n",
}

// baseDirs are the folders of the base, with their modes and owners.
var baseDirs = []struct {
	path     string
	mode     int64
	uid, gid int
}{
	{"/etc", 0o755, 0, 0},
	{"/home", 0o755, 0, 0},
	{"/home/nonroot", 0o700, 65532, 65532},
	{"/root", 0o700, 0, 0},
	{"/tmp", 0o1777, 0, 0},
}

// build makes a one-layer OCI image for this machine's architecture.
func build(spec imageSpec) (v1.Image, error) {
	layerTar, err := layerBytes(spec.Files)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	if spec.Arch != "" {
		cf.Architecture = spec.Arch
	}
	cf.Created = v1.Time{Time: epoch}
	cf.Config = v1.Config{
		User:       spec.User,
		WorkingDir: "/",
		Env:        append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, spec.Env...),
		Labels:     spec.Labels,
	}
	if spec.Entrypoint != "" {
		cf.Config.Entrypoint = strings.Split(spec.Entrypoint, ",")
	}
	return mutate.ConfigFile(img, cf)
}

// layerBytes writes the base's folders and files, then the given files, into a tar.
func layerBytes(files []fileSpec) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range baseDirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d.path, "/") + "/",
			Mode: d.mode, Uid: d.uid, Gid: d.gid, ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(baseFiles))
	for n := range baseFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := writeFile(tw, n, 0o644, []byte(baseFiles[n])); err != nil {
			return nil, err
		}
	}
	dirs := map[string]bool{}
	for _, d := range baseDirs {
		dirs[d.path] = true
	}
	for _, f := range files {
		if f.LinkTarget != "" {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: strings.TrimPrefix(f.Dest, "/"),
				Linkname: f.LinkTarget, Mode: 0o777, ModTime: epoch}); err != nil {
				return nil, err
			}
			continue
		}
		data, err := os.ReadFile(f.Source)
		if err != nil {
			return nil, err
		}
		info, err := os.Stat(f.Source)
		if err != nil {
			return nil, err
		}
		// Parent folders the base does not have, e.g. /usr/local/bin, outermost first.
		var parents []string
		for dir := path.Dir(f.Dest); dir != "/" && !dirs[dir]; dir = path.Dir(dir) {
			dirs[dir] = true
			parents = append([]string{dir}, parents...)
		}
		for _, dir := range parents {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(dir, "/") + "/",
				Mode: 0o755, ModTime: epoch}); err != nil {
				return nil, err
			}
		}
		if err := writeFile(tw, f.Dest, int64(info.Mode().Perm()), data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeFile(tw *tar.Writer, dest string, mode int64, data []byte) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(dest, "/"),
		Mode: mode, Size: int64(len(data)), ModTime: epoch}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// writeTarball saves the image as a tarball that `docker load` and `ctr images import` read.
func writeTarball(file, tag string, img v1.Image) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag %q: %w", tag, err)
	}
	return tarball.WriteToFile(file, ref, img)
}

// pushImage pushes to the registry the tag names, with the credentials of the Docker config
// if any. A registry on a loopback or private address is spoken to over plain HTTP.
func pushImage(tag string, img v1.Image, byDigest bool) error {
	t, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag %q: %w", tag, err)
	}
	var ref name.Reference = t
	if byDigest {
		// The manifest goes to the repository under its digest only, as a mirror of a
		// disconnected cluster holds it: nothing there can be pulled by tag.
		digest, err := img.Digest()
		if err != nil {
			return err
		}
		if ref, err = name.NewDigest(t.Context().String() + "@" + digest.String()); err != nil {
			return err
		}
	}
	return remote.Write(ref, img, remote.WithAuthFromKeychain(authn.DefaultKeychain))
}
