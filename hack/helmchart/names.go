package main

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The labels the chart's helpers write (templates/_helpers.tpl): an object's labels from
// config/ lose these and get the helper's instead.
const (
	labelName      = "app.kubernetes.io/name"
	labelInstance  = "app.kubernetes.io/instance"
	labelVersion   = "app.kubernetes.io/version"
	labelManagedBy = "app.kubernetes.io/managed-by"
	labelChart     = "helm.sh/chart"
)

var helperLabels = []string{labelName, labelInstance, labelVersion, labelManagedBy, labelChart}

// renamer turns the names kustomize gave (its namePrefix and namespace) into template text:
// every object's name, and every reference to one (role bindings, the service account, the
// certificate's DNS names, the Prometheus job in an alert), carries the release's fullname in
// place of the prefix and the release's namespace in place of kustomize's.
type renamer struct {
	h         *holes
	prefix    string   // kustomize's namePrefix, "myapp-operator-"
	namespace string   // kustomize's namespace, "myapp-operator-system"
	suffixes  []string // the names of the objects without the prefix, longest first
	// The tokens of the release's namespace and of the fullname's prefix.
	nsToken, prefixToken string
}

func newRenamer(h *holes, prefix, namespace string, names []string) *renamer {
	r := &renamer{h: h, prefix: prefix, namespace: namespace,
		nsToken:     h.text("{{ $.Release.Namespace }}"),
		prefixToken: h.text(`{{ include "myapp-operator.fullname" $ }}-`)}
	seen := map[string]bool{}
	for _, n := range names {
		if s, ok := strings.CutPrefix(n, prefix); ok && !seen[s] {
			seen[s] = true
			r.suffixes = append(r.suffixes, s)
		}
	}
	sort.Slice(r.suffixes, func(i, j int) bool {
		if len(r.suffixes[i]) != len(r.suffixes[j]) {
			return len(r.suffixes[i]) > len(r.suffixes[j])
		}
		return r.suffixes[i] < r.suffixes[j]
	})
	return r
}

// isNameChar tells whether c may be part of a Kubernetes name (a DNS label): a name ends at
// any other character, such as the dot before a DNS name's namespace or the quote of a label
// matcher.
func isNameChar(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' }

// rename rewrites one string: template braces escaped, kustomize's namespace and prefixed
// names replaced. A prefixed word it does not know is an error: a reference to an object the
// chart does not make, which the generator must be taught.
func (r *renamer) rename(s string) (string, error) {
	s = strings.ReplaceAll(s, "{{", "{{`{{`}}")
	var out strings.Builder
	for i := 0; i < len(s); {
		if !strings.HasPrefix(s[i:], r.prefix) || i > 0 && isNameChar(s[i-1]) {
			out.WriteByte(s[i])
			i++
			continue
		}
		if end := i + len(r.namespace); strings.HasPrefix(s[i:], r.namespace) && (end == len(s) || !isNameChar(s[end])) {
			out.WriteString(r.nsToken)
			i = end
			continue
		}
		matched := false
		for _, suffix := range r.suffixes {
			end := i + len(r.prefix) + len(suffix)
			if strings.HasPrefix(s[i+len(r.prefix):], suffix) && (end == len(s) || !isNameChar(s[end])) {
				out.WriteString(r.prefixToken + suffix)
				i, matched = end, true
				break
			}
		}
		if !matched {
			return "", fmt.Errorf("%q names %s... , which is no object of config/default or config/monitoring", s, r.prefix)
		}
	}
	return out.String(), nil
}

// renameAll rewrites every string scalar under n (values, not mapping keys).
func (r *renamer) renameAll(n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if err := r.renameAll(c); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if err := r.renameAll(n.Content[i]); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		if n.Tag != "!!str" && n.Tag != "" {
			return nil
		}
		v, err := r.rename(n.Value)
		if err != nil {
			return err
		}
		n.Value = v
	}
	return nil
}

// setLabels gives an object's labels the chart's helper: the labels of config/ that the
// helper does not write stay (control-plane, the aggregation labels of a ClusterRole), the
// others (app.kubernetes.io/name, managed-by) come from the helper. extra names a map of
// values whose entries are added too (labels a Prometheus selects ServiceMonitors by).
func (r *renamer) setLabels(obj *yaml.Node, extra string) {
	labels := ensureMap(ensureMap(obj, "metadata"), "labels")
	for _, k := range helperLabels {
		remove(labels, k)
	}
	k, v := r.h.keyLines(`{{- include "myapp-operator.labels" $ | nindent %[1]d }}`)
	labels.Content = append(labels.Content, k, v)
	if extra != "" {
		k, v := r.h.keyLines("{{- with "+extra+" }}", "{{- toYaml . | nindent %[1]d }}", "{{- end }}")
		labels.Content = append(labels.Content, k, v)
	}
}

// setSelectors gives every label selector (and the pod template's labels) the chart's
// selector labels in place of config/'s app.kubernetes.io/name: a Deployment, Service,
// NetworkPolicy or ServiceMonitor of one release selects its own release's objects. The
// object's own metadata.labels are setLabels' concern and are skipped.
func (r *renamer) setSelectors(n *yaml.Node, name string, root bool) {
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			r.setSelectors(c, name, false)
		}
	case yaml.MappingNode:
		if v := get(n, labelName); v != nil && v.Value == name && !root {
			remove(n, labelName)
			remove(n, labelInstance)
			k, v := r.h.keyLines(`{{- include "myapp-operator.selectorLabels" $ | nindent %[1]d }}`)
			n.Content = append(n.Content, k, v)
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "metadata" && root {
				// The object's metadata: its labels are setLabels'.
				continue
			}
			r.setSelectors(n.Content[i+1], name, false)
		}
	}
}
