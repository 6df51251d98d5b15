package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/runner"
	"sigs.k8s.io/crdify/pkg/validations"
	"sigs.k8s.io/crdify/pkg/validations/property"
	"sigs.k8s.io/yaml"
)

// olmV1Config is the crdify configuration of OLM v1's CRD upgrade-safety preflight, as
// operator-controller v1.11.0 sets it (defaultConfig in
// internal/operator-controller/rukpak/preflights/crdupgradesafety/crdupgradesafety.go):
// every validation of crdify's default registry at its strictest, unhandled changes are
// errors, description changes are ignored, enum values may be added but not introduced or
// removed, and served versions are not compared when the CRD names a conversion strategy.
func olmV1Config() *config.Config {
	return &config.Config{
		Conversion:           config.ConversionPolicyIgnore,
		UnhandledEnforcement: config.EnforcementPolicyError,
		Validations: []config.ValidationConfig{
			{Name: "description", Enforcement: config.EnforcementPolicyNone},
			{Name: "enum", Enforcement: config.EnforcementPolicyError,
				Configuration: map[string]interface{}{"additionPolicy": property.AdditionPolicyAllow}},
		},
	}
}

// violation is one change that OLM v1 would refuse to upgrade across.
type violation struct {
	// Version is the CRD version ("v1"), a pair for a served-version comparison
	// ("v1 -> v2"), or empty for a CRD-wide rule.
	Version string `json:"version,omitempty"`
	// Property is the field's path in the schema (^.spec.replicas), empty for a CRD-wide rule.
	Property string `json:"property,omitempty"`
	// Rule is the crdify validation that failed: type, required, default, enum, maximum,
	// storedVersionRemoval, unhandled (a change no rule knows, refused), ...
	Rule string `json:"rule"`
	// Keys are, for an unhandled change, the schema keywords that changed which no rule
	// judges (e.g. x-kubernetes-validations), so that an exception names exactly what it allows.
	Keys    []string `json:"keys,omitempty"`
	Message string   `json:"-"`
}

func (v violation) key() string {
	return v.Version + " " + v.Property + " " + v.Rule + " " + strings.Join(v.Keys, ",")
}

func (v violation) String() string {
	where := v.Version
	if v.Property != "" {
		where += " " + v.Property
	}
	msg, _, _ := strings.Cut(v.Message, "\n") // unhandled diffs are long Go dumps: keep the summary
	if len(v.Keys) > 0 {
		msg += " " + strings.Join(v.Keys, ", ")
	}
	return fmt.Sprintf("%s: %s: %s", strings.TrimSpace(where), v.Rule, msg)
}

// exception is a reviewed violation that the gate lets through, with why.
type exception struct {
	Version  string   `json:"version,omitempty"`
	Property string   `json:"property,omitempty"`
	Rule     string   `json:"rule"`
	Keys     []string `json:"keys,omitempty"`
	Reason   string   `json:"reason"`
}

func (e exception) key() string {
	keys := slices.Clone(e.Keys)
	slices.Sort(keys)
	return e.Version + " " + e.Property + " " + e.Rule + " " + strings.Join(keys, ",")
}

// exceptions is the allow list for one upgrade: from the release it names to the current CRD.
type exceptions struct {
	From       string      `json:"from"`
	Exceptions []exception `json:"exceptions"`
}

