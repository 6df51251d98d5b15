package hostclaims

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func TestHostsMeet(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"shop.example.com", "shop.example.com", true},
		{"shop.example.com", "api.example.com", false},
		{"*.example.com", "shop.example.com", true},
		{"*.example.com", "a.shop.example.com", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "notexample.com", false},
		{"*.example.com", "*.shop.example.com", true},
		{"*.example.com", "*.example.com", true},
		{"*.example.com", "*.example.org", false},
		{"*.shop.example.com", "api.example.com", false},
		{"example.com", "com", false},
	}
	for _, tc := range cases {
		if got := HostsMeet(tc.a, tc.b); got != tc.want {
			t.Errorf("HostsMeet(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := HostsMeet(tc.b, tc.a); got != tc.want {
			t.Errorf("HostsMeet(%q, %q) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestJudge(t *testing.T) {
	claim := func(ns, name, host, path string, since time.Duration) Claim {
		return Claim{Namespace: ns, Name: name, Host: host, Path: path, Since: t0.Add(since), Recorded: true}
	}
	cases := map[string]struct {
		mine, others []Claim
		refused      []int    // indexes of mine refused
		holders      []string // namespace/name of each refusal's holder
	}{
		"a host of another namespace, on another path: the namespace holds every path": {
			mine:    []Claim{claim("b", "shop", "shop.example.com", "/api", time.Hour)},
			others:  []Claim{claim("a", "shop", "shop.example.com", "/", 0)},
			refused: []int{0}, holders: []string{"a/shop"},
		},
		"the same namespace on another path: shared": {
			mine:   []Claim{claim("a", "api", "shop.example.com", "/api", time.Hour)},
			others: []Claim{claim("a", "shop", "shop.example.com", "/", 0)},
		},
		"the same namespace on an equal path, however written": {
			mine:    []Claim{claim("a", "api", "shop.example.com", "/api/", time.Hour)},
			others:  []Claim{claim("a", "shop", "shop.example.com", "/api", 0)},
			refused: []int{0}, holders: []string{"a/shop"},
		},
		"the younger claim is refused, not the older": {
			mine:   []Claim{claim("a", "shop", "shop.example.com", "/", 0)},
			others: []Claim{claim("b", "shop", "shop.example.com", "/", time.Hour)},
		},
		"a tie goes to the first namespace/name": {
			mine:    []Claim{claim("b", "shop", "shop.example.com", "/", 0)},
			others:  []Claim{claim("a", "zzz", "shop.example.com", "/", 0)},
			refused: []int{0}, holders: []string{"a/zzz"},
		},
		"a wildcard of another namespace holds the hosts under it; the other hosts are kept": {
			mine: []Claim{claim("b", "shop", "shop.example.com", "/", time.Hour), claim("b", "shop", "shop.example.org", "/", time.Hour)},
			others: []Claim{claim("c", "edge", "*.example.com", "/", 2*time.Minute),
				claim("a", "all", "*.example.com", "/", time.Minute)},
			refused: []int{0}, holders: []string{"a/all"},
		},
		"a claim not recorded yet is younger than every recorded one, even in the same second": {
			mine:    []Claim{{Namespace: "a", Name: "aaa", Host: "shop.example.com", Path: "/", Since: t0}},
			others:  []Claim{claim("b", "zzz", "shop.example.com", "/", 0)},
			refused: []int{0}, holders: []string{"b/zzz"},
		},
		"its own record is no conflict": {
			mine:   []Claim{claim("a", "shop", "shop.example.com", "/", time.Hour)},
			others: []Claim{claim("a", "shop", "shop.example.com", "/", 0)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			held, refused := Judge(tc.mine, tc.others)
			var idx []int
			var holders []string
			for _, r := range refused {
				idx = append(idx, r.Index)
				holders = append(holders, r.Holder.Namespace+"/"+r.Holder.Name)
			}
			if !slices.Equal(idx, tc.refused) || !slices.Equal(holders, tc.holders) {
				t.Errorf("refused %v held by %v, want %v held by %v", idx, holders, tc.refused, tc.holders)
			}
			if len(held)+len(refused) != len(tc.mine) {
				t.Errorf("%d held and %d refused of %d claims", len(held), len(refused), len(tc.mine))
			}
		})
	}
}

// hostPool are hosts that meet in every way: equal, wildcards over hosts and over wildcards,
// and hosts that only share a suffix.
var hostPool = []string{"example.com", "shop.example.com", "api.shop.example.com", "*.example.com", "*.shop.example.com",
	"notexample.com", "*.com", "a.b.example.org", "*.b.example.org", "b.example.org", "shopexample.com"}

// TestHostsMeetAsRequestsDo: two hosts meet exactly when one request's host is matched by
// both, checked against the requests that could be (each host, and a name under each
// wildcard's suffix), for every pair of the pool and of random hosts.
func TestHostsMeetAsRequestsDo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	hosts := slices.Clone(hostPool)
	labels := []string{"a", "b", "example", "com", "org", "shop"}
	for range 300 {
		parts := make([]string, 1+rng.IntN(4))
		for i := range parts {
			parts[i] = labels[rng.IntN(len(labels))]
		}
		h := strings.Join(parts, ".")
		if rng.IntN(3) == 0 {
			h = "*." + h
		}
		hosts = append(hosts, h)
	}
	// matches is how a route or an Ingress rule matches a request's host, in the wider sense.
	matches := func(pattern, host string) bool {
		if suffix, ok := strings.CutPrefix(pattern, "*."); ok {
			return strings.HasSuffix(host, "."+suffix)
		}
		return pattern == host
	}
	witnesses := func(h string) []string {
		if suffix, ok := strings.CutPrefix(h, "*."); ok {
			return []string{"x." + suffix}
		}
		return []string{h}
	}
	for _, a := range hosts {
		for _, b := range hosts {
			both := slices.ContainsFunc(append(witnesses(a), witnesses(b)...), func(h string) bool { return matches(a, h) && matches(b, h) })
			if got := HostsMeet(a, b); got != both {
				t.Fatalf("HostsMeet(%q, %q) = %v, but a request both match exists: %v", a, b, got, both)
			}
		}
	}
}

// app is a MyApp of the simulation: its claims as its spec asks for them, and as its status
// records them.
type app struct {
	ns, name string
	spec     []Claim // Host and Path only
	recorded []Claim
}

// TestClaimsInAnyOrder: MyApps that add and drop hosts and reconcile in any order, each
// judging its claims against the others' records and recording what it holds before it would
// serve them, never both serve two claims that conflict, and a MyApp never loses a claim it
// holds while its spec keeps it. Once every MyApp has reconciled after the last change, every
// refused claim has a holder that serves it.
func TestClaimsInAnyOrder(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		apps := make([]*app, 2+rng.IntN(5))
		for i := range apps {
			apps[i] = &app{ns: []string{"a", "b", "c"}[rng.IntN(3)], name: fmt.Sprintf("app%d", i)}
		}
		randomSpec := func(a *app) {
			a.spec = nil
			for range 1 + rng.IntN(3) {
				c := Claim{Namespace: a.ns, Name: a.name, Host: hostPool[rng.IntN(len(hostPool))], Path: []string{"/", "/api", "/api/"}[rng.IntN(3)]}
				if !slices.ContainsFunc(a.spec, func(s Claim) bool { return s.Host == c.Host && s.Path == c.Path }) {
					a.spec = append(a.spec, c)
				}
			}
		}
		for _, a := range apps {
			randomSpec(a)
		}
		now := t0
		reconcile := func(a *app) {
			now = now.Add(time.Duration(rng.IntN(3)) * time.Second) // two looks may share a second
			var mine, others []Claim
			for _, s := range a.spec {
				c := s
				c.Since = now
				for _, r := range a.recorded {
					if r.Host == s.Host && r.Path == s.Path {
						c.Since, c.Recorded = r.Since, true
					}
				}
				mine = append(mine, c)
			}
			for _, o := range apps {
				if o != a {
					others = append(others, recordedInSpec(o)...)
				}
			}
			held, _ := Judge(mine, others)
			for _, r := range recordedInSpec(a) {
				if !slices.ContainsFunc(held, func(h Claim) bool { return h.Host == r.Host && h.Path == r.Path }) {
					t.Fatalf("seed %d: %s/%s lost %s%s, which it held since %s and its spec keeps", seed, a.ns, a.name, r.Host, r.Path, r.Since)
				}
			}
			for i := range held {
				held[i].Recorded = true
			}
			a.recorded = held
		}
		for range 40 {
			a := apps[rng.IntN(len(apps))]
			if rng.IntN(4) == 0 {
				randomSpec(a)
			}
			reconcile(a)
			assertNoConflict(t, seed, apps)
		}
		for range 2 {
			for _, i := range rng.Perm(len(apps)) {
				reconcile(apps[i])
			}
		}
		assertNoConflict(t, seed, apps)
		for _, a := range apps {
			var others []Claim
			for _, o := range apps {
				if o != a {
					others = append(others, o.recorded...)
				}
			}
			for _, s := range a.spec {
				if slices.ContainsFunc(a.recorded, func(r Claim) bool { return r.Host == s.Host && r.Path == s.Path }) {
					continue
				}
				if !slices.ContainsFunc(others, func(o Claim) bool { return Conflict(s, o) }) {
					t.Fatalf("seed %d: %s/%s's claim %s%s is refused, but no held claim conflicts with it", seed, a.ns, a.name, s.Host, s.Path)
				}
			}
		}
	}
}

// recordedInSpec are the recorded claims an app's spec still asks for: what the others judge
// against (a host dropped from the spec is let go at once, before its status says so).
func recordedInSpec(a *app) []Claim {
	var out []Claim
	for _, r := range a.recorded {
		if slices.ContainsFunc(a.spec, func(s Claim) bool { return s.Host == r.Host && s.Path == r.Path }) {
			out = append(out, r)
		}
	}
	return out
}

func assertNoConflict(t *testing.T, seed uint64, apps []*app) {
	t.Helper()
	var served []Claim
	for _, a := range apps {
		served = append(served, recordedInSpec(a)...)
	}
	for i, a := range served {
		for _, b := range served[i+1:] {
			if Conflict(a, b) {
				t.Fatalf("seed %d: %s/%s serves %s%s and %s/%s serves %s%s, which conflict", seed, a.Namespace, a.Name, a.Host, a.Path, b.Namespace, b.Name, b.Host, b.Path)
			}
		}
	}
}
