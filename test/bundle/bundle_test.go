// Package bundle checks the generated OLM bundle the way OperatorHub's review does, and runs
// the scorecard tests against it.
package bundle

import (
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
)

const bundleDir = "../../bundle"

// TestBundleValidation runs operator-framework/api's default bundle validators plus the
// OperatorHub, capabilities, categories and good-practices ones, and allows neither errors
// nor warnings.
func TestBundleValidation(t *testing.T) {
	bundle, err := manifests.GetBundleFromDir(bundleDir)
	if err != nil {
		t.Fatalf("reading the bundle: %v", err)
	}
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.GoodPracticesValidator,
	)
	objs := append(bundle.ObjectsToValidate(), map[string]string{})
	checked := 0
	for _, result := range validators.Validate(objs...) {
		for _, e := range result.Errors {
			checked++
			switch e.Level {
			case errors.LevelError:
				t.Errorf("error from %s: %s", result.Name, e.Error())
			case errors.LevelWarn:
				t.Errorf("warning from %s: %s", result.Name, e.Error())
			}
		}
	}
	if bundle.CSV == nil || !strings.HasPrefix(bundle.CSV.GetName(), "myapp-operator.v") {
		t.Fatalf("the bundle has no MyApp Operator CSV")
	}
	t.Logf("validated %s (%d findings)", bundle.CSV.GetName(), checked)
}
