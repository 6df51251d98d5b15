#!/usr/bin/env bash
# align.sh puts the modules a Go module of the repository shares with its reference graph at
# the reference's versions, up or down: a package compiles once for every program that imports
# it at the same version and with the same flags, so a tool built on the control plane's
# client-go, apimachinery, grpc, go-openapi and x/ libraries compiles none of them again, and
# neither does any package above them (docs/performance/build-times.md). A module the tool
# requires at another version is replaced by the reference's (`replace` lines in its go.mod);
# hack/check-deps-aligned.sh fails when one drifts again.
#
# The reference is the control plane's graph (hack/tools/kubernetes) unless ALIGN_REF names
# another module folder: the tools tied to an older Kubernetes release share that release's
# graph with each other (crdcost takes OLM's, kube-score and crdupgrade take OLM v1's), and keep
# their Kubernetes libraries against the control plane's (ALIGN_SKIP).
#
# Usage: [ALIGN_SKIP='prefix ...'] [ALIGN_REF=folder] hack/tools/align.sh [--check] <folder>...
#   folders are relative to the repository's root (hack/tools/helm, test, hack/crdcost); then
#   build the module and run what uses it. ALIGN_SKIP leaves the modules under those path
#   prefixes at the module's own versions. --check changes nothing: it lists what differs and
#   fails if anything does.
set -euo pipefail
check=
if [ "${1:-}" = --check ]; then check=1; shift; fi
cd "$(dirname "$0")/../.."
# join and sort must agree on the order: bytewise, whatever the caller's locale.
export LC_ALL=C

# modules lists "path version" of the modules whose packages a folder's programs compile: those
# its tools.go imports (a tools module) and its own packages. A module replaced by another path
# (a fork) is left out: it is the module's own choice.
modules() {
	local imports
	imports=$(cd "$1" && go list -e -tags tools -f '{{if eq .Name "tools"}}{{join .Imports " "}}{{end}}' . 2>/dev/null || true)
	(cd "$1" && go list -e -deps -f '{{with .Module}}{{if not .Main}}{{if or (not .Replace) (eq .Replace.Path .Path)}}{{.Path}} {{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}{{end}}{{end}}{{end}}' \
		$imports ./... 2> >(grep -v 'matched no packages' >&2) | awk 'NF == 2' | sort -u)
}

ref=$(modules "${ALIGN_REF:-hack/tools/kubernetes}")
for dir in "$@"; do
	for round in 1 2 3 4; do
		mine=$(modules "$dir")
		for prefix in ${ALIGN_SKIP:-}; do mine=$(echo "$mine" | awk -v p="$prefix" 'index($1, p) != 1'); done
		differ=$(join <(echo "$mine") <(echo "$ref") | awk '$2 != $3')
		[ -n "$differ" ] || break
		if [ -n "$check" ]; then
			echo "$dir compiles these modules at other versions than ${ALIGN_REF:-the control plane (hack/tools/kubernetes)} (module, its version, the reference's):"
			echo "$differ" | sed 's/^/  /'
			echo "Run hack/tools/align.sh $dir (with ALIGN_REF and ALIGN_SKIP as hack/check-deps-aligned.sh sets them), then build it and run what uses it."
			exit 1
		fi
		echo "$dir: $(echo "$differ" | wc -l) modules to the reference's versions (round $round)"
		(cd "$dir" && echo "$differ" | while read -r m _ want; do go mod edit -replace="$m=$m@$want"; done && go mod tidy)
	done
done
