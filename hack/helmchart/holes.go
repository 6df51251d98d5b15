package main

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// holes keeps the template text that the YAML encoder must not see. The objects are edited as
// YAML nodes and encoded; where template text belongs, a node holds a token (a plain scalar
// the encoder leaves alone), and fill replaces each token with its text once the YAML is
// written. A token is either inline, inside a scalar (a name, an image), or a line of its own,
// as a mapping key or a sequence item, which fill replaces with whole lines of template text
// at that place's indentation (an if/end around list items, a toYaml block).
type holes struct {
	fills []hole
}

type hole struct {
	// inline gives the text of an inline token, from the indentation of its line.
	inline func(indent int) string
	// lines gives the lines that replace a line token, from the indentation of its place
	// (the column of its key, or of its item's dash); fill indents each line by as much.
	lines func(indent int) []string
}

var tokenPattern = regexp.MustCompile(`ZZtpl[0-9]{4}ZZ`)

func (h *holes) add(x hole) string {
	h.fills = append(h.fills, x)
	return fmt.Sprintf("ZZtpl%04dZZ", len(h.fills)-1)
}

// text returns a token for a scalar, which fill replaces with the template text.
func (h *holes) text(tpl string) string {
	return h.add(hole{inline: func(int) string { return tpl }})
}

// block returns a token for the value of a mapping key whose value is the YAML of a template
// value: `resources: <token>` becomes `resources:` followed by the value, indented below the key.
func (h *holes) block(value string) string {
	return h.add(hole{inline: func(indent int) string {
		return fmt.Sprintf("{{- toYaml %s | nindent %d }}", value, indent+2)
	}})
}

// keyLines returns a mapping key (and its value) whose line fill replaces with the template
// lines, in which %[1]d stands for the key's indentation and %[2]d for two more (nindent).
func (h *holes) keyLines(lines ...string) (key, value *yaml.Node) {
	return scalar(h.add(hole{lines: indented(lines)})), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "~"}
}

// itemLines returns a sequence item whose line fill replaces with the template lines, in which
// %[1]d stands for the indentation of the item's dash.
func (h *holes) itemLines(lines ...string) *yaml.Node {
	return scalar(h.add(hole{lines: indented(lines)}))
}

func indented(lines []string) func(int) []string {
	return func(indent int) []string {
		out := make([]string, len(lines))
		for i, l := range lines {
			if strings.Contains(l, "%[") {
				l = fmt.Sprintf(l, indent, indent+2)
			}
			out[i] = l
		}
		return out
	}
}

// fill replaces every token in the encoded YAML with its template text.
func (h *holes) fill(encoded string) (string, error) {
	var out strings.Builder
	for _, line := range strings.SplitAfter(encoded, "\n") {
		tokens := tokenPattern.FindAllString(line, -1)
		if len(tokens) == 0 {
			out.WriteString(line)
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if x, ok := h.lookup(tokens[0]); ok && x.lines != nil {
			rest := strings.TrimSpace(line)
			if len(tokens) != 1 || rest != "- "+tokens[0] && !strings.HasPrefix(rest, tokens[0]+":") {
				return "", fmt.Errorf("line token %s is not a key or an item of its own: %q", tokens[0], line)
			}
			for _, l := range x.lines(indent) {
				out.WriteString(strings.Repeat(" ", indent) + l + "\n")
			}
			continue
		}
		var err error
		line = tokenPattern.ReplaceAllStringFunc(line, func(t string) string {
			x, ok := h.lookup(t)
			if !ok || x.inline == nil {
				err = fmt.Errorf("token %s cannot be filled inline: %q", t, line)
				return t
			}
			return x.inline(indent)
		})
		if err != nil {
			return "", err
		}
		out.WriteString(line)
	}
	return out.String(), nil
}

func (h *holes) lookup(token string) (hole, bool) {
	var i int
	if _, err := fmt.Sscanf(token, "ZZtpl%04dZZ", &i); err != nil || i >= len(h.fills) {
		return hole{}, false
	}
	return h.fills[i], true
}

// The YAML node helpers the transformations use.

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }

// get returns the value of key in mapping m, or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// path follows keys from m; nil when one is missing.
func path(m *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		m = get(m, k)
	}
	return m
}

// str is the value of a scalar at the path, or "".
func str(m *yaml.Node, keys ...string) string {
	if n := path(m, keys...); n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// set sets key in mapping m, appending it when missing.
func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalar(key), v)
}

// ensureMap returns the mapping at key in m, creating it when missing.
func ensureMap(m *yaml.Node, key string) *yaml.Node {
	if v := get(m, key); v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	set(m, key, v)
	return v
}

// remove deletes key from mapping m.
func remove(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// insertAfter inserts key and value into mapping m after the key after (at the end when missing).
func insertAfter(m *yaml.Node, after string, k, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == after {
			m.Content = append(m.Content[:i+2], append([]*yaml.Node{k, v}, m.Content[i+2:]...)...)
			return
		}
	}
	m.Content = append(m.Content, k, v)
}
