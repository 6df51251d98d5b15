// Command image builds OCI images from static binaries and serves a small registry, so that
// the project's images can be built, pushed and pulled with no Docker engine.
//
//	image build --tag REF --add SRC:DEST [--add ...] [--entrypoint /manager] [--user 65532:65532]
//	            [--link DEST=TARGET] [--label KEY=VALUE] [--arch amd64] [--output image.tar] [--push [--by-digest]]
//	image registry --addr HOST:PORT --dir DIR [--addr-file F] [--tls-addr HOST:PORT --tls-cert F --tls-key F]
//
// An image is one layer holding the given files plus the /etc/passwd, /etc/group, /tmp and
// /home/nonroot that a distroless "static" base provides, so a binary built for such a base
// (the Dockerfile's) runs the same. Every file gets the same fixed time, so building the same
// binaries twice gives the same digest.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = buildCommand(os.Args[2:])
	case "registry":
		err = registryCommand(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: image build|registry [flags]; image build -h for the flags")
	os.Exit(2)
}

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func buildCommand(args []string) error {
	var spec imageSpec
	var adds, env, links, labels listFlag
	var output string
	var push, byDigest bool
	fs := flag.NewFlagSet("image build", flag.ExitOnError)
	fs.StringVar(&spec.Tag, "tag", "", "the image reference, e.g. 10.244.0.1:5000/myapp-operator:v0.2.0")
	fs.Var(&adds, "add", "SRC:DEST, a file or folder to put in the image (repeatable); DEST is absolute")
	fs.Var(&links, "link", "DEST=TARGET, a symbolic link to put in the image (repeatable)")
	fs.Var(&labels, "label", "KEY=VALUE, a label of the image (repeatable)")
	fs.StringVar(&spec.Entrypoint, "entrypoint", "", "the program to run, e.g. /manager (arguments after it with commas); none if empty")
	fs.StringVar(&spec.User, "user", "65532:65532", "the user and group the image runs as")
	fs.StringVar(&spec.Arch, "arch", "", "the architecture the image declares (default: this machine's); e.g. amd64 for\n"+
		"images of data, such as bundles, whose digest must not depend on the machine that builds them")
	fs.Var(&env, "env", "NAME=VALUE for the image's environment (repeatable)")
	fs.StringVar(&output, "output", "", "write the image to this tarball (docker load / ctr images import)")
	fs.BoolVar(&push, "push", false, "push the image to the registry its tag names (plain HTTP for addresses on this machine)")
	fs.BoolVar(&byDigest, "by-digest", false, "with --push, push the image by its digest only, leaving no tag in the repository")
	_ = fs.Parse(args)
	if spec.Tag == "" || len(adds) == 0 || (output == "" && !push) {
		fs.Usage()
		return fmt.Errorf("--tag, --add and one of --output or --push are required")
	}
	for _, a := range adds {
		src, dest, ok := strings.Cut(a, ":")
		if !ok || !strings.HasPrefix(dest, "/") {
			return fmt.Errorf("--add %q: want SRC:/DEST", a)
		}
		files, err := expand(src, dest)
		if err != nil {
			return err
		}
		spec.Files = append(spec.Files, files...)
	}
	for _, l := range links {
		dest, target, ok := strings.Cut(l, "=")
		if !ok || !strings.HasPrefix(dest, "/") {
			return fmt.Errorf("--link %q: want /DEST=TARGET", l)
		}
		spec.Files = append(spec.Files, fileSpec{Dest: dest, LinkTarget: target})
	}
	spec.Labels = map[string]string{}
	for _, l := range labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return fmt.Errorf("--label %q: want KEY=VALUE", l)
		}
		spec.Labels[k] = v
	}
	spec.Env = env
	img, err := build(spec)
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	if output != "" {
		if err := writeTarball(output, spec.Tag, img); err != nil {
			return err
		}
		fmt.Printf("wrote %s (%s) to %s\n", spec.Tag, digest, output)
	}
	if push {
		if err := pushImage(spec.Tag, img, byDigest); err != nil {
			return err
		}
		fmt.Printf("pushed %s@%s\n", spec.Tag, digest)
	}
	return nil
}

func registryCommand(args []string) error {
	fs := flag.NewFlagSet("image registry", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:5000", "address to serve plain HTTP on")
	dir := fs.String("dir", "", "folder for the blobs (manifests stay in memory)")
	addrFile := fs.String("addr-file", "", "once listening, write the plain HTTP address here (for --addr HOST:0, a free port)")
	var tls tlsListener
	fs.StringVar(&tls.addr, "tls-addr", "", "also serve the same images over HTTPS on this address")
	fs.StringVar(&tls.cert, "tls-cert", "", "the HTTPS serving certificate")
	fs.StringVar(&tls.key, "tls-key", "", "the HTTPS serving key")
	_ = fs.Parse(args)
	if *dir == "" {
		return fmt.Errorf("--dir is required")
	}
	if tls.addr != "" && (tls.cert == "" || tls.key == "") {
		return fmt.Errorf("--tls-addr needs --tls-cert and --tls-key")
	}
	return serveRegistry(*addr, *addrFile, *dir, tls)
}
