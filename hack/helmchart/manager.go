package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// managerExtras are what config/monitoring adds to the manager's Deployment: the metrics
// certificate's flag, mount and volume. The chart adds them when the ServiceMonitor is on.
type managerExtras struct {
	args, mounts, volumes []*yaml.Node
}

// managerDefaults are the values' defaults read from config/default's Deployment.
type managerDefaults struct {
	repository, tag string
	replicas        string
	leaderElect     bool
	resources       *yaml.Node
}

// The manager's flags the chart sets from values.
const (
	flagLeaderElect = "--leader-elect"
	envWatch        = "WATCH_NAMESPACE"
)

// managerParts finds the pod spec and the manager's container of a Deployment.
func managerParts(d *yaml.Node) (pod, container *yaml.Node, err error) {
	pod = path(d, "spec", "template", "spec")
	containers := get(pod, "containers")
	if containers == nil {
		return nil, nil, errors.New("no containers")
	}
	for _, c := range containers.Content {
		if str(c, "name") == "manager" {
			return pod, c, nil
		}
	}
	return nil, nil, errors.New("no container named manager")
}

// overlayDiff compares config/monitoring with config/default: the objects it adds, and what
// it adds to the manager's Deployment. Any other difference is an error: the chart could not
// express it, and would silently differ from config/monitoring.
func overlayDiff(defaults, monitoring []object) ([]object, *managerExtras, error) {
	byKey := map[string]object{}
	for _, o := range defaults {
		byKey[o.key()] = o
	}
	var added []object
	var extras *managerExtras
	seen := map[string]bool{}
	for _, m := range monitoring {
		d, ok := byKey[m.key()]
		seen[m.key()] = true
		switch {
		case !ok:
			added = append(added, m)
		case m.kind() == kindDeployment:
			var err error
			if extras, err = deploymentDiff(d.node, m.node); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", m.key(), err)
			}
		case canonical(d.node) != canonical(m.node):
			return nil, nil, fmt.Errorf("%s differs from config/default's; the chart can only add objects, "+
				"and the metrics certificate's flag, mount and volume to the manager; teach hack/helmchart", m.key())
		}
	}
	for _, o := range defaults {
		if !seen[o.key()] {
			return nil, nil, fmt.Errorf("%s of config/default is missing", o.key())
		}
	}
	return added, extras, nil
}

// deploymentDiff returns the items config/monitoring appends to the manager's args and
// volumeMounts and to the pod's volumes, and fails on any other difference.
func deploymentDiff(d, m *yaml.Node) (*managerExtras, error) {
	m = deepCopy(m)
	dPod, dC, err := managerParts(d)
	if err != nil {
		return nil, err
	}
	mPod, mC, err := managerParts(m)
	if err != nil {
		return nil, err
	}
	appended := func(what string, dl, ml *yaml.Node) ([]*yaml.Node, error) {
		var dItems, mItems []*yaml.Node
		if dl != nil {
			dItems = dl.Content
		}
		if ml != nil {
			mItems = ml.Content
		}
		if len(mItems) < len(dItems) {
			return nil, fmt.Errorf("%s: fewer than config/default's", what)
		}
		for i, x := range dItems {
			if canonical(x) != canonical(mItems[i]) {
				return nil, fmt.Errorf("%s: item %d differs from config/default's; only appended items are known", what, i)
			}
		}
		extra := slices.Clone(mItems[len(dItems):])
		if ml != nil {
			ml.Content = ml.Content[:len(dItems)]
			if len(dItems) == 0 {
				// Gone in config/default: compare without it.
				for _, parent := range []*yaml.Node{mC, mPod} {
					if get(parent, what) == ml {
						remove(parent, what)
					}
				}
			}
		}
		return extra, nil
	}
	var x managerExtras
	if x.args, err = appended("args", get(dC, "args"), get(mC, "args")); err != nil {
		return nil, err
	}
	if x.mounts, err = appended("volumeMounts", get(dC, "volumeMounts"), get(mC, "volumeMounts")); err != nil {
		return nil, err
	}
	if x.volumes, err = appended("volumes", get(dPod, "volumes"), get(mPod, "volumes")); err != nil {
		return nil, err
	}
	if canonical(d) != canonical(m) {
		return nil, errors.New("the manager's Deployment differs from config/default's in more than appended args, " +
			"volumeMounts and volumes; teach hack/helmchart")
	}
	return &x, nil
}

