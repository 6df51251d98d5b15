package v1_test

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// TestIntOrPercentDecodesWhateverIsStored: an object the API server stored with an
// int-or-string the Go type cannot hold still decodes, so it cannot stop the operator's cache;
// the builders report the value instead (internal/desired). Values that fit decode as
// intstr.IntOrString does, and encode back to the same JSON.
func TestIntOrPercentDecodesWhateverIsStored(t *testing.T) {
	cases := map[string]struct {
		json string
		want *intstr.IntOrString
	}{
		"absent":            {``, nil},
		"null":              {`null`, nil},
		"zero":              {`0`, intOrStringPtr(intstr.FromInt32(0))},
		"largest int32":     {`2147483647`, intOrStringPtr(intstr.FromInt32(2147483647))},
		"percentage":        {`"25%"`, intOrStringPtr(intstr.FromString("25%"))},
		"past int32":        {`2147483648`, intOrStringPtr(intstr.FromString("2147483648"))},
		"past int64":        {`100000000000000000000`, intOrStringPtr(intstr.FromString("100000000000000000000"))},
		"below int32":       {`-2147483649`, intOrStringPtr(intstr.FromString("-2147483649"))},
		"fraction":          {`1.5`, intOrStringPtr(intstr.FromString("1.5"))},
		"exponent":          {`1e3`, intOrStringPtr(intstr.FromString("1e3"))},
		"another JSON type": {`true`, intOrStringPtr(intstr.FromString("true"))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for field, doc := range map[string]string{"maxSurge": "rollingUpdate", "maxUnavailable": "rollingUpdate", "minAvailable": "podDisruptionBudget"} {
				raw := `{"image":"nginx","` + doc + `":{}}`
				if tc.json != "" {
					raw = `{"image":"nginx","` + doc + `":{"` + field + `":` + tc.json + `}}`
				}
				spec := examplev1.MyAppSpec{}
				if err := json.Unmarshal([]byte(raw), &spec); err != nil {
					t.Fatalf("%s: decoding %s fails: %v", field, raw, err)
				}
				var got *intstr.IntOrString
				switch field {
				case "maxSurge":
					got = spec.RollingUpdate.MaxSurge
				case "maxUnavailable":
					got = spec.RollingUpdate.MaxUnavailable
				case "minAvailable":
					got = spec.PodDisruptionBudget.MinAvailable
				}
				if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
					t.Fatalf("%s: decoded %s as %v, want %v", field, raw, got, tc.want)
				}
			}
		})
	}

	// What fits keeps its JSON form: a number stays a number, a percentage a string.
	in := `{"maxSurge":3,"maxUnavailable":"10%"}`
	ru := examplev1.RollingUpdate{}
	if err := json.Unmarshal([]byte(in), &ru); err != nil {
		t.Fatal(err)
	}
	if out, _ := json.Marshal(ru); string(out) != in {
		t.Errorf("encoded back as %s, want %s", out, in)
	}
	pdb := examplev1.PodDisruptionBudgetSpec{}
	if err := json.Unmarshal([]byte(`{"maxUnavailable":1}`), &pdb); err != nil {
		t.Fatal(err)
	}
	if out, _ := json.Marshal(pdb); string(out) != `{"maxUnavailable":1}` {
		t.Errorf("encoded back as %s", out)
	}
}

func intOrStringPtr(v intstr.IntOrString) *intstr.IntOrString { return &v }
