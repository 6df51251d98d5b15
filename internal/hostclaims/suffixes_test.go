package hostclaims

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestParseSuffixes(t *testing.T) {
	s, err := ParseSuffixes("team-a=team-a.example.com;shared.example.com, team-c=,*=apps.example.com")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		ns, host string
		want     bool
	}{
		{"team-a", "shop.team-a.example.com", true},
		{"team-a", "team-a.example.com", true},
		{"team-a", "*.team-a.example.com", true},
		{"team-a", "a.b.shared.example.com", true},
		{"team-a", "shop.apps.example.com", false}, // named: `*` is not for it
		{"team-a", "*.example.com", false},         // matches team-b.example.com too
		{"team-a", "xteam-a.example.com", false},   // a suffix starts at a label
		{"team-a", "example.com", false},
		{"team-c", "shop.apps.example.com", false}, // named with nothing: no host
		{"team-b", "shop.apps.example.com", true},
		{"team-b", "shop.team-a.example.com", false},
	}
	for _, tc := range cases {
		if got := s.Allows(tc.ns, tc.host); got != tc.want {
			t.Errorf("Allows(%q, %q) = %v, want %v", tc.ns, tc.host, got, tc.want)
		}
	}
	if got, restricted := s.For("team-c"); !restricted || len(got) != 0 {
		t.Errorf("For(team-c) = %v, %v; want no suffix, restricted", got, restricted)
	}

	none, err := ParseSuffixes("team-a=a.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if !none.Allows("team-b", "anything.example.org") {
		t.Error("a namespace neither named nor covered by * is restricted")
	}
	if !(Suffixes{}).Allows("team-a", "anything.example.org") {
		t.Error("the zero Suffixes restricts")
	}

	for _, bad := range []string{"team-a", "team-a=*.example.com", "Team-A=a.example.com", "team-a=A.example.com",
		"team-a=a.example.com,team-a=b.example.com", "team-a=a.example.com;;b.example.com", "=a.example.com", "team-a=a.example.com,"} {
		if _, err := ParseSuffixes(bad); err == nil {
			t.Errorf("ParseSuffixes(%q) accepts it", bad)
		}
	}
}

// TestAllowsAsRequestsDo: a host is allowed exactly when every request's host it matches is a
// suffix of the namespace or under one, checked against the requests that could be (the host
// itself, or a name under a wildcard's suffix that no suffix is), for random hosts and suffixes.
func TestAllowsAsRequestsDo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	labels := []string{"a", "b", "example", "com", "org", "shop"}
	name := func() string {
		parts := make([]string, 1+rng.IntN(3))
		for i := range parts {
			parts[i] = labels[rng.IntN(len(labels))]
		}
		return strings.Join(parts, ".")
	}
	within := func(host string, suffixes []string) bool {
		return slices.ContainsFunc(suffixes, func(s string) bool { return host == s || strings.HasSuffix(host, "."+s) })
	}
	for range 2000 {
		suffixes := make([]string, rng.IntN(3))
		for i := range suffixes {
			suffixes[i] = name()
		}
		s, err := ParseSuffixes("ns=" + strings.Join(suffixes, ";"))
		if err != nil {
			t.Fatal(err)
		}
		host := name()
		witness := host
		if rng.IntN(2) == 0 {
			host = "*." + host
			witness = "zz9." + strings.TrimPrefix(host, "*.") // a label no suffix begins with
		}
		if got, want := s.Allows("ns", host), within(witness, suffixes); got != want {
			t.Fatalf("Allows(%q) under %v = %v, but the request %q is within them: %v", host, suffixes, got, witness, want)
		}
	}
}
