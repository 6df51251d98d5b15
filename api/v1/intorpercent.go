package v1

import (
	"bytes"
	"encoding/json"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// MaxInt32 is the largest count of pods a Kubernetes workload can hold, and the bound the
// schema sets on every integer the operator keeps in an int32.
const MaxInt32 = 2147483647

// The int-or-string fields below keep the intstr.IntOrString Go type that Kubernetes uses,
// but its decoding fails on an integer outside int32, and the API server checks no format on
// an int-or-string. Admission refuses such integers; the decoders below make sure that an
// object stored before that rule, or through an API server that skips it, still decodes, so
// one object can never stop the operator's cache from listing every MyApp. An integer that
// does not fit is kept as its decimal text in a string; the builders report it as an invalid
// spec, as they do for a quantity they cannot parse.

// UnmarshalJSON decodes a RollingUpdate without failing on an out-of-range integer.
func (r *RollingUpdate) UnmarshalJSON(b []byte) error {
	var raw struct {
		MaxSurge       json.RawMessage `json:"maxSurge"`
		MaxUnavailable json.RawMessage `json:"maxUnavailable"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*r = RollingUpdate{MaxSurge: lenientIntOrString(raw.MaxSurge), MaxUnavailable: lenientIntOrString(raw.MaxUnavailable)}
	return nil
}

// UnmarshalJSON decodes a PodDisruptionBudgetSpec without failing on an out-of-range integer.
func (p *PodDisruptionBudgetSpec) UnmarshalJSON(b []byte) error {
	var raw struct {
		MinAvailable   json.RawMessage `json:"minAvailable"`
		MaxUnavailable json.RawMessage `json:"maxUnavailable"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*p = PodDisruptionBudgetSpec{MinAvailable: lenientIntOrString(raw.MinAvailable), MaxUnavailable: lenientIntOrString(raw.MaxUnavailable)}
	return nil
}

// lenientIntOrString decodes an int-or-string that is absent or null as nil, an integer that
// fits in int32 as an integer, a string as that string, and anything else (an integer out of
// range, a fraction, another JSON type) as its JSON text in a string, which no builder
// accepts as a count or a percentage.
func lenientIntOrString(raw json.RawMessage) *intstr.IntOrString {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	v := intstr.IntOrString{}
	if err := json.Unmarshal(raw, &v); err == nil {
		return &v
	}
	v = intstr.FromString(string(raw))
	return &v
}
