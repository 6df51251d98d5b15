// Command untar unpacks a gzipped tar archive, for images that must run `tar xzf FILE -C DIR`
// (operator-sdk scorecard's untar image) without a shell or a tar of their own:
//
//	untar [tar] [xvzf|xzf] FILE -C DIR
//
// A leading "tar" and the letter flags are accepted and ignored, so the image's entrypoint can
// be this program and the pod's arguments those of tar. Entries that would land outside DIR
// are refused.
package main

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	file, dir, err := parseArgs(os.Args[1:])
	if err == nil {
		err = untar(file, dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "untar:", err)
		os.Exit(1)
	}
}

func parseArgs(args []string) (file, dir string, err error) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-C" && i+1 < len(args):
			dir = args[i+1]
			i++
		case a == "tar" || (!strings.HasPrefix(a, "/") && strings.Trim(a, "-xvzf") == ""):
		default:
			file = a
		}
	}
	if file == "" || dir == "" {
		return "", "", errors.New("usage: untar [tar] [xvzf] FILE -C DIR")
	}
	return file, dir, nil
}

func untar(file, dir string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dir, h.Name)
		if target != filepath.Clean(dir) && !strings.HasPrefix(target, filepath.Clean(dir)+string(os.PathSeparator)) {
			return fmt.Errorf("%s: outside %s", h.Name, dir)
		}
		fmt.Println(h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode).Perm())
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}
