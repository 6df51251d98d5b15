package main

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"
)

//go:embed static/*
var static embed.FS

// staticFiles adds the files that are not config/'s objects: the helpers, the notes, the
// values (their defaults read from config/default), their schema, Chart.yaml and the README.
func (g *generator) staticFiles(files map[string][]byte) error {
	for src, dst := range map[string]string{
		"static/_helpers.tpl":       "templates/_helpers.tpl",
		"static/NOTES.txt":          "templates/NOTES.txt",
		"static/values.schema.json": "values.schema.json",
		"static/README.md":          "README.md",
	} {
		b, err := static.ReadFile(src)
		if err != nil {
			return err
		}
		files[dst] = b
	}
	if g.manager.repository == "" || g.manager.resources == nil {
		return fmt.Errorf("config/default has no manager Deployment with an image and resources")
	}
	resources, err := encode(g.manager.resources)
	if err != nil {
		return err
	}
	data := map[string]any{
		"Name":        g.chartName,
		"Version":     g.in.Version,
		"AppVersion":  g.manager.tag,
		"KubeVersion": ">=" + g.in.KubeVersion + "-0",
		"Repository":  g.manager.repository,
		"Replicas":    g.manager.replicas,
		"LeaderElect": g.manager.leaderElect,
		"Resources":   indent(resources, "  "),
	}
	for src, dst := range map[string]string{"static/values.yaml.tmpl": "values.yaml", "static/Chart.yaml.tmpl": "Chart.yaml"} {
		t, err := template.ParseFS(static, src)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		files[dst] = b.Bytes()
	}
	return nil
}

// indent prefixes every line of s but a last empty one.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}
