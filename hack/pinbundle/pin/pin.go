// Package pin writes a copy of an operator bundle in which every image the
// ClusterServiceVersion names is pinned by digest, as a release publishes it and as a
// disconnected (air-gapped) cluster installs it from a mirror.
//
// The CSV's Deployments' containers and init containers (their images and RELATED_IMAGE_
// variables) and its containerImage annotation are rewritten; spec.relatedImages lists every image, by digest, so that mirroring tools (oc
// mirror) copy them; and features.operators.openshift.io/disconnected becomes "true", which is
// then the truth. An image of the CSV that is not pinned is an error: a bundle pinned only in
// part cannot install offline. Only the CSV changes; the other files are copied.
package pin

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// disconnectedAnnotation is the CSV annotation by which OperatorHub and certification read
// whether the operator installs on a cluster without Internet access.
const disconnectedAnnotation = "features.operators.openshift.io/disconnected"

// Images maps a reference the CSV names to the digest reference that replaces it.
type Images map[string]string

func (m Images) String() string { return fmt.Sprint(map[string]string(m)) }

// Set adds one FROM=TO pair, as a repeated command-line flag gives it.
func (m Images) Set(v string) error {
	from, to, ok := strings.Cut(v, "=")
	if !ok || !IsDigestRef(to) {
		return fmt.Errorf("want FROM=REPOSITORY@sha256:DIGEST, got %q", v)
	}
	m[from] = to
	return nil
}

// IsDigestRef holds for a reference that names its image by a sha256 digest.
func IsDigestRef(ref string) bool {
	_, digest, ok := strings.Cut(ref, "@")
	hex, isSHA := strings.CutPrefix(digest, "sha256:")
	return ok && isSHA && len(hex) == 64 && strings.Trim(hex, "0123456789abcdef") == ""
}

// Dir copies the bundle at dir to out with its CSV pinned. out is replaced; it may be neither
// dir nor inside it.
func Dir(dir, out string, images Images) error {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(absDir, absOut); err != nil || rel == "." || !strings.HasPrefix(rel, "..") {
		return fmt.Errorf("the output %s must be outside the bundle %s", out, dir)
	}
	csvs, err := filepath.Glob(filepath.Join(dir, "manifests", "*.clusterserviceversion.yaml"))
	if err != nil || len(csvs) != 1 {
		return fmt.Errorf("%s: want one ClusterServiceVersion in manifests/, found %d (%v)", dir, len(csvs), err)
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		target := filepath.Join(out, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if path == csvs[0] {
			if b, err = CSV(b, images); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// CSV rewrites a ClusterServiceVersion as the package comment says.
func CSV(csv []byte, images Images) ([]byte, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(csv, &obj); err != nil {
		return nil, err
	}
	var unpinned []string
	related := map[string]string{} // image -> name
	pinRef := func(ref, name string) string {
		to, ok := images[ref]
		switch {
		case ok:
		case IsDigestRef(ref):
			to = ref
		default:
			unpinned = append(unpinned, ref)
			return ref
		}
		if _, seen := related[to]; !seen {
			related[to] = name
		}
		return to
	}
	deployments, _ := nested(obj, "spec", "install", "spec", "deployments").([]any)
	if len(deployments) == 0 {
		return nil, fmt.Errorf("no Deployment in spec.install.spec.deployments")
	}
	for _, d := range deployments {
		for _, list := range []string{"initContainers", "containers"} {
			containers, _ := nested(d, "spec", "template", "spec", list).([]any)
			for _, c := range containers {
				c, _ := c.(map[string]any)
				if img, ok := c["image"].(string); ok {
					c["image"] = pinRef(img, fmt.Sprint(c["name"]))
				}
				// An operand image the operator learns from a RELATED_IMAGE_ variable.
				env, _ := c["env"].([]any)
				for _, e := range env {
					e, _ := e.(map[string]any)
					name, _ := e["name"].(string)
					if v, ok := e["value"].(string); ok && strings.HasPrefix(name, "RELATED_IMAGE_") {
						e["value"] = pinRef(v, strings.ToLower(strings.TrimPrefix(name, "RELATED_IMAGE_")))
					}
				}
			}
		}
	}
	meta, _ := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		return nil, fmt.Errorf("no metadata.annotations")
	}
	if img, ok := annotations["containerImage"].(string); ok {
		annotations["containerImage"] = pinRef(img, "manager")
	}
	if len(unpinned) > 0 {
		return nil, fmt.Errorf("no digest given for %s", strings.Join(slices.Compact(slices.Sorted(slices.Values(unpinned))), ", "))
	}
	annotations[disconnectedAnnotation] = "true"
	list := make([]any, 0, len(related))
	for _, img := range slices.Sorted(maps.Keys(related)) {
		list = append(list, map[string]any{"name": related[img], "image": img})
	}
	spec, _ := obj["spec"].(map[string]any)
	spec["relatedImages"] = list
	return yaml.Marshal(obj)
}

// nested is the field at path in v, a JSON object as sigs.k8s.io/yaml decodes it; nil when v
// is not an object or the path leads nowhere.
func nested(v any, path ...string) any {
	m, _ := v.(map[string]any)
	f, _, _ := unstructured.NestedFieldNoCopy(m, path...)
	return f
}
