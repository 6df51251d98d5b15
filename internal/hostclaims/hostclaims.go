// Package hostclaims decides which MyApp may expose a host (docs/design/host-claims.md): a
// host belongs to the namespace of its oldest claim, with every path under it; MyApps of that
// namespace share it on different paths. Everything here is a pure function of the claims
// and their recorded ages, so that any order of reconciles reaches the same holders.
package hostclaims

import (
	"cmp"
	"strings"
	"time"
)

// Claim is a host and path a MyApp exposes, and since when it holds them (its record in the
// MyApp's status; for a claim not recorded yet, the time it is judged).
type Claim struct {
	Namespace, Name string
	Host, Path      string
	Since           time.Time
	// Recorded tells whether the MyApp's status records the claim. A claim not recorded yet
	// is younger than every recorded one, whatever the clock says: the status holds times to
	// the second, and a newcomer must not win a tie against a holder.
	Recorded bool
}

// Refusal is a claim of the MyApp judged that an older claim of another MyApp holds.
type Refusal struct {
	// Index is the claim's place in the claims judged (spec.expose.hosts[Index]).
	Index  int
	Claim  Claim
	Holder Claim
}

// Judge splits a MyApp's claims into those it holds and those older claims of other MyApps
// hold. others are the recorded claims of the other MyApps the manager watches. A claim not
// recorded yet is refused by every recorded claim it conflicts with; a recorded one (two
// MyApps recorded conflicting claims within the cache's lag) by an older one. Of several, the
// oldest is named as the holder.
func Judge(mine, others []Claim) (held []Claim, refused []Refusal) {
	for i, c := range mine {
		var holder *Claim
		for j := range others {
			o := &others[j]
			if Conflict(c, *o) && (!c.Recorded || Older(*o, c)) && (holder == nil || Older(*o, *holder)) {
				holder = o
			}
		}
		if holder == nil {
			held = append(held, c)
			continue
		}
		refused = append(refused, Refusal{Index: i, Claim: c, Holder: *holder})
	}
	return held, refused
}

// Conflict tells whether two claims of different MyApps cannot both be served: their hosts
// meet and they are of different namespaces (a host belongs to one namespace, every path
// under it), or of one namespace on an equal path (which one answers would be the ingress
// controller's choice).
func Conflict(a, b Claim) bool {
	if a.Namespace == b.Namespace && a.Name == b.Name {
		return false
	}
	if !HostsMeet(a.Host, b.Host) {
		return false
	}
	return a.Namespace != b.Namespace || samePath(a.Path, b.Path)
}

// Older tells whether claim a is older than b: recorded earlier, or at the same time and
// first in alphabetical namespace/name order, as the Gateway API breaks ties between routes.
func Older(a, b Claim) bool {
	return cmp.Or(a.Since.Compare(b.Since), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name)) < 0
}

// samePath tells whether two exposed paths are one: "/shop" and "/shop/" are.
func samePath(a, b string) bool {
	norm := func(p string) string {
		if p == "" {
			return "/"
		}
		if len(p) > 1 {
			return strings.TrimSuffix(p, "/")
		}
		return p
	}
	return norm(a) == norm(b)
}

// HostsMeet tells whether some request's host is matched by both: equal hosts, a wildcard
// ("*.example.com") and a host under its suffix (a.example.com, a.b.example.com: the Gateway
// API's wider sense, since the operator does not know how a MyApp will be exposed tomorrow),
// or two wildcards one of whose suffixes is under the other's.
func HostsMeet(a, b string) bool {
	aw, as := split(a)
	bw, bs := split(b)
	switch {
	case !aw && !bw:
		return as == bs
	case aw && !bw:
		return under(bs, as)
	case !aw && bw:
		return under(as, bs)
	default:
		return as == bs || under(as, bs) || under(bs, as)
	}
}

// split takes a wildcard's "*." off: whether it was one, and the rest.
func split(host string) (wildcard bool, base string) {
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		return true, rest
	}
	return false, host
}

// under tells whether host is strictly under domain: a label boundary before domain.
func under(host, domain string) bool {
	return strings.HasSuffix(host, "."+domain)
}
