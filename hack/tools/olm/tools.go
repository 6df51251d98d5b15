//go:build tools

// Package tools pins OLM's olm and catalog operators, run against the local cluster by the
// OLM end-to-end test.
package tools

import (
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/catalog"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
	_ "github.com/operator-framework/operator-lifecycle-manager/util/cpb"
)
