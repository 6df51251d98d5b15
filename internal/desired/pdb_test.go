package desired

import (
	"encoding/json"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestBudget: a minAvailable or maxUnavailable the API server refuses in a budget (a count
// outside 0..MaxInt32, one the Go type cannot hold, a percentage above 100%, any other text),
// stored before admission bounded it, decodes and is reported as an invalid spec naming the
// field, never sent as a budget the API server refuses; the bounds themselves build.
func TestBudget(t *testing.T) {
	cases := map[string]struct {
		budget string
		// field is the field reported as invalid; empty when the budget builds.
		field string
		// want is the budget's minAvailable, or else its maxUnavailable, when it builds.
		want intstr.IntOrString
	}{
		"min available past int32":             {budget: `{"minAvailable":2147483648}`, field: "spec.podDisruptionBudget.minAvailable"},
		"min available far past int64":         {budget: `{"minAvailable":100000000000000000000}`, field: "spec.podDisruptionBudget.minAvailable"},
		"min available a fraction":             {budget: `{"minAvailable":1.5}`, field: "spec.podDisruptionBudget.minAvailable"},
		"min available negative":               {budget: `{"minAvailable":-1}`, field: "spec.podDisruptionBudget.minAvailable"},
		"min available above 100 percent":      {budget: `{"minAvailable":"101%"}`, field: "spec.podDisruptionBudget.minAvailable"},
		"min available percentage past int32":  {budget: `{"minAvailable":"2147483648%"}`, field: "spec.podDisruptionBudget.minAvailable"},
		"min available not a percentage":       {budget: `{"minAvailable":"half"}`, field: "spec.podDisruptionBudget.minAvailable"},
		"max unavailable past int32":           {budget: `{"maxUnavailable":2147483648}`, field: "spec.podDisruptionBudget.maxUnavailable"},
		"max unavailable negative":             {budget: `{"maxUnavailable":-1}`, field: "spec.podDisruptionBudget.maxUnavailable"},
		"max unavailable above 100 percent":    {budget: `{"maxUnavailable":"101%"}`, field: "spec.podDisruptionBudget.maxUnavailable"},
		"max unavailable not a percentage":     {budget: `{"maxUnavailable":"1.5"}`, field: "spec.podDisruptionBudget.maxUnavailable"},
		"min available at int32's maximum":     {budget: `{"minAvailable":2147483647}`, want: intstr.FromInt32(2147483647)},
		"min available 100 percent":            {budget: `{"minAvailable":"100%"}`, want: intstr.FromString("100%")},
		"max unavailable 0":                    {budget: `{"maxUnavailable":0}`, want: intstr.FromInt32(0)},
		"max unavailable 0 percent":            {budget: `{"maxUnavailable":"0%"}`, want: intstr.FromString("0%")},
		"both set: only minAvailable is built": {budget: `{"minAvailable":1,"maxUnavailable":-1}`, want: intstr.FromInt32(1)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := newApp(nil)
			g.Expect(json.Unmarshal([]byte(`{"image":"nginx","podDisruptionBudget":`+tc.budget+`}`), &app.Spec)).To(Succeed())
			pdb, err := PodDisruptionBudget(app, false)
			if tc.field != "" {
				var invalid *InvalidSpecError
				g.Expect(errors.As(err, &invalid)).To(BeTrue(), "error %v", err)
				g.Expect(invalid.Field).To(Equal(tc.field))
				g.Expect(pdb).To(BeNil())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			got := pdb.Spec.MinAvailable
			if got == nil {
				got = pdb.Spec.MaxUnavailable
			}
			g.Expect(got).To(HaveValue(Equal(tc.want)))
			g.Expect(pdb.Spec.UnhealthyPodEvictionPolicy).To(HaveValue(Equal(policyv1.AlwaysAllow)),
				"a drain must not hang on an app whose pods are all unready")
		})
	}
}

// TestBudgetNone: no budget asked for, none built and no error, so the reconciler deletes the
// one it owns.
func TestBudgetNone(t *testing.T) {
	g := NewWithT(t)
	for _, spec := range []string{`{"image":"nginx"}`, `{"image":"nginx","podDisruptionBudget":{}}`} {
		app := newApp(nil)
		g.Expect(json.Unmarshal([]byte(spec), &app.Spec)).To(Succeed())
		pdb, err := PodDisruptionBudget(app, false)
		g.Expect(err).NotTo(HaveOccurred(), spec)
		g.Expect(pdb).To(BeNil(), spec)
	}
}
