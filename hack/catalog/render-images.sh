#!/usr/bin/env bash
# render-images.sh renders bundles into file-based catalog objects from their bundle IMAGES, the
# way a published catalog must reference them, with no network and no container engine:
#
#   render-images.sh IMAGE_TOOL OPM BUNDLE_REPO BUNDLE_DIR...
#
# It starts a throw-away registry on a free loopback port, builds each bundle directory into a
# bundle image with the image tool and pushes it as <registry>/BUNDLE_REPO:v<version>
# (push-bundles.sh: reproducible, so the digest of a bundle is known offline and equals the one
# of the image a release publishes), renders all of them by digest with `opm render`, rewrites
# the throw-away registry away so every reference names BUNDLE_REPO@sha256:..., prints the
# result (YAML) on stdout and stops the registry.
set -euo pipefail

image_tool=$1 opm=$2 bundle_repo=$3
shift 3

work=$(mktemp -d)
registry_pid=
cleanup() {
	if [ -n "$registry_pid" ]; then
		kill "$registry_pid" 2>/dev/null || true
		wait "$registry_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

"$image_tool" registry --addr 127.0.0.1:0 --addr-file "$work/addr" --dir "$work/blobs" 2>"$work/registry.log" &
registry_pid=$!
for _ in $(seq 100); do
	[ -s "$work/addr" ] && break
	kill -0 "$registry_pid" 2>/dev/null || { cat "$work/registry.log" >&2; exit 1; }
	sleep 0.1
done
[ -s "$work/addr" ] || { echo "the throw-away registry did not start" >&2; exit 1; }
registry=$(cat "$work/addr")

# One reference per line, by digest, in the order of the directories.
mapfile -t refs < <("$(dirname "$0")/push-bundles.sh" "$image_tool" "$registry" "$bundle_repo" "$@")
[ "${#refs[@]}" = "$#" ] || { echo "pushed ${#refs[@]} bundle images for $# bundles" >&2; exit 1; }

# opm pulls with containers/image, which wants a signature policy: accept anything, from a
# HOME of our own, as the only registry it talks to is the throw-away one just filled.
mkdir -p "$work/home/.config/containers"
echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$work/home/.config/containers/policy.json"
HOME="$work/home" "$opm" render --use-http -o yaml "${refs[@]}" | sed "s|$registry/||g"
