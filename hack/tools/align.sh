#!/usr/bin/env bash
# align.sh moves the modules a tool module shares with the control plane's
# (hack/tools/kubernetes) up to the control plane's versions, wherever the tool's are older:
# a package compiles once for every program that imports it at the same version and with the
# same flags, so a tool on the control plane's client-go, apimachinery, grpc and x/ libraries
# compiles little of them again (docs/performance/build-times.md). It never moves a module
# down: where a tool needs a newer version, it keeps it. hack/check-deps-aligned.sh fails when
# a tool falls behind again.
#
# Usage: [ALIGN_SKIP='prefix ...'] hack/tools/align.sh [--check] <tool folder under hack/tools>...
#   then build the tool to check it. ALIGN_SKIP leaves the modules under those path prefixes
#   where they are (a tool tied to an older Kubernetes release keeps its k8s.io libraries).
#   --check changes nothing: it lists what is behind and fails if anything is.
set -euo pipefail
check=
if [ "${1:-}" = --check ]; then check=1; shift; fi
cd "$(dirname "$0")"
versions='{{.Path}} {{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}'
ref=$(cd kubernetes && go list -m -f "$versions" all | awk 'NF == 2' | sort)
# modules lists the modules whose packages the tool's programs compile (those its tools.go
# imports): a module of the graph that nothing compiles is not worth a line in go.mod. A
# module the tool replaces by another (a fork) is left out: it is the tool's own choice.
modules() {
	(cd "$1" && go list -deps -f '{{with .Module}}{{if or (not .Replace) (eq .Replace.Path .Path)}}{{.Path}} {{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}{{end}}{{end}}' \
		$(go list -e -tags tools -f '{{join .Imports " "}}' .) | awk 'NF == 2' | sort -u)
}
for tool in "$@"; do
	for round in 1 2 3; do
		mine=$(modules "$tool")
		for prefix in ${ALIGN_SKIP:-}; do mine=$(echo "$mine" | awk -v p="$prefix" 'index($1, p) != 1'); done
		# Shared modules whose version here sorts before the control plane's.
		up=$(join <(echo "$mine") <(echo "$ref") | awk '$2 != $3' | while read -r m have want; do
			if [ "$(printf '%s\n%s\n' "$have" "$want" | sort -V | head -1)" = "$have" ]; then echo "$m@$want"; fi
		done)
		[ -n "$up" ] || break
		if [ -n "$check" ]; then
			echo "$tool compiles these modules at versions older than the control plane's:"
			echo "$up" | sed 's/^/  /'
			echo "Run hack/tools/align.sh $tool (with ALIGN_SKIP as hack/check-deps-aligned.sh sets it) and build the tool."
			exit 1
		fi
		echo "$tool: $(echo "$up" | wc -l) modules up to the control plane's versions (round $round)"
		(cd "$tool" && go get $up && go mod tidy)
	done
done
