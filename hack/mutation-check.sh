#!/usr/bin/env bash
# make mutation-check: shows that the test suites can fail. Each mutant is a patch under
# hack/mutants/ that breaks the operator in one way a user would notice. The patch is applied
# to scratch copies of the files it names and handed to `go build -overlay` / `go test
# -overlay`, so the source tree and the release binary never contain a mutant. Every suite
# run against a mutant must FAIL on a spec (not on a build or a suite setup); the script fails
# if any mutant passes a suite meant to catch it, or if a patch no longer applies.
#
# Needs: KUBEBUILDER_ASSETS; for the end-to-end runs the Makefile's mutation-e2e target
# (make mutation-check provides both). MUTANTS="a b" runs a subset; SKIP_E2E=1 skips the
# end-to-end runs.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

out=${MUTATION_DIR:-$PWD/bin/mutants}
mkdir -p "$out"

# mutant | end-to-end focus (a regular expression on spec names; empty: envtest only); a comment
# after a row names the envtest story that must catch the mutant.
table=(
	"no-status|runs its pods, scales with kubectl"
	"foreign-owner|runs its pods, scales with kubectl"
	"hot-loop|reports an application that cannot start, without a hot loop"
	"no-recreate|"
	"drop-child-updates|"
	"ready-on-stale-deployment|"
	"ready-on-available-condition|"
	"ready-before-observed|"
	"strict-decode|"
	"hand-scale-stands|"
	"stale-carried|"
	"any-intent-carried|"
	"budget-blocks-drain|A node drain"
	"policy-not-restored|"
	"rollback-never|"          # A failed rollout: is rolled back to the last Ready template when the new image cannot be pulled
	"rollback-on-slow|"        # A failed rollout: is rolled back when new pods crash-loop ...; not while it is only slow
	# The rollout decision (internal/controller/rollback_decision_test.go), one story each:
	"judge-unobserved|"        # does not roll back the user's fix ... while the deployment controller has not observed it (no target that never served)
	"fail-unobserved|"         # does not roll back the user's fix ... while the deployment controller has not observed it
	"current-template-unchecked|" # does not roll back the user's fix ... (observed before the fix's ReplicaSet exists)
	"complete-at-zero|"        # takes a template rolled out at zero replicas for no target
	"complete-by-counts-only|" # never rolls back a release that completed while no reconcile looked
	"grace-from-creation|"     # counts the grace from the first sighting of a problem
	"act-before-record|"       # records a rollback before acting on it (a refused record changes nothing)
	"hold-from-status-only|"   # records a rollback before acting on it (the status losing the record: the mark holds)
	"hold-past-request|"       # names a ConfigMap a volume of the new template takes ... (a reconcile requested: the template rolls forward)
	"whole-target-template|"   # leaves `kubectl rollout restart` to kubectl while a rollback holds
	"target-intent-only|"      # keeps a rollback 0.4.0 held across the upgrade
	"orphans-requeue|"         # does not requeue a MyApp without its Deployment for the problem pods of a Deployment it lost
	"volume-behind-old-pods|"  # names a ConfigMap a volume of the new template takes and that does not exist
	"kept-template-unjudged|"  # rolls back for a missing ConfigMap also a MyApp that rolls out on config changes
	"count-after-apply|"       # counts a rollback once an apply makes it, also when its first apply is refused
	"repair-by-number|"        # puts spec.ports on its container and Service ... (a named port's protocol edited by hand)
	"netpol-empty-allows-all|" # keeps a NetworkPolicy for its access policy ... (an empty inbound list refuses every connection)
	"memory-target-ignored|"   # scales on memory at the pace its behavior sets ...
)
all=$(for row in "${table[@]}"; do printf '%s ' "${row%%|*}"; done)
want=" ${MUTANTS:-$all} "

