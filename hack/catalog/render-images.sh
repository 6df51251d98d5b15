#!/usr/bin/env bash
# render-images.sh renders bundles into file-based catalog objects from their bundle IMAGES, the
# way a published catalog must reference them, with no network and no container engine:
#
#   render-images.sh IMAGE_TOOL OPM BUNDLE_REPO BUNDLE_DIR...
#
# It starts a throw-away registry on a free loopback port, builds each bundle directory into a
# bundle image with the image tool (reproducible: fixed file times and modes, so the digest of
# a bundle is known offline and equals the one of the image a release publishes), pushes it as
# <registry>/BUNDLE_REPO:v<version>, renders all of them by digest with `opm render`, rewrites
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

refs=()
for dir in "$@"; do
	csv=$(ls "$dir"/manifests/*.clusterserviceversion.yaml)
	version=$(awk '/^spec:/ {s=1} s && /^  version:/ {print $2; exit}' "$csv")
	[ -n "$version" ] || { echo "$csv: no spec.version" >&2; exit 1; }
	# A copy with the modes a fresh clone under any umask would have to agree on.
	stage="$work/bundle-$version"
	cp -r "$dir" "$stage"
	chmod -R u=rwX,go=rX "$stage"
	adds=()
	for sub in manifests metadata tests; do
		[ -d "$stage/$sub" ] && adds+=(--add "$stage/$sub:/$sub")
	done
	# The bundle's annotations are also its image labels, which `opm render` reads.
	labels=()
	while IFS= read -r label; do labels+=(--label "$label"); done < <(
		awk '/^annotations:/ {a=1; next} a && /^  [^ #]/ {sub(/^  /, ""); k=$0; sub(/:.*/, "", k);
			v=$0; sub(/^[^:]*: */, "", v); print k "=" v}' "$stage/metadata/annotations.yaml")
	out=$("$image_tool" build --arch amd64 --tag "$registry/$bundle_repo:v$version" --push "${adds[@]}" "${labels[@]}")
	digest=${out##*@}
	case $digest in sha256:*) ;; *) echo "no digest in: $out" >&2; exit 1 ;; esac
	refs+=("$registry/$bundle_repo@$digest")
	echo "bundle $dir -> $bundle_repo:v$version @ $digest" >&2
done

# opm pulls with containers/image, which wants a signature policy: accept anything, from a
# HOME of our own, as the only registry it talks to is the throw-away one just filled.
mkdir -p "$work/home/.config/containers"
echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$work/home/.config/containers/policy.json"
HOME="$work/home" "$opm" render --use-http -o yaml "${refs[@]}" | sed "s|$registry/||g"
