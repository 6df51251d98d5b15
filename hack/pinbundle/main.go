// Command pinbundle writes a copy of an operator bundle with every image its
// ClusterServiceVersion names pinned by digest (package pin):
//
//	pinbundle -bundle bundle -out DIR -image example.com/myapp-operator:v0.5.0=example.com/myapp-operator@sha256:...
//
// Each -image maps a reference the CSV names to the digest reference that replaces it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/example/myapp-operator/hack/pinbundle/pin"
)

func main() {
	bundle := flag.String("bundle", "", "the bundle directory (manifests/, metadata/, tests/)")
	out := flag.String("out", "", "the directory to write the pinned bundle to (replaced)")
	images := pin.Images{}
	flag.Var(images, "image", "FROM=REPOSITORY@sha256:DIGEST: an image the CSV names and its digest reference (repeatable)")
	flag.Parse()
	if *bundle == "" || *out == "" || len(images) == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := pin.Dir(*bundle, *out, images); err != nil {
		fmt.Fprintln(os.Stderr, "pinbundle:", err)
		os.Exit(1)
	}
}
