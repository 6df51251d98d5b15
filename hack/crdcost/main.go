// Command crdcost validates a CRD as the API server of the oldest Kubernetes release the bundle
// supports validates it when the CRD is created:
//
//	go run . -min-kube-version 1.34.0 CRD_FILE
//
// This module is pinned to that release's k8s.io/apiextensions-apiserver (go.mod), and the
// command fails when -min-kube-version (the CSV's minKubeVersion) names another minor release,
// so that the two move together.
//
// The project's control plane is 1.36. The API server estimates the cost of every CEL rule of a
// CRD and refuses the whole CRD when one rule, or all of them together, exceed its budget. The
// MyApp CRD's rules come near it, and older releases price some functions higher: the quantity
// rules of spec.resources are over budget on 1.30 to 1.33, whose API servers refuse the CRD.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"sigs.k8s.io/yaml"
)

const module = "k8s.io/apiextensions-apiserver"

func main() {
	minKube := flag.String("min-kube-version", "", "the bundle's minKubeVersion, e.g. 1.34.0")
	top := flag.Int("costs", 0, "also print the share of the CEL budget the rules take, and the `n` most expensive rules")
	flag.Parse()
	if *minKube == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: crdcost -min-kube-version VERSION CRD_FILE")
		os.Exit(2)
	}
	release, err := pinnedRelease()
	if err != nil {
		fail(err)
	}
	if minor(*minKube) != minor(release) {
		fail(fmt.Errorf("the bundle's minKubeVersion is %s, but this check runs the validation of Kubernetes %s: pin %s in hack/crdcost/go.mod to the minKubeVersion's minor release",
			*minKube, release, module))
	}
	path := flag.Arg(0)
	errs, crd, err := validate(path)
	if err != nil {
		fail(err)
	}
	for _, e := range errs {
		fmt.Fprintln(os.Stderr, "crdcost:", e)
	}
	if *top > 0 {
		if err := reportCosts(os.Stdout, crd, *top); err != nil {
			fail(err)
		}
	}
	if len(errs) > 0 {
		fail(fmt.Errorf("the API server of Kubernetes %s would refuse %s (%d errors)", release, path, len(errs)))
	}
	fmt.Printf("crdcost: the API server of Kubernetes %s accepts %s, every CEL rule within its cost budget\n", release, path)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "crdcost:", err)
	os.Exit(1)
}

// pinnedRelease is the Kubernetes release of the apiextensions-apiserver this binary is built
// with: v0.34.1 is Kubernetes 1.34.1. A replace line (hack/tools/align.sh puts crdcost on
// OLM's graph) names the version built.
func pinnedRelease() (string, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", fmt.Errorf("no build information")
	}
	for _, d := range info.Deps {
		if d.Path == module {
			if d.Replace != nil {
				d = d.Replace
			}
			return "1." + strings.TrimPrefix(d.Version, "v0."), nil
		}
	}
	return "", fmt.Errorf("%s is not a dependency", module)
}

// minor is "1.34" of "1.34.0" or "v1.34.4".
func minor(version string) string {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return version
	}
	return parts[0] + "." + parts[1]
}

// validate returns what the create validation of the pinned release says about the CRD.
func validate(path string) ([]string, *apiextensions.CustomResourceDefinition, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(b, crd); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		return nil, nil, err
	}
	// What the API server's create strategy records before it validates.
	for _, v := range internal.Spec.Versions {
		if v.Storage {
			internal.Status.StoredVersions = []string{v.Name}
		}
	}
	errs := validation.ValidateCustomResourceDefinition(context.Background(), internal)
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out, internal, nil
}
