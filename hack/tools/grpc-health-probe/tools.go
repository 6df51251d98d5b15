//go:build tools

// Package tools pins the version of a build tool; see hack/tools/README.md.
package tools

import (
	_ "github.com/grpc-ecosystem/grpc-health-probe"
)
