package v1

import (
	"encoding/json"
	"strings"
)

// Quantity is a Kubernetes quantity: an integer (1, 1073741824) or a string ("500m", "0.5",
// "256Mi"). A fraction must be a string: the field holds an integer or a string, and the API
// server refuses a JSON number with a fraction.
// +kubebuilder:validation:XIntOrString
// +kubebuilder:validation:Type=""
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).compareTo(quantity('0')) >= 0",message="must be a non-negative Kubernetes quantity such as 500m, 2 or 256Mi"
type Quantity string

// UnmarshalJSON takes a JSON string as it is and a JSON number as its literal text. Unlike
// resource.Quantity's, it never fails, whatever the API server stored, so one odd object can
// never stop the operator's cache from listing MyApps; the builders parse the quantity and
// report an InvalidSpecError instead.
func (q *Quantity) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*q = Quantity(s)
		return nil
	}
	*q = Quantity(strings.TrimSpace(string(b)))
	return nil
}

// LabelValue is the value of a Kubernetes label.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
type LabelValue string