// managerDeployment puts the values into the manager's Deployment: replicas, the image,
// leader election, the client's rate limit and more flags, the watched namespaces, resources,
// the pod's annotations, labels and placement, and, with the ServiceMonitor, the metrics
// certificate of config/monitoring.
func (g *generator) managerDeployment(d *yaml.Node, extras *managerExtras) error {
	h := g.h
	spec := get(d, "spec")
	g.manager.replicas = "1"
	if r := str(spec, "replicas"); r != "" {
		g.manager.replicas = r
	}
	set(spec, "replicas", scalar(h.text("{{ $.Values.replicaCount }}")))

	meta := ensureMap(get(spec, "template"), "metadata")
	k, v := h.keyLines("{{- with $.Values.podAnnotations }}", "{{- toYaml . | nindent %[1]d }}", "{{- end }}")
	ann := ensureMap(meta, "annotations")
	ann.Content = append(ann.Content, k, v)
	k, v = h.keyLines("{{- with $.Values.podLabels }}", "{{- toYaml . | nindent %[1]d }}", "{{- end }}")
	labels := ensureMap(meta, "labels")
	labels.Content = append(labels.Content, k, v)

	pod, c, err := managerParts(d)
	if err != nil {
		return err
	}
	image := str(c, "image")
	repo, tag, ok := cutImage(image)
	if !ok {
		return fmt.Errorf("the manager's image %q has no tag", image)
	}
	g.manager.repository, g.manager.tag = repo, tag
	set(c, "image", scalar(h.text(`"{{ $.Values.image.repository }}:{{ $.Values.image.tag | default $.Chart.AppVersion }}"`)))
	k, v = h.keyLines("{{- with $.Values.image.pullPolicy }}", "imagePullPolicy: {{ . }}", "{{- end }}")
	insertAfter(c, "image", k, v)

	args := get(c, "args")
	if args == nil {
		args = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		set(c, "args", args)
	}
	leader := h.itemLines("{{- if $.Values.leaderElection.enabled }}", "- "+flagLeaderElect, "{{- end }}")
	i := slices.IndexFunc(args.Content, func(n *yaml.Node) bool { return n.Value == flagLeaderElect })
	g.manager.leaderElect = i >= 0
	if i >= 0 {
		args.Content[i] = leader
	} else {
		args.Content = append(args.Content, leader)
	}
	for _, a := range args.Content {
		if strings.HasPrefix(a.Value, "--kube-api-qps") || strings.HasPrefix(a.Value, "--kube-api-burst") {
			return fmt.Errorf("config/default sets %s, which the chart sets from values", a.Value)
		}
	}
	args.Content = append(args.Content,
		h.itemLines("{{- with $.Values.kubeAPI.qps }}", "- --kube-api-qps={{ . }}", "{{- end }}"),
		h.itemLines("{{- with $.Values.kubeAPI.burst }}", "- --kube-api-burst={{ . | int }}", "{{- end }}"))
	if extras != nil {
		args.Content = append(args.Content, conditional(h, condServiceMonitor, extras.args)...)
	}
	args.Content = append(args.Content,
		h.itemLines("{{- with $.Values.extraArgs }}", "{{- toYaml . | nindent %[1]d }}", "{{- end }}"))

	env := get(c, "env")
	i = -1
	if env != nil {
		i = slices.IndexFunc(env.Content, func(n *yaml.Node) bool { return str(n, "name") == envWatch })
	}
	if i < 0 {
		return fmt.Errorf("the manager has no %s variable, which the chart sets from watchNamespaces", envWatch)
	}
	env.Content = slices.Insert(env.Content, i+1, h.itemLines("{{- end }}"))
	env.Content = slices.Insert(env.Content, i, h.itemLines(
		"{{- if $.Values.watchNamespaces }}",
		"- name: "+envWatch,
		`  value: {{ join "," $.Values.watchNamespaces | quote }}`,
		"{{- else }}"))

	g.manager.resources = get(c, "resources")
	set(c, "resources", scalar(h.block("$.Values.resources")))

	if extras != nil {
		if len(extras.mounts) > 0 {
			ensureSeq(c, "volumeMounts").Content = append(get(c, "volumeMounts").Content, conditional(h, condServiceMonitor, extras.mounts)...)
		}
		if len(extras.volumes) > 0 {
			ensureSeq(pod, "volumes").Content = append(get(pod, "volumes").Content, conditional(h, condServiceMonitor, extras.volumes)...)
		}
	}
	for _, field := range []string{"imagePullSecrets", "nodeSelector", "affinity", "tolerations"} {
		if get(pod, field) != nil {
			return fmt.Errorf("config/default sets the pod's %s, which the chart sets from values", field)
		}
		k, v := h.keyLines("{{- with $.Values."+field+" }}", field+":", "  {{- toYaml . | nindent %[2]d }}", "{{- end }}")
		pod.Content = append(pod.Content, k, v)
	}
	k, v = h.keyLines("{{- with $.Values.priorityClassName }}", "priorityClassName: {{ . }}", "{{- end }}")
	pod.Content = append(pod.Content, k, v)
	return nil
}

// conditional wraps sequence items in an if on cond.
func conditional(h *holes, cond string, items []*yaml.Node) []*yaml.Node {
	if len(items) == 0 {
		return nil
	}
	out := []*yaml.Node{h.itemLines("{{- if " + cond + " }}")}
	for _, x := range items {
		out = append(out, deepCopy(x))
	}
	return append(out, h.itemLines("{{- end }}"))
}

// ensureSeq returns the sequence at key in m, creating it when missing.
func ensureSeq(m *yaml.Node, key string) *yaml.Node {
	if v := get(m, key); v != nil && v.Kind == yaml.SequenceNode {
		return v
	}
	v := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	set(m, key, v)
	return v
}

// cutImage splits an image reference into repository and tag.
func cutImage(image string) (repo, tag string, ok bool) {
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") || strings.Contains(image, "@") {
		return "", "", false
	}
	return image[:i], image[i+1:], true
}
