//go:build tools

// Package tools pins kubeconform, which `make lint-manifests` runs over the manifests the
// project ships and the children the operator makes; see hack/tools/README.md.
package tools

import _ "github.com/yannh/kubeconform/cmd/kubeconform"
