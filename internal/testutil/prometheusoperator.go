package testutil

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// PrometheusOperatorTypes is the module of the Prometheus Operator's Go types the operator
// builds its PodMonitors from; the CRDs of the same release are in PrometheusOperatorModule.
const (
	PrometheusOperatorTypes  = "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring"
	PrometheusOperatorModule = "github.com/prometheus-operator/prometheus-operator"
)

// PodMonitorCRD is the path of the PodMonitor CRD of the Prometheus Operator release whose
// types go.mod requires, in the module cache (go mod download fetches the release's module
// from the module proxy once): the tests install the very CRD of the types the operator sends.
func PodMonitorCRD() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", PrometheusOperatorTypes).Output()
	if err != nil {
		return "", fmt.Errorf("reading the version of %s that go.mod requires: %w", PrometheusOperatorTypes, err)
	}
	version := strings.TrimSpace(string(out))
	out, err = exec.Command("go", "mod", "download", "-json", PrometheusOperatorModule+"@"+version).Output()
	if err != nil {
		return "", fmt.Errorf("downloading %s@%s: %w", PrometheusOperatorModule, version, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("downloading %s@%s: %s %v", PrometheusOperatorModule, version, mod.Error, err)
	}
	return filepath.Join(mod.Dir, "example", "prometheus-operator-crd", "monitoring.coreos.com_podmonitors.yaml"), nil
}
