//go:build tools

// Package tools pins OLM v0 and the Operator Framework's tools that go with it: OLM's olm and
// catalog operators, run against the local cluster by the OLM end-to-end test, and its cpb;
// operator-registry's opm, which renders, validates and serves the catalog; operator-sdk and
// its scorecard-test, which generate and check the bundle. They are one module, so that one
// go build compiles the packages they share (operator-registry, OLM's API, controller-runtime,
// the Kubernetes libraries) once.
package tools

import (
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/catalog"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
	_ "github.com/operator-framework/operator-lifecycle-manager/util/cpb"
	_ "github.com/operator-framework/operator-registry/cmd/opm"
	_ "github.com/operator-framework/operator-sdk/cmd/operator-sdk"
	_ "github.com/operator-framework/operator-sdk/images/scorecard-test"
)
