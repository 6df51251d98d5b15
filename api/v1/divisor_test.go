package v1_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/myapp-operator/internal/desired"
)

// TestAdmissionTakesDivisorsByValue: a resourceFieldRef's divisor is admitted by value, so that
// every spelling Kubernetes accepts in a pod is admitted in a MyApp, and every spelling admitted
// makes a pod Kubernetes accepts. Kubernetes compares the divisor's canonical form with 1 or 1m
// for cpu, and 1, 1k ... 1E, 1Ki ... 1Ei for the others, so it accepts 1000m (1) and 1024Ki
// (1Mi) but refuses 1048576 and 1e3, though they are worth 1Mi and 1k: the MyApp admits those
// too, and the pod template carries them as Kubernetes spells them. Each row says what
// Kubernetes does with the spelling as written, and the test asks the API server both.
func TestAdmissionTakesDivisorsByValue(t *testing.T) {
	cases := []struct {
		resource string
		divisor  any // a JSON string or number, as written
		// kubernetes: a pod with this divisor as written is accepted. admitted: a MyApp is.
		kubernetes, admitted bool
	}{
		{"limits.cpu", "1", true, true},
		{"limits.cpu", 1, true, true},
		{"limits.cpu", "1m", true, true},
		{"requests.cpu", "1000m", true, true},
		{"requests.cpu", "0.001", true, true},
		{"requests.cpu", "1000000n", true, true},
		{"limits.cpu", "0.001k", true, true},
		{"limits.cpu", "0", true, true},    // Kubernetes takes 0 as no divisor
		{"limits.cpu", "1e0", false, true}, // its canonical form is 1e0
		{"limits.cpu", "1e-3", false, true},
		{"limits.cpu", "2", false, false},
		{"limits.cpu", "500m", false, false},
		{"limits.cpu", "1k", false, false},
		{"limits.cpu", "1Mi", false, false},
		{"limits.memory", "1", true, true},
		{"limits.memory", "1000m", true, true},
		{"limits.memory", "1000", true, true},
		{"limits.memory", 1000, true, true},
		{"limits.memory", "1Mi", true, true},
		{"requests.memory", "1024Ki", true, true},
		{"requests.memory", "1000k", true, true},
		{"requests.memory", "0", true, true},
		{"requests.memory", "1048576", false, true},
		{"requests.memory", 1048576, false, true},
		{"limits.memory", "1024", false, true},
		{"limits.memory", "1e3", false, true},
		{"limits.memory", "1m", false, false},
		{"limits.memory", 2, false, false},
		{"limits.memory", "1000Ki", false, false},
		{"limits.memory", "0.5Mi", false, false},
		{"limits.ephemeral-storage", "1Gi", true, true},
		{"limits.ephemeral-storage", "1073741824", false, true},
		{"limits.ephemeral-storage", "3Gi", false, false},
		{"limits.hugepages-2Mi", "1024Ki", true, true},
		{"requests.hugepages-1Gi", "1e6", false, true},
		{"requests.hugepages-1Gi", "2Mi", false, false},
	}
	for i, tc := range cases {
		written, err := json.Marshal(tc.divisor)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("%s=%s", tc.resource, written), func(t *testing.T) {
			ref := `{"resource":"` + tc.resource + `","divisor":` + string(written) + `}`

			if err := dryRunDivisorPod(fmt.Sprintf("divisor-pod-%d", i), ref); (err == nil) != tc.kubernetes {
				t.Errorf("Kubernetes accepts a pod with divisor %s for %s: %v, the table says %v", written, tc.resource, err == nil, tc.kubernetes)
			}

			err = create(t, fmt.Sprintf("divisor-%d", i), `{"image":"nginx","env":[{"name":"A","valueFrom":{"resourceFieldRef":`+ref+`}}]}`)
			if (err == nil) != tc.admitted {
				t.Fatalf("admitted: %v (%v), want %v", err == nil, err, tc.admitted)
			}
			if !tc.admitted {
				if !apierrors.IsInvalid(err) {
					t.Fatalf("want the MyApp refused as invalid, got %v", err)
				}
				return
			}
			// What the builders send for an admitted divisor, Kubernetes accepts.
			q, err := resource.ParseQuantity(fmt.Sprint(tc.divisor))
			if err != nil {
				t.Fatal(err)
			}
			divisor, ok := desired.Divisor(tc.resource, q)
			if !ok {
				t.Fatalf("admitted, and the builders refuse it")
			}
			sent := `{"resource":"` + tc.resource + `"}`
			if divisor != nil {
				sent = `{"resource":"` + tc.resource + `","divisor":"` + divisor.String() + `"}`
			}
			if err := dryRunDivisorPod(fmt.Sprintf("divisor-sent-%d", i), sent); err != nil {
				t.Errorf("Kubernetes refuses the divisor the builders send, %s: %v", sent, err)
			}
		})
	}
}

// dryRunDivisorPod asks the API server whether it accepts a pod whose variable takes the container
// resource of ref (a resourceFieldRef as JSON), sending it as written.
func dryRunDivisorPod(name, ref string) error {
	pod := &unstructured.Unstructured{}
	doc := `{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"default","name":"` + name + `"},` +
		`"spec":{"containers":[{"name":"app","image":"nginx","env":[{"name":"A","valueFrom":{"resourceFieldRef":` + ref + `}}]}]}}`
	if err := json.Unmarshal([]byte(doc), &pod.Object); err != nil {
		return fmt.Errorf("bad test JSON %s: %w", doc, err)
	}
	return k8s.Create(context.Background(), pod, client.DryRunAll)
}
