package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// sample is one sample of a scraped metric: its name, its labels and its value.
type sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// parseSamples reads the samples of the named metrics from a Prometheus text exposition
// (what kube-apiserver and controller-runtime serve to a client that asks for no other
// format). A malformed line of a named metric, or a page cut short in one, is an error: a
// page the benchmark cannot read is a figure it cannot measure. Histograms and summaries come
// out as their _bucket, _sum and _count samples, as Prometheus stores them.
func parseSamples(body []byte, names ...string) ([]sample, error) {
	// The API server's and controller-runtime's metric names are all legacy ones, which UTF-8
	// validation accepts too; expfmt wants the scheme named.
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(familyLines(body, names)))
	if err != nil {
		return nil, err // expfmt's error names the format and the line
	}
	var out []sample
	for _, name := range names {
		family, ok := families[name]
		if !ok {
			continue
		}
		vector, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{}, family)
		if err != nil {
			return nil, fmt.Errorf("metric %s: %w", name, err)
		}
		for _, s := range vector {
			labels := make(map[string]string, len(s.Metric))
			for k, v := range s.Metric {
				labels[string(k)] = string(v)
			}
			delete(labels, model.MetricNameLabel)
			out = append(out, sample{Name: string(s.Metric[model.MetricNameLabel]), Labels: labels,
				Value: float64(s.Value)})
		}
	}
	return out, nil
}

// familyLines keeps the lines of the named metric families, their HELP and TYPE comments
// with them, for the parser. The manager's page carries 19 series per MyApp and is read
// every poll while the operator settles; parsing all of it took the benchmark about 45 ms of
// CPU a read at N=1000 (with the API server's page, ten times that), on the cores the phase
// measures. The text format keeps each family's lines together, so a family's lines alone
// are still a valid page.
func familyLines(body []byte, names []string) []byte {
	var out bytes.Buffer
	for line := range bytes.Lines(body) {
		if inFamilies(line, names) {
			out.Write(line)
		}
	}
	return out.Bytes()
}

// inFamilies tells whether a line of a text exposition belongs to one of the named families:
// a "# HELP name" or "# TYPE name" comment, or a sample whose name is the family's, alone or
// with a suffix (a histogram's name_bucket, name_sum, name_count). A line of another family
// whose name merely starts with one of names is passed on too and parsed as a family of its
// own, which parseSamples does not return.
func inFamilies(line []byte, names []string) bool {
	if line[0] == '#' {
		fields := bytes.Fields(line)
		return len(fields) >= 3 && slices.Contains(names, string(fields[2]))
	}
	for _, name := range names {
		if rest, ok := bytes.CutPrefix(line, []byte(name)); ok && len(rest) > 0 && strings.IndexByte("{ \t_", rest[0]) >= 0 {
			return true
		}
	}
	return false
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
