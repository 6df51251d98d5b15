// Command catalogcheck checks the upgrade graph of a file-based catalog beyond what
// `opm validate` does, and that every bundle names a published image by digest:
//
//	catalogcheck [-allow-unpinned] CATALOG_DIR
//
// It fails on a dangling bundle (in no channel), a loop along replaces, a replaces that names
// a bundle outside its channel, a channel entry without a bundle, more or less than one channel
// head, an entry from which no upgrade leads to the head, a replaces of a newer version, and a
// bundle image that is missing or not pinned by digest (mirroring for disconnected clusters
// and OLM v1 need the image; a digest keeps what was tested what is installed).
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	allowUnpinned := flag.Bool("allow-unpinned", false, "accept bundles without an image or with a tag only")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: catalogcheck [-allow-unpinned] CATALOG_DIR")
		os.Exit(2)
	}
	pkgs, err := load(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "catalogcheck:", err)
		os.Exit(1)
	}
	if len(pkgs) == 0 {
		fmt.Fprintf(os.Stderr, "catalogcheck: no catalog objects under %s\n", flag.Arg(0))
		os.Exit(1)
	}
	problems := check(pkgs, !*allowUnpinned)
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "catalogcheck:", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
	fmt.Printf("catalogcheck: %s: upgrade graph and bundle images OK\n", flag.Arg(0))
}
