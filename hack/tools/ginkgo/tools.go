//go:build tools

// Package tools pins the ginkgo command, which runs the envtest stories of internal/controller
// in parallel processes (make test); its version is the Ginkgo library's of the root module.
// See hack/tools/README.md.
package tools

import _ "github.com/onsi/ginkgo/v2/ginkgo"
