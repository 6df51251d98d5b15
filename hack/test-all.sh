#!/usr/bin/env bash
# make test-all: every stage of the tests, in lanes that run side by side, within deadlines.
#
#   - A tool make builds the tools of every stage, JOBS at a time, in the order TOOL_ORDER
#     gives (the lanes with the longest way to go first), and marks each stage's set done in
#     WORK/marks. It runs at a lower CPU priority (nice 5) than the stages of the clusters'
#     lanes, and above the checks' (nice 10): a stage mostly waits on a cluster, a cold tool
#     build is all CPU, and a lane that waits for its tools waits for the whole run.
#   - The prepare step makes once what every stage shares (PREPARE: generated files and fmt, one
#     after the other; PREPARE_PROGRAMS: the manager, localcluster, the binaries that go into
#     images, side by side); the stages then run with PREPARED=1 and make none of it again.
#   - Each lane runs its stages one after the other, each as `make <stage>` alone runs it,
#     once its tools are built; the lanes run side by side. A lane holds stages that cannot
#     overlap (the real-node stages share the node's fixed bridge and host ports).
#   - Each stage has a deadline: past it, its process group is stopped, `make
#     test-all-rescue-<stage>` keeps the logs of the cluster it ran and stops that cluster, and
#     the stage fails. Each stage's output goes to WORK/<stage>.log; a failed stage's log is
#     printed whole at the end.
#   - A failed stage fails the run, and its lane stops; the other lanes go on, so that one run
#     says as much as it can.
#   - A lane may run at a lower CPU priority (name@N, nice N): the lanes of checks that only
#     compute (verify, the unit tests) give the CPU to those whose stories measure a cluster
#     serving requests under a deadline.
#
# Usage: hack/test-all.sh <make> <work folder> <jobs> <deadlines> <lane>...
#   deadlines: "stage=duration ..." (timeout(1) durations); lane: name[@nice]:stage,stage,...
set -uo pipefail
make=$1 work=$2 jobs=$3 deadlines=$4
shift 4
lanes=("$@")

rm -rf "$work" && mkdir -p "$work/marks"
start=$(date +%s)
# since prints the time since the run started, as m:ss.
since() { local s=$(($(date +%s) - start)); printf '%d:%02d' $((s / 60)) $((s % 60)); }
say() { echo "=== test-all $(since) $*"; }

# Stages in the order the tool make builds their tools: TOOL_ORDER's, then any other stage
# of the lanes.
declare -a order=()
for stage in ${TOOL_ORDER:-} $(for lane in "${lanes[@]}"; do echo "${lane#*:}" | tr , ' '; done); do
	case " ${order[*]} " in *" $stage "*) ;; *) order+=("$stage") ;; esac
done