// violations compares the CRD a release shipped with the current one, the way OLM v1 would
// on upgrade. A CRD file has no status, so the old CRD's storage version stands in for the
// stored versions a cluster would record.
func violations(oldCRD, newCRD *apiextensionsv1.CustomResourceDefinition) ([]violation, error) {
	oldCRD = oldCRD.DeepCopy()
	if len(oldCRD.Status.StoredVersions) == 0 {
		for _, v := range oldCRD.Spec.Versions {
			if v.Storage {
				oldCRD.Status.StoredVersions = append(oldCRD.Status.StoredVersions, v.Name)
			}
		}
	}
	r, err := runner.New(olmV1Config(), runner.DefaultRegistry())
	if err != nil {
		return nil, err
	}
	results := r.Run(oldCRD, newCRD)
	var out []violation
	for _, res := range results.CRDValidation {
		for _, e := range res.Errors {
			v := violation{Rule: res.Name, Message: e}
			// existingFieldRemoval reports one field per error as "removed field : v1.^.spec.x":
			// give it a version and a path like the other rules, so exceptions name the field.
			if _, field, ok := strings.Cut(e, "removed field : "); ok {
				v.Version, v.Property, _ = strings.Cut(strings.TrimSpace(field), ".")
			}
			out = append(out, v)
		}
	}
	for _, vr := range append(results.SameVersionValidation, results.ServedVersionValidation...) {
		for _, pr := range vr.PropertyComparisons {
			for _, res := range pr.ComparisonResults {
				for _, e := range res.Errors {
					v := violation{Version: vr.Version, Property: pr.Property, Rule: res.Name, Message: e}
					if res.Name == "unhandled" {
						v.Keys = unhandledKeys(oldCRD, newCRD, vr.Version, pr.Property)
					}
					out = append(out, v)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b violation) int { return strings.Compare(a.key()+a.Message, b.key()+b.Message) })
	return out, nil
}

// judgedKeys are the schema keywords crdify's validations judge; a change of any other keyword
// of a property is "unhandled".
var judgedKeys = map[string]bool{"description": true, "type": true, "enum": true, "default": true,
	"required": true, "maximum": true, "maxItems": true, "maxLength": true, "maxProperties": true,
	"minimum": true, "minItems": true, "minLength": true, "minProperties": true, "pattern": true, "nullable": true}

// unhandledKeys lists, sorted, the keywords of one property of one version that changed and
// that no validation judges; children are compared as properties of their own.
func unhandledKeys(oldCRD, newCRD *apiextensionsv1.CustomResourceDefinition, version, field string) []string {
	find := func(crd *apiextensionsv1.CustomResourceDefinition) map[string]*apiextensionsv1.JSONSchemaProps {
		for _, v := range crd.Spec.Versions {
			if v.Name == version && v.Schema != nil {
				return validations.FlattenCRDVersion(v)
			}
		}
		return nil
	}
	diff, ok := validations.FlattenedCRDVersionDiff(find(oldCRD), find(newCRD))[field]
	if !ok {
		return nil
	}
	asMap := func(p *apiextensionsv1.JSONSchemaProps) map[string]any {
		m := map[string]any{}
		if data, err := json.Marshal(p); err == nil {
			_ = json.Unmarshal(data, &m)
		}
		return m
	}
	a, b := asMap(diff.Old), asMap(diff.New)
	var keys []string
	for _, m := range []map[string]any{a, b} {
		for k := range m {
			if !judgedKeys[k] && !reflect.DeepEqual(a[k], b[k]) && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// gate splits the violations into those the allow list does not cover (failures) and reports
// the exceptions that matched nothing (stale: the allow list must say exactly what it allows).
func gate(found []violation, allowed []exception) (failures []violation, stale []exception) {
	allow := map[string]bool{}
	for _, e := range allowed {
		allow[e.key()] = true
	}
	used := map[string]bool{}
	for _, v := range found {
		if allow[v.key()] {
			used[v.key()] = true
			continue
		}
		failures = append(failures, v)
	}
	for _, e := range allowed {
		if !used[e.key()] {
			stale = append(stale, e)
		}
	}
	return failures, stale
}

func readCRD(path string) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if crd.Kind != "CustomResourceDefinition" {
		return nil, fmt.Errorf("%s: not a CustomResourceDefinition", path)
	}
	return crd, nil
}

func readExceptions(path string) (*exceptions, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ex := &exceptions{}
	if err := yaml.UnmarshalStrict(data, ex); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, e := range ex.Exceptions {
		if e.Rule == "" || e.Reason == "" {
			return nil, fmt.Errorf("%s: every exception needs a rule and a reason: %+v", path, e)
		}
	}
	return ex, nil
}
