package main

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// sample is one line of the Prometheus text exposition format: a metric name, its labels
// and its value.
type sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// parseSamples reads the samples of the named metrics from a Prometheus text exposition
// (version 0.0.4, what kube-apiserver and controller-runtime serve). Comments and other
// metrics are skipped without being parsed, which keeps a scrape of the API server's
// several megabytes cheap. It is a small parser of its own so that the benchmark needs no
// new direct dependency in go.mod.
func parseSamples(body []byte, names ...string) ([]sample, error) {
	var out []sample
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || !hasMetricPrefix(line, names) {
			continue
		}
		s, err := parseSampleLine(line)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if s.Name == n {
				out = append(out, s)
				break
			}
		}
	}
	return out, sc.Err()
}

func hasMetricPrefix(line string, names []string) bool {
	for _, n := range names {
		if strings.HasPrefix(line, n) {
			return true
		}
	}
	return false
}

// parseSampleLine parses `name{a="x",b="y"} value [timestamp]`.
func parseSampleLine(line string) (sample, error) {
	s := sample{Labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return s, fmt.Errorf("metric line without a value: %q", line)
	}
	s.Name = line[:i]
	rest := line[i:]
	if rest[0] == '{' {
		var err error
		if rest, err = parseLabels(rest[1:], s.Labels); err != nil {
			return s, fmt.Errorf("%w in %q", err, line)
		}
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return s, fmt.Errorf("metric line without a value: %q", line)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("metric value in %q: %w", line, err)
	}
	s.Value = v
	return s, nil
}

// parseLabels reads `a="x",b="y"}` into labels and returns what follows the closing brace.
func parseLabels(in string, labels map[string]string) (string, error) {
	for {
		in = strings.TrimLeft(in, " ,")
		if strings.HasPrefix(in, "}") {
			return in[1:], nil
		}
		eq := strings.IndexByte(in, '=')
		if eq <= 0 || len(in) < eq+2 || in[eq+1] != '"' {
			return "", fmt.Errorf("malformed label")
		}
		name := strings.TrimSpace(in[:eq])
		var val strings.Builder
		j := eq + 2
		for ; j < len(in) && in[j] != '"'; j++ {
			if in[j] == '\\' && j+1 < len(in) {
				j++
				switch in[j] {
				case 'n':
					val.WriteByte('\n')
				default: // \\ and \"
					val.WriteByte(in[j])
				}
				continue
			}
			val.WriteByte(in[j])
		}
		if j >= len(in) {
			return "", fmt.Errorf("unterminated label value")
		}
		labels[name] = val.String()
		in = in[j+1:]
	}
}

// single returns the sum of the samples of name whose labels include match; it fails when
// there is none, so that a missing metric is never reported as 0.
func single(samples []sample, name string, match map[string]string) (float64, error) {
	var sum float64
	found := false
	for _, s := range samples {
		if s.Name != name || !labelsMatch(s.Labels, match) {
			continue
		}
		sum += s.Value
		found = true
	}
	if !found {
		return 0, fmt.Errorf("metric %s%v not found", name, match)
	}
	return sum, nil
}

func labelsMatch(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}
