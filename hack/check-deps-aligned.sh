#!/usr/bin/env bash
# check-deps-aligned.sh: fails when a module that the manager or localcluster compiles is also
# compiled into the control plane (hack/tools/kubernetes: kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, etcd, kwok) at another version.
#
# Why: a cold `make demo` builds the control plane first and the operator's programs after it.
# When every shared module is at the same version, the operator's build finds client-go,
# apimachinery, grpc and the rest already compiled in the Go build cache and compiles little
# more than controller-runtime and this repository. One shared module at another version (say
# golang.org/x/sys) changes the build of everything above it, and the cold demo compiles about
# 44 MB of Go a second time. The suites that need OLM's newer dependencies live in test/'s own
# module for this reason.
#
# Fix a report by moving the root module's version to the control plane's (go get module@version).
#
# It also fails when a tool module (hack/tools/<tool>) compiles a module it shares with the
# control plane at an older version than the control plane's (hack/tools/align.sh --check):
# the tools are built on the control plane's libraries wherever their releases allow, so that a
# cold run compiles those once (docs/performance/build-times.md). The tools tied to an older
# Kubernetes release (OLM's with operator-sdk, kube-score) keep their k8s.io and sigs.k8s.io
# libraries, and gnostic-models, which moves with k8s.io/kube-openapi; they are held to the rest.
set -euo pipefail
# join and sort must agree on the order: bytewise, whatever the caller's locale.
export LC_ALL=C
cd "$(dirname "$0")/.."

versions='{{with .Module}}{{if not .Main}}{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}{{end}}{{end}}'
# One "path version" line per module; the standard library's and the main module's packages
# print empty lines, which awk NF drops.
ours=$(go list -deps -f "$versions" ./cmd ./hack/localcluster | awk NF | sort -u)
theirs=$(cd hack/tools/kubernetes && go list -deps -f "$versions" \
	k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
	k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl ./etcd sigs.k8s.io/kwok/cmd/kwok | awk NF | sort -u)
shared=$(join <(echo "$ours") <(echo "$theirs"))
# client-go, apimachinery, api, protobuf, grpc, x/net, x/sys, ... : far more than 20. Fewer
# means a listing went wrong, not that the builds are aligned.
if [ "$(echo "$shared" | awk NF | wc -l)" -lt 20 ]; then
	echo "check-deps-aligned: found only $(echo "$shared" | awk NF | wc -l) modules shared by the operator and the control plane; the listing is wrong" >&2
	exit 1
fi

differ=$(echo "$shared" | awk '$2 != $3 { print "  " $1 ": the operator " $2 ", the control plane " $3 }')
if [ -n "$differ" ]; then
	echo "The operator and the control plane compile these modules at different versions:"
	echo "$differ"
	echo "so a cold make demo compiles their packages, and all above them, twice. Align the root go.mod"
	echo "on the control plane's versions (go get module@version); see hack/check-deps-aligned.sh."
	exit 1
fi
echo "The operator's dependencies shared with the control plane are at the control plane's versions ($(echo "$shared" | wc -l) modules)."

hack/tools/align.sh --check controller-gen crd-ref-docs helm kustomize kubeconform grpc-health-probe prometheus \
	golangci-lint traefik image
ALIGN_SKIP='k8s.io/ sigs.k8s.io/ github.com/google/gnostic-models' hack/tools/align.sh --check olm kube-score
# operator-controller 1.2.0's Kubernetes libraries also fix its cel-go, and its oras-go its docker client
# (and with it go-containerregistry).
ALIGN_SKIP='k8s.io/ sigs.k8s.io/ github.com/google/gnostic-models github.com/google/cel-go github.com/docker/ oras.land/ github.com/google/go-containerregistry' \
	hack/tools/align.sh --check olmv1
echo "The tool modules compile no module the control plane shares at an older version than the control plane's."
