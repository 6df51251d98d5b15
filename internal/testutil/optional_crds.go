package testutil

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// The optional kinds' CRDs the tests install are those of the very releases whose Go types
// go.mod requires, read from the module cache (go mod download fetches a release's module
// from the module proxy once).

// PrometheusOperatorTypes is the module of the Prometheus Operator's Go types the operator
// builds its PodMonitors from; the CRDs of the same release are in PrometheusOperatorModule.
const (
	PrometheusOperatorTypes  = "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring"
	PrometheusOperatorModule = "github.com/prometheus-operator/prometheus-operator"
)

// CertManagerModule holds both cert-manager's Go types, which the operator builds its
// Certificates from, and its CRDs.
const CertManagerModule = "github.com/cert-manager/cert-manager"

// PodMonitorCRD is the path of the PodMonitor CRD of the Prometheus Operator release whose
// types go.mod requires.
func PodMonitorCRD() (string, error) {
	return fileOfRelease(PrometheusOperatorTypes, PrometheusOperatorModule, "example", "prometheus-operator-crd", "monitoring.coreos.com_podmonitors.yaml")
}

// CertificateCRD is the path of the Certificate CRD of the cert-manager release go.mod
// requires.
func CertificateCRD() (string, error) {
	return fileOfRelease(CertManagerModule, CertManagerModule, "deploy", "crds", "cert-manager.io_certificates.yaml")
}

// CertManagerCRDs is the folder of every CRD of the cert-manager release go.mod requires: a
// cluster where cert-manager's own controllers run needs all of them.
func CertManagerCRDs() (string, error) {
	return fileOfRelease(CertManagerModule, CertManagerModule, "deploy", "crds")
}

// fileOfRelease is the path of a file of module at the version go.mod requires of types.
func fileOfRelease(types, module string, path ...string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", types).Output()
	if err != nil {
		return "", fmt.Errorf("reading the version of %s that go.mod requires: %w", types, err)
	}
	version := strings.TrimSpace(string(out))
	out, err = exec.Command("go", "mod", "download", "-json", module+"@"+version).Output()
	if err != nil {
		return "", fmt.Errorf("downloading %s@%s: %w", module, version, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("downloading %s@%s: %s %v", module, version, mod.Error, err)
	}
	return filepath.Join(append([]string{mod.Dir}, path...)...), nil
}
