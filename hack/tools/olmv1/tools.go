//go:build tools

// Package tools pins OLM v1's operator-controller and catalogd, run out of cluster against the
// local cluster by the OLM v1 end-to-end test (make test-olmv1). v1.2.0 is the newest release
// that builds from the Go module proxy here: v1.10 and later need
// pkg.package-operator.run/boxcutter, which the proxy does not serve.
package tools

import (
	_ "github.com/operator-framework/operator-controller/cmd/catalogd"
	_ "github.com/operator-framework/operator-controller/cmd/operator-controller"
)
