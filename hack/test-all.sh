#!/usr/bin/env bash
# make test-all: runs the test stages one after the other, each as `make <stage>` alone runs
# it, while a second make builds the tools of the later stages beside them, TEST_ALL_JOBS at a
# time and at the lowest CPU priority. A stage mostly waits on a cluster and a cold tool build
# is all CPU, so a cold run keeps both cores busy, while a stage's tests still get the CPU
# first. A stage starts once the stage before it passed and the tool make has built its tools
# (the Makefile's test-all-tools-<stage> targets, which mark each set done in MARKS); the stage
# make then finds them built and builds none itself. A failed stage, or a failed tool build,
# stops everything.
#
# Usage: hack/test-all.sh <make> <marks folder> <jobs> <stage>...
set -euo pipefail
make=$1 marks=$2 jobs=$3
shift 3
stages=("$@")

rm -rf "$marks" && mkdir -p "$marks"
# The tool make runs in a process group of its own (job control), so that stopping it stops
# the go builds it started.
set -m
"$make" --no-print-directory -j"$jobs" BUILD_NICE="nice -n 19" TEST_ALL_MARKS="$marks" \
	$(printf 'test-all-tools-%s ' "${stages[@]}") &
tools=$!
set +m
stop_tools() { kill -- -"$tools" 2>/dev/null || true; wait "$tools" 2>/dev/null || true; }
trap stop_tools EXIT

for stage in "${stages[@]}"; do
	# The tool make touches $marks/<stage> once that stage's tools are built.
	while [ ! -e "$marks/$stage" ]; do
		if ! kill -0 "$tools" 2>/dev/null && [ ! -e "$marks/$stage" ]; then
			wait "$tools" || true
			echo "=== test-all: building the tools of make $stage failed (see above)"
			exit 1
		fi
		sleep 1
	done
	echo "=== test-all: make $stage, $(date -u +%H:%M:%S) UTC"
	"$make" --no-print-directory "$stage"
done
wait "$tools"
trap - EXIT
