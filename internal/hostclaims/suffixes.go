package hostclaims

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// AnyNamespace names, in --expose-host-suffixes, the namespaces the flag does not name.
const AnyNamespace = "*"

// Suffixes are the host suffixes each namespace may claim, as an administrator restricts them
// with the manager's --expose-host-suffixes flag. The zero value restricts nothing.
type Suffixes struct {
	// byNamespace holds the suffixes of each namespace named, AnyNamespace included; a
	// namespace named with no suffix may claim no host.
	byNamespace map[string][]string
}

// ParseSuffixes reads --expose-host-suffixes:
// `<namespace>=<suffix>[;<suffix>...][,<namespace>=...]`, where the namespace `*` stands for
// every namespace not named, and a namespace with nothing after its `=` may claim no host.
// A suffix is a DNS name; a wildcard or an upper-case letter is refused, since no host of
// spec.expose could be under it as written. "" restricts nothing.
func ParseSuffixes(value string) (Suffixes, error) {
	s := Suffixes{}
	if strings.TrimSpace(value) == "" {
		return s, nil
	}
	s.byNamespace = map[string][]string{}
	for entry := range strings.SplitSeq(value, ",") {
		ns, list, ok := strings.Cut(strings.TrimSpace(entry), "=")
		if !ok {
			return Suffixes{}, fmt.Errorf("%q is not <namespace>=<suffix>[;<suffix>...]", entry)
		}
		if ns != AnyNamespace {
			if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
				return Suffixes{}, fmt.Errorf("%q: the namespace %q %s", entry, ns, strings.Join(errs, "; "))
			}
		}
		if _, twice := s.byNamespace[ns]; twice {
			return Suffixes{}, fmt.Errorf("the namespace %q is named twice", ns)
		}
		suffixes := []string{}
		if list != "" {
			for suffix := range strings.SplitSeq(list, ";") {
				if errs := validation.IsDNS1123Subdomain(suffix); len(errs) > 0 {
					return Suffixes{}, fmt.Errorf("%q: the host suffix %q is not a DNS name such as team-a.example.com: %s",
						entry, suffix, strings.Join(errs, "; "))
				}
				suffixes = append(suffixes, suffix)
			}
		}
		s.byNamespace[ns] = suffixes
	}
	return s, nil
}

// For returns the suffixes the namespace may claim hosts under, and whether it is restricted
// at all (a namespace neither named nor covered by `*` is not).
func (s Suffixes) For(namespace string) (suffixes []string, restricted bool) {
	if list, ok := s.byNamespace[namespace]; ok {
		return list, true
	}
	list, ok := s.byNamespace[AnyNamespace]
	return list, ok
}

// Allows tells whether the namespace may claim the host: every request's host the host
// matches is a suffix of the namespace's or under one. A wildcard is allowed when its own
// suffix is (`*.team-a.example.com` under team-a.example.com); `*.example.com` is not allowed
// to a namespace that has only team-a.example.com, since it matches team-b.example.com too.
func (s Suffixes) Allows(namespace, host string) bool {
	suffixes, restricted := s.For(namespace)
	if !restricted {
		return true
	}
	_, base := split(host)
	return slices.ContainsFunc(suffixes, func(suffix string) bool { return base == suffix || under(base, suffix) })
}
