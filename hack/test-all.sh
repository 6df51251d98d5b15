#!/usr/bin/env bash
# make test-all: runs the test stages one after the other, each as `make <stage>` alone runs
# it, while tool makes build the tools of the later stages beside them, TEST_ALL_JOBS at a time
# and at the lowest CPU priority. A stage mostly waits on a cluster and a cold tool build
# is all CPU, so a cold run keeps both cores busy, while a stage's tests still get the CPU
# first. One tool make per stage, one after the other, builds that stage's tools (the
# Makefile's test-all-tools-<stage> targets), and its set is then marked done in MARKS; a stage
# starts once the stage before it passed and its mark exists, and its make then finds its tools
# built. (The marks are made here, between two tool makes: a mark made by a recipe of one tool
# make for every stage would wait for a job slot behind the later stages' builds.) A failed
# stage, or a failed tool build, stops everything.
#
# Usage: hack/test-all.sh <make> <marks folder> <jobs> <stage>...
set -euo pipefail
make=$1 marks=$2 jobs=$3
shift 3
stages=("$@")

rm -rf "$marks" && mkdir -p "$marks"
# The tool makes run in a process group of their own (job control), so that stopping them stops
# the go builds they started.
set -m
(
	for stage in "${stages[@]}"; do
		"$make" --no-print-directory -j"$jobs" BUILD_NICE="nice -n 19" "test-all-tools-$stage"
		touch "$marks/$stage"
	done
) &
tools=$!
set +m
stop_tools() { kill -- -"$tools" 2>/dev/null || true; wait "$tools" 2>/dev/null || true; }
trap stop_tools EXIT

for stage in "${stages[@]}"; do
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
