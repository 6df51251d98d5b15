package v1_test

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// refusal is a MyApp that admission must refuse, with the field and the words its error
// must carry.
type refusal struct {
	name, spec string
	field      string // must appear in the error
	message    string // and this too, when set
}

func expectRefused(t *testing.T, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := create(t, tc.name, tc.spec)
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				t.Fatalf("want the MyApp refused as invalid, got %v", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error does not name %s: %v", tc.field, err)
			}
			if tc.message != "" && !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error does not say %q: %v", tc.message, err)
			}
		})
	}
}

// TestAdmissionRefusesUndecodableIntegers: an integer no Go field of the operator can hold is
// refused where the API server does not check the format itself.
func TestAdmissionRefusesUndecodableIntegers(t *testing.T) {
	expectRefused(t, []refusal{
		{"surge-past-int32", `{"image":"nginx","rollingUpdate":{"maxSurge":2147483648}}`, "spec.rollingUpdate.maxSurge", "number from 0 to 2147483647"},
		{"surge-percentage-past-int32", `{"image":"nginx","rollingUpdate":{"maxSurge":"2147483648%"}}`, "spec.rollingUpdate.maxSurge", "percentage"},
		{"surge-percentage-of-many-digits", `{"image":"nginx","rollingUpdate":{"maxSurge":"99999999999999999999%"}}`, "spec.rollingUpdate.maxSurge", "percentage"},
		{"unavailable-past-int32", `{"image":"nginx","rollingUpdate":{"maxUnavailable":2147483648}}`, "spec.rollingUpdate.maxUnavailable", "number from 0 to 2147483647"},
		{"unavailable-percentage-of-many-digits", `{"image":"nginx","rollingUpdate":{"maxUnavailable":"99999999999999999999%"}}`, "spec.rollingUpdate.maxUnavailable", "percentage from 0% to 100%"},
		{"pdb-min-past-int32", `{"image":"nginx","podDisruptionBudget":{"minAvailable":2147483648}}`, "spec.podDisruptionBudget.minAvailable", "number from 0 to 2147483647"},
		{"pdb-max-past-int64", `{"image":"nginx","podDisruptionBudget":{"maxUnavailable":100000000000000000000}}`, "spec.podDisruptionBudget.maxUnavailable", ""},
		{"replicas-past-int32", `{"image":"nginx","replicas":2147483648}`, "spec.replicas", "2147483647"},
		{"probe-period-past-int32", `{"image":"nginx","readinessProbe":{"tcpSocket":{},"periodSeconds":2147483648}}`, "spec.readinessProbe.periodSeconds", "2147483647"},
		{"autoscaling-max-past-int32", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":2147483648}}`, "spec.autoScaling.maxReplicas", "2147483647"},
	})
}
