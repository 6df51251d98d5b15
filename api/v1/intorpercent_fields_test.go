package v1

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestLenientDecodersKnowEveryField: RollingUpdate and PodDisruptionBudgetSpec decode field
// by field (intorpercent.go), so a field added to either without a line in its UnmarshalJSON
// would be dropped on every read. This fails until the decoder learns the new field.
func TestLenientDecodersKnowEveryField(t *testing.T) {
	for typ, decoded := range map[reflect.Type][]string{
		reflect.TypeFor[RollingUpdate]():           {"maxSurge", "maxUnavailable"},
		reflect.TypeFor[PodDisruptionBudgetSpec](): {"maxUnavailable", "minAvailable"},
	} {
		var fields []string
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields = append(fields, name)
		}
		slices.Sort(fields)
		if !slices.Equal(fields, decoded) {
			t.Errorf("%s has the JSON fields %v, its UnmarshalJSON decodes %v: teach it the new ones", typ.Name(), fields, decoded)
		}
	}
}