# The tool make runs in a process group of its own (job control), so that stopping it stops
# the go builds it started.
set -m
(
	"$make" --no-print-directory -j"$jobs" BUILD_NICE="nice -n 5" test-all-tools-prepare && touch "$work/marks/prepare" || exit 1
	for stage in "${order[@]}"; do
		"$make" --no-print-directory -j"$jobs" BUILD_NICE="nice -n 5" "test-all-tools-$stage" || exit 1
		touch "$work/marks/$stage"
	done
) >"$work/tools.log" 2>&1 &
tools=$!
set +m
stop_tools() { kill -- -"$tools" 2>/dev/null || true; wait "$tools" 2>/dev/null || true; }
# stop_stages stops the stages under way: each runs in the process group timeout(1) made,
# which an interrupt of this script does not reach.
stop_stages() {
	local f t
	for f in "$work"/running/*; do
		[ -e "$f" ] || continue
		for t in $(pgrep -P "$(cat "$f")" 2>/dev/null); do kill -TERM -- -"$t" 2>/dev/null; done
	done
}
mkdir -p "$work/running"
trap 'stop_tools; stop_stages' EXIT

# wait_mark waits until the tools of a stage are built; false when the tool make failed first.
wait_mark() {
	while [ ! -e "$work/marks/$1" ]; do
		if ! kill -0 "$tools" 2>/dev/null && [ ! -e "$work/marks/$1" ]; then return 1; fi
		sleep 1
	done
}

deadline_of() {
	local d
	for d in $deadlines; do
		if [ "${d%%=*}" = "$1" ]; then echo "${d#*=}"; return; fi
	done
	echo 30m
}

# counts reads what a stage's log says it ran: go test's closing lines (hack/testsummary's and
# the -v suites' --- lines) and Ginkgo's summaries, without the colours Ginkgo writes.
counts() {
	sed 's/\x1b\[[0-9;]*m//g' "$1" | awk '
		/^testsummary: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ { p += $2; f += $4; s += $6 }
		/^testsummary: Ginkgo specs run: / { specs += $NF }
		/^--- PASS: / { p++ } /^--- FAIL: / { f++ } /^--- SKIP: / { s++ }
		/^Ran [0-9]+ of [0-9]+ Specs? in/ { specs += $2 }
		END { printf "%d %d %d %d\n", p, f, s, specs }'
}

# run_stage runs one stage within its deadline, and reports its time and counts.
run_stage() {
	local lane=$1 stage=$2 nice=$3 log="$work/$2.log" deadline rc t
	deadline=$(deadline_of "$stage")
	say "[$lane] make $stage: starts (deadline $deadline)"
	# timeout(1) runs the make in a process group of its own and signals that whole group.
	# Every process of the stage carries its own run marker, which `localcluster sweep` finds.
	MYAPP_OPERATOR_RUN="${MYAPP_OPERATOR_RUN:-test-all}/$stage" /usr/bin/time -f '%e %U %S' -o "$work/$stage.time" \
		nice -n "$nice" timeout -k 60s "$deadline" "$make" --no-print-directory PREPARED=1 GO_TEST_FLAGS=-count=1 "$stage" >"$log" 2>&1 &
	echo $! >"$work/running/$stage"
	wait $!
	rc=$?
	rm -f "$work/running/$stage"
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "test-all: make $stage passed its deadline of $deadline and was stopped" >>"$log"
		"$make" --no-print-directory "test-all-rescue-$stage" >>"$log" 2>&1
	fi
	# time(1) writes "Command exited with non-zero status N" before the figures when it did.
	read -r wall user sys < <(tail -1 "$work/$stage.time" 2>/dev/null) || { wall=?; user=?; sys=?; }
	read -r p f s specs < <(counts "$log")
	echo "$lane $stage $rc $wall $user $sys $p $f $s $specs" >>"$work/results"
	local verdict=passed
	[ "$rc" = 0 ] || verdict="FAILED (exit $rc)"
	say "[$lane] make $stage: $verdict in ${wall}s (user ${user}s, system ${sys}s): tests $p passed, $f failed, $s skipped; Ginkgo specs $specs"
	return "$rc"
}

# The prepare step, once its tools are built.
if ! wait_mark prepare; then
	say "building the tools of the prepare step failed:"; cat "$work/tools.log"; exit 1
fi
say "make $PREPARE, then $PREPARE_PROGRAMS (once for every stage)"
if ! { timeout -k 60s 20m "$make" --no-print-directory $PREPARE &&
	timeout -k 60s 20m "$make" --no-print-directory -j2 $PREPARE_PROGRAMS; } >"$work/prepare.log" 2>&1; then
	cat "$work/prepare.log"; say "the prepare step failed"; exit 1
fi

# The lanes, side by side.
declare -a lanepids=()
for lane in "${lanes[@]}"; do
	(
		name=${lane%%:*} nice=0
		case $name in *@*) nice=${name#*@} name=${name%@*} ;; esac
		IFS=, read -ra stages <<<"${lane#*:}"
		for stage in "${stages[@]}"; do
			if ! wait_mark "$stage"; then
				say "[$name] the tools of make $stage could not be built"
				echo "$name $stage tools - - - 0 0 0 0" >>"$work/results"
				exit 1
			fi
			run_stage "$name" "$stage" "$nice" || exit 1
		done
	) &
	lanepids+=($!)
done
failed=0
for pid in "${lanepids[@]}"; do wait "$pid" || failed=1; done
stop_tools

# What failed, whole; then the table.
while read -r lane stage rc _; do
	if [ "$rc" = tools ]; then
		echo "=== test-all: the tool builds' log"; cat "$work/tools.log"
	elif [ "$rc" != 0 ]; then
		echo "=== test-all: the log of make $stage (lane $lane), which failed"; cat "$work/$stage.log"
	fi
done <"$work/results"
echo
echo "=== test-all: $(since) in all; each stage's log is in $work"
printf '%-6s %-14s %-8s %8s %8s %8s %7s %7s %7s %7s\n' lane stage result wall user system passed failed skipped specs
total_p=0 total_f=0 total_s=0
while read -r lane stage rc wall user sys p f s specs; do
	result=passed
	[ "$rc" = 0 ] || result=failed
	for n in p f s specs; do [[ ${!n} =~ ^[0-9]+$ ]] || printf -v "$n" 0; done
	printf '%-6s %-14s %-8s %8s %8s %8s %7s %7s %7s %7s\n' "$lane" "$stage" "$result" "$wall" "$user" "$sys" "$p" "$f" "$s" "$specs"
	total_p=$((total_p + p + specs)) total_f=$((total_f + f)) total_s=$((total_s + s))
done < <(sort "$work/results")
trap - EXIT
echo "test-all: $total_p passed, $total_f failed, $total_s skipped"
exit "$failed"
