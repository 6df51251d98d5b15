#!/usr/bin/env bash
# push-bundles.sh builds each bundle directory into a bundle image and pushes it to REGISTRY as
# REGISTRY/BUNDLE_REPO:v<version>; it prints one REGISTRY/BUNDLE_REPO@sha256:... per bundle.
#
#   push-bundles.sh IMAGE_TOOL REGISTRY BUNDLE_REPO BUNDLE_DIR...
#
# With BY_DIGEST=1 the images are pushed by digest only, with no tag, as a disconnected
# cluster's mirror holds them.
#
# The build is reproducible (fixed file times, modes and architecture), so the digest of a
# bundle is known offline: make catalog (render-images.sh) and the OLM v1 test (test/olmv1)
# get the same digests, the ones catalog/ names.
set -euo pipefail

image_tool=$1 registry=$2 bundle_repo=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

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
	out=$("$image_tool" build --arch amd64 --tag "$registry/$bundle_repo:v$version" --push ${BY_DIGEST:+--by-digest} "${adds[@]}" "${labels[@]}")
	digest=${out##*@}
	case $digest in sha256:*) ;; *) echo "no digest in: $out" >&2; exit 1 ;; esac
	echo "bundle $dir -> $bundle_repo:v$version @ $digest" >&2
	echo "$registry/$bundle_repo@$digest"
done
