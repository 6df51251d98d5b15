package bundle

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	"github.com/example/myapp-operator/hack/pinbundle/pin"
)

// The static bundle checks of Red Hat's certification tool, preflight 1.21.0 (`preflight check
// operator`, internal/policy/operator/): RequiredAnnotations, SecurityContextConstraintsInCSV,
// AllImageRefsInRelatedImages and FollowsRestrictedNetworkEnablementGuidelines. Its other
// bundle checks need a cluster (DeployableByOLM: the OLM suites install the bundle),
// Red Hat's image catalogue (BundleImageRefsAreCertified) or are operator-sdk's validators
// (ValidateOperatorBundle: make check-operatorhub runs them).

// requiredFeatures are the features.operators.openshift.io annotations preflight's
// RequiredAnnotations requires on the CSV; optionalFeatures may be left out. Each present
// one must say exactly "true" or "false".
var (
	requiredFeatures = []string{"disconnected", "fips-compliant", "proxy-aware", "tls-profiles",
		"token-auth-aws", "token-auth-azure", "token-auth-gcp"}
	optionalFeatures = []string{"cnf", "cni", "csi"}
)

// fakeDigest stands for the manager image's digest where the image is not built.
const fakeDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestOperatorHubPreflightStaticChecks runs the checks on the bundle as it is committed
// (images by tag, disconnected "false"), on a copy pinned by hack/pinbundle as a release
// publishes it, and on $PINNED_BUNDLE (make check-operatorhub: pinned to the digest of the
// manager image built from this commit).
func TestOperatorHubPreflightStaticChecks(t *testing.T) {
	bundles := map[string]string{"bundle/": bundleDir}
	pinned := filepath.Join(t.TempDir(), "pinned")
	csv := readCSV(t)
	if err := pin.Dir(bundleDir, pinned, fakePins(csv)); err != nil {
		t.Fatal(err)
	}
	bundles["pinned by hack/pinbundle"] = pinned
	if dir := os.Getenv("PINNED_BUNDLE"); dir != "" {
		bundles["$PINNED_BUNDLE"] = dir
	}
	for name, dir := range bundles {
		t.Run(name, func(t *testing.T) { checkPreflightStatic(t, readCSVIn(t, dir)) })
	}
	if got := readCSVIn(t, pinned).Annotations[disconnected]; got != "true" {
		t.Errorf("the pinned bundle says disconnected %q; want \"true\"", got)
	}
	if got := csv.Annotations[disconnected]; got != "false" {
		t.Errorf("bundle/ names its images by tag, and says disconnected %q; want \"false\"", got)
	}
}

func TestPinBundleRefusesToWriteIntoTheBundle(t *testing.T) {
	// On a copy: a broken guard would delete the bundle it was given.
	images := fakePins(readCSV(t))
	copied := filepath.Join(t.TempDir(), "bundle")
	if err := pin.Dir(bundleDir, copied, images); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{copied, filepath.Join(copied, "manifests")} {
		if err := pin.Dir(copied, out, images); err == nil || !strings.Contains(err.Error(), "outside the bundle") {
			t.Errorf("pinning into %s: want a refusal, got %v", out, err)
		}
	}
	if _, err := os.Stat(filepath.Join(copied, "manifests")); err != nil {
		t.Errorf("the bundle was harmed: %v", err)
	}
}

// fakePins pins every image the CSV names to fakeDigest, in its own repository.
func fakePins(csv *operatorsv1alpha1.ClusterServiceVersion) pin.Images {
	images := pin.Images{}
	for _, ref := range imageRefs(csv) {
		repo, _, _ := strings.Cut(ref, "@")
		if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
			repo = repo[:i]
		}
		images[ref] = repo + "@" + fakeDigest
	}
	return images
}

func TestPinBundleRefusesAnImageLeftUnpinned(t *testing.T) {
	err := pin.Dir(bundleDir, filepath.Join(t.TempDir(), "pinned"), pin.Images{"example.com/other:v1": "example.com/other@" + fakeDigest})
	if err == nil || !strings.Contains(err.Error(), "no digest given for") {
		t.Errorf("want the unpinned manager image refused, got %v", err)
	}
}

const disconnected = "features.operators.openshift.io/disconnected"

func checkPreflightStatic(t *testing.T, csv *operatorsv1alpha1.ClusterServiceVersion) {
	// RequiredAnnotations.
	for _, f := range slices.Concat(requiredFeatures, optionalFeatures) {
		key := "features.operators.openshift.io/" + f
		v, ok := csv.Annotations[key]
		if !ok && slices.Contains(optionalFeatures, f) {
			continue
		}
		if v != "true" && v != "false" {
			t.Errorf("RequiredAnnotations: %s is %q (present: %t); want \"true\" or \"false\"", key, v, ok)
		}
	}
	// SecurityContextConstraintsInCSV: at most one SCC named in the cluster permissions.
	for _, p := range csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions {
		for _, r := range p.Rules {
			if slices.Contains(r.APIGroups, "security.openshift.io") && slices.Contains(r.Resources, "securitycontextconstraints") && len(r.ResourceNames) > 1 {
				t.Errorf("SecurityContextConstraintsInCSV: %s names %d SCCs; at most one", p.ServiceAccountName, len(r.ResourceNames))
			}
		}
	}
	if csv.Annotations[disconnected] != "true" {
		return
	}
	// AllImageRefsInRelatedImages and FollowsRestrictedNetworkEnablementGuidelines: every
	// image the CSV names is in spec.relatedImages, and all of them by digest. preflight
	// also asks for a RELATED_IMAGE_ variable in the manager's environment, through which an
	// operator learns its operands' images; a MyApp's image is the user's, so the manager has
	// none to learn (docs/operations/install.md).
	related := map[string]bool{}
	for _, r := range csv.Spec.RelatedImages {
		related[r.Image] = true
		if !pin.IsDigestRef(r.Image) {
			t.Errorf("FollowsRestrictedNetworkEnablementGuidelines: related image %s (%s) is not pinned by digest", r.Name, r.Image)
		}
	}
	if len(related) == 0 {
		t.Error("FollowsRestrictedNetworkEnablementGuidelines: disconnected is true, but spec.relatedImages is empty")
	}
	for _, ref := range imageRefs(csv) {
		if !related[ref] {
			t.Errorf("AllImageRefsInRelatedImages: %s is not in spec.relatedImages", ref)
		}
	}
}

// imageRefs are the images a CSV names, as preflight collects them: its Deployments'
// containers and init containers, their RELATED_IMAGE_ variables and the containerImage
// annotation.
func imageRefs(csv *operatorsv1alpha1.ClusterServiceVersion) []string {
	var refs []string
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		for _, c := range slices.Concat(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers) {
			refs = append(refs, c.Image)
			for _, e := range c.Env {
				if strings.HasPrefix(e.Name, "RELATED_IMAGE_") {
					refs = append(refs, e.Value)
				}
			}
		}
	}
	if img := csv.Annotations["containerImage"]; img != "" {
		refs = append(refs, img)
	}
	slices.Sort(refs)
	return slices.Compact(refs)
}
