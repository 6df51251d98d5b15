#!/usr/bin/env bash
# trim.sh writes into OUT a copy of Traefik's source (from the module cache, at the version
# hack/tools/traefik/go.mod pins) without what the tests never run, and a go.mod that builds
# from it: the Amazon ECS provider is replaced by trim/ecs.go, and the acme provider's one
# call to the DNS challenge's providers becomes an error. Together those are about 58 of the
# 137 MB of Go that a cold build of Traefik compiles (docs/performance/build-times.md). The
# Makefile builds $(TRAEFIK) with `go build -modfile OUT/go.mod`. It fails when Traefik's
# source no longer has what it edits, so that a version bump is looked at again.
#
# Usage: trim/trim.sh OUT   (run from hack/tools/traefik)
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
mod=github.com/traefik/traefik/v3
# go list -m names the module's folder only once it is in the module cache: a new machine has
# not downloaded it yet.
go mod download "$mod"
src=$(go list -m -f '{{.Dir}}' "$mod")
[ -n "$src" ] && [ -d "$src" ] || { echo "trim.sh: $mod is not in the module cache after go mod download" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out/traefik"
cp -r "$src"/go.mod "$src"/go.sum "$src"/cmd "$src"/pkg "$src"/internal "$src"/webui "$out/traefik/"
chmod -R u+w "$out/traefik"

acme=$out/traefik/pkg/provider/acme/provider.go
dns='"github.com/go-acme/lego/v4/providers/dns"'
call='dns.NewDNSChallengeProviderByName(p.DNSChallenge.Provider)'
for want in "$dns" "$call"; do
	grep -qF "$want" "$acme" || { echo "trim.sh: $acme has no $want; look at the trim again" >&2; exit 1; }
done
sed -i -e "\|^[[:space:]]*$dns\$|d" \
	-e "s|$call|nil, errors.New(\"this build of Traefik has no DNS challenge providers (myapp-operator's test build)\")|" "$acme"
if grep -q 'lego/v4/providers/dns"' "$acme"; then echo "trim.sh: the DNS providers are still imported" >&2; exit 1; fi

ecs=$out/traefik/pkg/provider/ecs
for f in ecs.go config.go label.go; do
	[ -f "$ecs/$f" ] || { echo "trim.sh: $ecs has no $f; look at the trim again" >&2; exit 1; }
done
rm -f "$ecs"/*.go && cp "$here/ecs.go" "$ecs/ecs.go"

cp go.sum "$out/go.sum"
{ cat go.mod; echo; echo "replace $mod => $out/traefik"; } >"$out/go.mod"
