package main

import (
	"fmt"
	"io"
	"sort"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// ruleCost is one rule's share of the CRD's CEL budget: its estimated cost times how many
// times it can run in one object (the product of maxItems and maxProperties above it).
type ruleCost struct {
	path string
	cost uint64
}

// reportCosts writes the total estimated cost of the CRD's rules, as a share of the budget
// the API server allows a whole CRD (validation.StaticEstimatedCRDCostLimit), and the n most
// expensive rules: where a new field's rules find room, and what to make cheaper when they
// do not. It computes each rule's cost as the API server's create validation does.
func reportCosts(w io.Writer, crd *apiextensions.CustomResourceDefinition, n int) error {
	envSet := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion(), true)
	var costs []ruleCost
	var walk func(s *apiextensions.JSONSchemaProps, ctx *validation.CELSchemaContext, path string) error
	walk = func(s *apiextensions.JSONSchemaProps, ctx *validation.CELSchemaContext, path string) error {
		if len(s.XValidations) > 0 {
			info, err := ctx.TypeInfo()
			if err != nil || info == nil {
				return fmt.Errorf("%s: no type information for its rules: %v", path, err)
			}
			results, err := cel.Compile(info.Schema, info.DeclType, celconfig.PerCallLimit, envSet, cel.NewExpressionsEnvLoader())
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			for i, r := range results {
				card := r.MaxCardinality
				if ctx.MaxCardinality != nil {
					card = *ctx.MaxCardinality
				}
				costs = append(costs, ruleCost{path: fmt.Sprintf("%s[%d]", path, i), cost: saturatingProduct(r.MaxCost, card)})
			}
		}
		for _, name := range sortedKeys(s.Properties) {
			prop := s.Properties[name]
			if err := walk(&prop, ctx.ChildPropertyContext(&prop, name), path+"."+name); err != nil {
				return err
			}
		}
		if s.Items != nil && s.Items.Schema != nil {
			if err := walk(s.Items.Schema, ctx.ChildItemsContext(s.Items.Schema), path+"[*]"); err != nil {
				return err
			}
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			if err := walk(s.AdditionalProperties.Schema, ctx.ChildAdditionalPropertiesContext(s.AdditionalProperties.Schema), path+"{*}"); err != nil {
				return err
			}
		}
		return nil
	}
	for _, v := range crd.Spec.Versions {
		schema := crd.Spec.Validation
		if v.Schema != nil {
			schema = v.Schema
		}
		if schema == nil || schema.OpenAPIV3Schema == nil {
			continue
		}
		if err := walk(schema.OpenAPIV3Schema, validation.RootCELContext(schema.OpenAPIV3Schema), v.Name); err != nil {
			return err
		}
	}
	var total uint64
	for _, c := range costs {
		total = saturatingSum(total, c.cost)
	}
	sort.Slice(costs, func(i, j int) bool { return costs[i].cost > costs[j].cost })
	limit := float64(validation.StaticEstimatedCRDCostLimit)
	_, _ = fmt.Fprintf(w, "crdcost: %d rules cost %.1f %% of the CRD's budget (%d of %d)\n", len(costs), 100*float64(total)/limit, total, validation.StaticEstimatedCRDCostLimit)
	for _, c := range costs[:min(n, len(costs))] {
		_, _ = fmt.Fprintf(w, "  %6.2f %%  %s\n", 100*float64(c.cost)/limit, c.path)
	}
	return nil
}

func saturatingProduct(a, b uint64) uint64 {
	if a != 0 && b > ^uint64(0)/a {
		return ^uint64(0)
	}
	return a * b
}

func saturatingSum(a, b uint64) uint64 {
	if a > ^uint64(0)-b {
		return ^uint64(0)
	}
	return a + b
}

func sortedKeys(m map[string]apiextensions.JSONSchemaProps) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
