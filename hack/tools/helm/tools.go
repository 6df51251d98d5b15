//go:build tools

// Package tools pins the version of a build tool; see hack/tools/README.md.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
