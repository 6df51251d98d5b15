#!/usr/bin/env bash
# disconnected.sh fills the mirror a disconnected (air-gapped) cluster installs the operator
# from: under REGISTRY/example.com/disconnected/ it pushes, by digest only and with no tag,
# the manager image, the image of the pinned bundle (make bundle-pinned) and a catalog image
# that serves only that bundle, naming it by digest. It prints the catalog image's reference
# as the cluster names it (example.com/disconnected/myapp-operator-catalog@sha256:...).
#
#   disconnected.sh IMAGE_TOOL OPM STATIC_OPM GRPC_HEALTH_PROBE REGISTRY PINNED_BUNDLE MANAGER_BINARY ARCH
#
# The manager image is built as make bundle-pinned builds it, so its digest must be the one the
# pinned bundle names; the script fails otherwise.
set -euo pipefail

image_tool=$1 opm=$2 static_opm=$3 grpc_health_probe=$4 registry=$5 bundle=$6 manager=$7 arch=$8
mirror=example.com/disconnected
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

csv=$(ls "$bundle"/manifests/*.clusterserviceversion.yaml)
pinned=$(awk '$1 == "containerImage:" { print $2 }' "$csv")
case $pinned in "$mirror/myapp-operator@sha256:"*) ;; *) echo "$csv: containerImage $pinned is not pinned in $mirror" >&2; exit 1 ;; esac

out=$("$image_tool" build --arch "$arch" --tag "$registry/$mirror/myapp-operator:unused" --add "$manager:/manager" \
	--entrypoint /manager --user 65532:65532 --push --by-digest)
[ "${pinned#*@}" = "${out##*@}" ] ||
	{ echo "the manager image built here is ${out##*@}; the pinned bundle names ${pinned#*@}" >&2; exit 1; }
echo "manager: $mirror/myapp-operator@${out##*@}" >&2

bundle_ref=$(BY_DIGEST=1 "$(dirname "$0")/push-bundles.sh" "$image_tool" "$registry" "$mirror/myapp-operator-bundle" "$bundle")
echo "bundle: ${bundle_ref#"$registry/"}" >&2

# A catalog of this one bundle: the package, a channel with only it, and the bundle rendered
# from its image by digest (opm pulls with containers/image, which wants a signature policy).
mkdir -p "$work/catalog/myapp-operator" "$work/home/.config/containers"
echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$work/home/.config/containers/policy.json"
name=$(awk '/^metadata:/ {m=1} m && /^  name:/ {print $2; exit}' "$csv")
{
	printf 'schema: olm.package\nname: myapp-operator\ndefaultChannel: alpha\n---\n'
	printf 'schema: olm.channel\npackage: myapp-operator\nname: alpha\nentries:\n- name: %s\n---\n' "$name"
	HOME="$work/home" "$opm" render --use-http -o yaml "$bundle_ref" | sed "s|$registry/||g"
} >"$work/catalog/myapp-operator/catalog.yaml"
"$opm" validate "$work/catalog"

out=$("$image_tool" build --tag "$registry/$mirror/myapp-operator-catalog:unused" --add "$static_opm:/bin/opm" \
	--add "$grpc_health_probe:/bin/grpc_health_probe" --add "$work/catalog:/configs" \
	--label operators.operatorframework.io.index.configs.v1=/configs --env PATH=/bin \
	--entrypoint /bin/opm,serve,/configs,--cache-dir=/tmp/cache,--cache-enforce-integrity=false --push --by-digest)
echo "catalog: $mirror/myapp-operator-catalog@${out##*@}" >&2
echo "$mirror/myapp-operator-catalog@${out##*@}"
