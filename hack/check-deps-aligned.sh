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
# It also fails when another Go module of the repository compiles a module it shares with its
# reference graph at another version (hack/tools/align.sh --check): every tool module, the
# test module and the released managers built on other libraries are put on the control plane's
# versions, so that a cold run compiles each shared package once (docs/performance/build-times.md).
# The tools tied to an older Kubernetes release keep their Kubernetes libraries (ALIGN_SKIP) and
# share them with each other: crdcost takes OLM's graph, kube-score and crdupgrade OLM v1's.
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

hack/tools/align.sh --check $(printf 'hack/tools/%s ' controller-gen crd-ref-docs helm kustomize kubeconform \
	grpc-health-probe prometheus golangci-lint traefik image ginkgo netpol certmanager) test
# OLM's viper needs its own spf13/cast.
ALIGN_SKIP='k8s.io/ sigs.k8s.io/ github.com/google/gnostic-models github.com/spf13/cast' hack/tools/align.sh --check hack/tools/olm
# operator-controller 1.2.0's Kubernetes libraries also fix its cel-go, and its oras-go its docker client
# (and with it go-containerregistry).
ALIGN_SKIP='k8s.io/ sigs.k8s.io/ github.com/google/gnostic-models github.com/google/cel-go github.com/docker/ oras.land/ github.com/google/go-containerregistry' \
	hack/tools/align.sh --check hack/tools/olmv1
ALIGN_REF=hack/tools/olm hack/tools/align.sh --check hack/crdcost
ALIGN_REF=hack/tools/olmv1 hack/tools/align.sh --check hack/tools/kube-score hack/crdupgrade
# A released manager built with a go.mod of hack/released (the Makefile's released-modfile): its
# source at the release commit, with that go.mod.
for modfile in hack/released/manager-*/go.mod; do
	[ -e "$modfile" ] || continue
	version=${modfile#hack/released/manager-}; version=${version%/go.mod}
	commit=$(awk -v v="RELEASE_COMMIT_$version" '$1 == v && $2 == ":=" { print $3 }' Makefile)
	[ -n "$commit" ] || { echo "check-deps-aligned: no RELEASE_COMMIT_$version in the Makefile for $modfile" >&2; exit 1; }
	src=bin/check-deps-aligned/manager-$version
	rm -rf "$src" && mkdir -p "$src" && git archive "$commit" | tar -x -C "$src" && cp "$(dirname "$modfile")"/go.mod "$(dirname "$modfile")"/go.sum "$src"/
	hack/tools/align.sh --check "$src"
done
echo "The other Go modules compile no module they share with their reference graph at another version."
