#!/usr/bin/env bash
# make mutation-check: shows that the test suites can fail. It builds deliberately broken
# managers (the mutants of internal/controller/mutation.go, chosen at link time) and runs the
# suites that should notice each one. Every run must FAIL on a spec (not on a build or a
# suite setup); the script fails if any mutant passes a suite meant to catch it. Not in CI:
# it runs the envtest suite once and a focused end-to-end story once per mutant (~10 min).
#
# Needs: KUBEBUILDER_ASSETS; for the end-to-end runs the Makefile's mutation-e2e target
# (make mutation-check provides both). MUTANTS="a b" runs a subset; SKIP_E2E=1 skips the
# end-to-end runs.
set -uo pipefail
cd "$(dirname "$0")/.."

pkg=github.com/example/myapp-operator/internal/controller
out=${MUTATION_DIR:-$PWD/bin/mutants}
mkdir -p "$out"

# mutant | end-to-end focus (a regular expression on spec names; empty: envtest only)
table=(
	"no-status|runs its pods, scales with kubectl"
	"foreign-owner|runs its pods, scales with kubectl"
	"hot-loop|reports an application that cannot start, without a hot loop"
	"no-recreate|"
)
want=" ${MUTANTS:-no-status foreign-owner hot-loop no-recreate} "

survivors=()
summary=()

# caught RUNLOG: holds when the Ginkgo run failed on at least one spec; prints the specs.
caught() {
	local specs
	specs=$(grep -E '^\s*\[FAIL\] ' "$1" | grep -v -E '\[(BeforeSuite|AfterSuite|SynchronizedBeforeSuite)\]' | sed -E 's/^\s*\[FAIL\] //; s/ \[(It|BeforeEach|AfterEach|JustBeforeEach|DeferCleanup)\] /: /' | sort -u)
	[ -n "$specs" ] || return 1
	echo "$specs"
}

for row in "${table[@]}"; do
	name=${row%%|*}
	focus=${row#*|}
	case "$want" in *" $name "*) ;; *) continue ;; esac
	ldflags="-X $pkg.mutant=$name"

	echo "=== mutant $name: envtest suite (internal/controller)"
	began=$SECONDS
	if ! go test -c -o "$out/controller-$name.test" -ldflags "$ldflags" ./internal/controller/; then
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

	[ -n "$focus" ] && [ "${SKIP_E2E:-}" != 1 ] || continue
	echo "=== mutant $name: end-to-end story \"$focus\""
	began=$SECONDS
	go build -ldflags "$ldflags" -o "$out/manager-$name" ./cmd/main.go || { echo "mutation-check: the $name manager does not build"; exit 2; }
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
