#!/usr/bin/env bash
# keep-logs.sh STATE_DIR DEST [KUBECTL]: after a failed test run, before the local cluster in
# STATE_DIR is removed, copies the logs of every component (STATE_DIR/logs) to DEST, with what
# the API server still knows (pods, events, and the logs of the operator's pods on a real
# node), then prints where they are and the last 40 lines of the operator's log. DEST/SUMMARY
# repeats that for .ci/run. Best effort: it never fails the caller.
set -uo pipefail
state=$1 dest=$2 kubectl=${3:-kubectl}
lines=40

mkdir -p "$dest"
if [ -d "$state/logs" ]; then
	cp -a "$state/logs/." "$dest/"
fi
for f in node-kind pids; do
	[ -e "$state/$f" ] && cp -a "$state/$f" "$dest/" 2>/dev/null
done

# What the cluster says, while it still runs (10 s at most for each question).
kc=$state/kubeconfig
if [ -s "$kc" ] && command -v "$kubectl" >/dev/null 2>&1; then
	k() { timeout 10 "$kubectl" --kubeconfig "$kc" --request-timeout=8s "$@"; }
	k get myapps,deployments,replicasets,pods,services,hpa,pdb -A -o wide >"$dest/cluster-objects.txt" 2>&1
	k get events -A --sort-by=.lastTimestamp >"$dest/cluster-events.txt" 2>&1
	# The edge of the real-node stories (Traefik), when there is one: what it was given and
	# what it said (the Gateway API's kinds are there only once a story installed them).
	k get ingressclasses,ingresses -A -o yaml >"$dest/cluster-edge.yaml" 2>&1
	k get gatewayclasses,gateways,httproutes -A -o yaml >>"$dest/cluster-edge.yaml" 2>&1
	k get pods -n traefik -o 'jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}' 2>/dev/null |
		while read -r pod; do
			[ -n "$pod" ] && k logs -n traefik "$pod" --prefix >"$dest/pod-traefik-$pod.log" 2>&1
		done
	# The operator as a pod (make test-realnode, OLM): its log is not in STATE_DIR/logs.
	k get pods -A -l control-plane=controller-manager -o 'jsonpath={range .items[*]}{.metadata.namespace}{" "}{.metadata.name}{"\n"}{end}' 2>/dev/null |
		while read -r ns pod; do
			[ -n "$pod" ] && k logs -n "$ns" "$pod" --all-containers --prefix >"$dest/pod-$ns-$pod.log" 2>&1
		done
fi

# The operator's log: the newest of the operator's logs (the demo's operator.log, the
# end-to-end suites' e2e-*.log and *manager*.log, the logs of its pods).
operator_log=$(ls -t "$dest"/operator.log "$dest"/e2e-*.log "$dest"/*manager*.log "$dest"/pod-*controller-manager*.log 2>/dev/null | head -1)

{
	echo "The test failed; the logs of every component of the local cluster are kept in"
	echo "  $dest"
	if [ -n "$operator_log" ]; then
		echo "--- last $lines lines of the operator's log, $operator_log ---"
		tail -n "$lines" "$operator_log"
		echo "--- end of $operator_log ---"
	else
		echo "(no operator log among them)"
	fi
} | tee "$dest/SUMMARY" >&2
exit 0
