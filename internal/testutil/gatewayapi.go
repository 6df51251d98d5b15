package testutil

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// GatewayAPIModule is the module of the Gateway API's Go types, which also holds its CRDs.
const GatewayAPIModule = "sigs.k8s.io/gateway-api"

// HTTPRouteCRD is the path of the HTTPRoute CRD (standard channel) of the Gateway API version
// go.mod requires, in the module cache: the tests install the very CRD the operator's types
// were generated from, with nothing downloaded beyond the Go module.
func HTTPRouteCRD() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", GatewayAPIModule).Output()
	if err != nil {
		return "", fmt.Errorf("finding %s in the module cache (go mod download fetches it): %w", GatewayAPIModule, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("%s is not in the module cache: run go mod download", GatewayAPIModule)
	}
	return filepath.Join(dir, "config", "crd", "standard", "gateway.networking.k8s.io_httproutes.yaml"), nil
}
