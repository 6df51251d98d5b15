// Command crdupgrade is the CRD upgrade-safety gate of make verify: it compares the CRD the
// previous release shipped with the current one using sigs.k8s.io/crdify, configured as OLM
// v1's preflight is, and fails on any change OLM v1 would refuse (a removed stored version, a
// new required field, a new or changed default, a new enum restriction, tighter bounds, a
// changed type or any change no rule knows) unless an exception, reviewed and reasoned,
// allows exactly that rule on exactly that field.
//
//	crdupgrade -old releases/0.2.0/manifests/example.com_myapps.yaml \
//	           -new config/crd/bases/example.com_myapps.yaml -exceptions hack/crdupgrade/from-0.2.0.yaml
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	oldPath := flag.String("old", "", "the CRD of the previous release")
	newPath := flag.String("new", "", "the current CRD")
	exPath := flag.String("exceptions", "", "the reviewed exceptions for this upgrade (optional)")
	flag.Parse()
	if *oldPath == "" || *newPath == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*oldPath, *newPath, *exPath); err != nil {
		fmt.Fprintln(os.Stderr, "crdupgrade:", err)
		os.Exit(1)
	}
}

func run(oldPath, newPath, exPath string) error {
	oldCRD, err := readCRD(oldPath)
	if err != nil {
		return err
	}
	newCRD, err := readCRD(newPath)
	if err != nil {
		return err
	}
	var allowed []exception
	if exPath != "" {
		ex, err := readExceptions(exPath)
		if err != nil {
			return err
		}
		allowed = ex.Exceptions
	}
	found, err := violations(oldCRD, newCRD)
	if err != nil {
		return err
	}
	failures, stale := gate(found, allowed)
	for _, v := range found {
		if !contains(failures, v) {
			fmt.Printf("allowed by a reviewed exception: %s\n", v)
		}
	}
	for _, v := range failures {
		fmt.Fprintf(os.Stderr, "NOT SAFE for OLM v1: %s\n", v)
	}
	for _, e := range stale {
		fmt.Fprintf(os.Stderr, "stale exception (matches no change; remove it): %s %s %s\n", e.Version, e.Property, e.Rule)
	}
	if len(failures) > 0 || len(stale) > 0 {
		return fmt.Errorf("%s -> %s: %d unsafe change(s), %d stale exception(s)", oldPath, newPath, len(failures), len(stale))
	}
	fmt.Printf("crdupgrade: %s -> %s is safe for OLM v1's preflight (%d reviewed exception(s))\n", oldPath, newPath, len(allowed))
	return nil
}

func contains(vs []violation, v violation) bool {
	for _, w := range vs {
		if w.key() == v.key() && w.Message == v.Message {
			return true
		}
	}
	return false
}