# Every patch has a row, and every row a patch.
for p in hack/mutants/*.patch; do
	name=$(basename "$p" .patch)
	case " $all " in *" $name "*) ;; *) echo "mutation-check: $p has no row in the table of $0"; exit 2 ;; esac
done

# overlay NAME: applies hack/mutants/NAME.patch to copies of its files and prints the
# path of a go build -overlay file that replaces them.
overlay() {
	# Under a folder whose name starts with "_", which go's ./... patterns skip.
	local name=$1 dir="$out/_src/$1" patch="$root/hack/mutants/$1.patch" f
	rm -rf "$dir" && mkdir -p "$dir"
	local files
	files=$(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$patch")
	[ -n "$files" ] || { echo "mutation-check: $patch names no file" >&2; return 1; }
	for f in $files; do
		mkdir -p "$dir/$(dirname "$f")" && cp "$f" "$dir/$f"
	done
	# Outside any repository, git apply works as patch(1) does, and fails on a stale patch.
	(cd "$dir" && git apply --unsafe-paths -p1 "$patch") || {
		echo "mutation-check: hack/mutants/$name.patch no longer applies to the source; update it" >&2
		return 1
	}
	{
		printf '{"Replace":{'
		local sep=""
		for f in $files; do printf '%s"%s":"%s"' "$sep" "$root/$f" "$dir/$f"; sep=","; done
		printf '}}\n'
	} >"$dir/overlay.json"
	echo "$dir/overlay.json"
}

survivors=()
summary=()

# caught RUNLOG: holds when the Ginkgo run failed on at least one spec; prints the specs.
caught() {
	local specs
	specs=$(grep -E '^\s*\[FAIL\] ' "$1" | grep -v -E '\[(BeforeSuite|AfterSuite|SynchronizedBeforeSuite)\]' | sed -E 's/^\s*\[FAIL\] //; s/ \[(It|BeforeEach|AfterEach|JustBeforeEach|DeferCleanup)\] /: /' | sort -u)
	[ -n "$specs" ] || return 1
	echo "$specs"
}

echo "=== the release binary holds no mutant"
go build -o "$out/manager-release" ./cmd || exit 2
if go tool nm "$out/manager-release" | grep -i mutant; then
	echo "mutation-check: the release manager contains the symbols above"; exit 1
fi

for row in "${table[@]}"; do
	name=${row%%|*}
	focus=${row#*|}
	case "$want" in *" $name "*) ;; *) continue ;; esac
	ov=$(overlay "$name") || exit 2

	echo "=== mutant $name: envtest suite (internal/controller)"
	began=$SECONDS
	if ! go test -c -overlay "$ov" -o "$out/controller-$name.test" ./internal/controller/; then
		echo "mutation-check: the $name mutant does not build"; exit 2
	fi
	log="$out/controller-$name.log"
	(cd internal/controller && "$out/controller-$name.test" -test.timeout 15m -ginkgo.fail-fast -ginkgo.no-color) >"$log" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && specs=$(caught "$log"); then
		summary+=("$name: envtest FAILED as wanted after $((SECONDS - began)) s on: $(echo "$specs" | head -3 | paste -sd ';' -)")
	else
		summary+=("$name: envtest PASSED (rc $rc, no failed spec; log $log)")
		survivors+=("$name/envtest")
	fi
	echo "${summary[-1]}"

	# A mutant of the rollout decision's package must also fail the model of the cluster
	# (internal/rollout/model_test.go): the model, not one story, is the proof of its rules.
	if grep -q '^+++ b/internal/rollout/' "hack/mutants/$name.patch"; then
		echo "=== mutant $name: the model of the rollout decision (internal/rollout TestModel)"
		log="$out/model-$name.log"
		go test -count=1 -overlay "$ov" -run '^TestModel$' ./internal/rollout/ >"$log" 2>&1
		rc=$?
		if [ $rc -ne 0 ] && invariant=$(grep -m1 -oE 'invariant [0-9]+:.{0,80}' "$log"); then
			summary+=("$name: model FAILED as wanted: $invariant")
		else
			summary+=("$name: model PASSED (rc $rc, no broken invariant; log $log)")
			survivors+=("$name/model")
		fi
		echo "${summary[-1]}"
	fi

	[ -n "$focus" ] && [ "${SKIP_E2E:-}" != 1 ] || continue
	echo "=== mutant $name: end-to-end story \"$focus\""
	began=$SECONDS
	go build -overlay "$ov" -o "$out/manager-$name" ./cmd || { echo "mutation-check: the $name manager does not build"; exit 2; }
	log="$out/e2e-$name.log"
	make --no-print-directory mutation-e2e E2E_MANAGER="$out/manager-$name" TEST_LOGS="$out/test-logs" \
		E2E_FLAGS="-ginkgo.focus='$focus' -ginkgo.fail-fast -ginkgo.no-color" >"$log" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && specs=$(caught "$log"); then
		summary+=("$name: e2e FAILED as wanted after $((SECONDS - began)) s on: $(echo "$specs" | head -3 | paste -sd ';' -)")
	else
		summary+=("$name: e2e PASSED (rc $rc, no failed spec; log $log)")
		survivors+=("$name/e2e")
	fi
	echo "${summary[-1]}"
done

echo
echo "mutation-check summary (logs in $out):"
printf '  %s\n' "${summary[@]}"
if [ ${#survivors[@]} -gt 0 ]; then
	echo "mutation-check: FAILED: these broken managers passed a suite meant to catch them: ${survivors[*]}"
	exit 1
fi
echo "mutation-check: every broken manager was caught"
