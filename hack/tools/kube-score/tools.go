//go:build tools

// Package tools pins kube-score, which `make lint-manifests` runs over the manifests the
// project ships and the children the operator makes.
package tools

import _ "github.com/zegl/kube-score/cmd/kube-score"
