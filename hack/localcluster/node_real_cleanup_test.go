package main

import (
	"reflect"
	"slices"
	"testing"
)

func TestSplitRule(t *testing.T) {
	cases := map[string]struct {
		line string
		want []string
	}{
		"plain": {`-A INPUT -j KUBE-FIREWALL`, []string{"-A", "INPUT", "-j", "KUBE-FIREWALL"}},
		"quoted comment": {`-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
			[]string{"-A", "OUTPUT", "-m", "comment", "--comment", "kubernetes service portals", "-j", "KUBE-SERVICES"}},
		"escaped quotes in a quoted comment": {`-A CNI-HOSTPORT-DNAT -m comment --comment "dnat name: \"localcluster\" id: \"abc\"" -j CNI-DN-1`,
			[]string{"-A", "CNI-HOSTPORT-DNAT", "-m", "comment", "--comment", `dnat name: "localcluster" id: "abc"`, "-j", "CNI-DN-1"}},
		"empty argument": {`-A X --nfacct-name "" -j DROP`, []string{"-A", "X", "--nfacct-name", "", "-j", "DROP"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := splitRule(c.line); !reflect.DeepEqual(got, c.want) {
				t.Errorf("splitRule(%q) = %q, want %q", c.line, got, c.want)
			}
		})
	}
}

func TestIsOurCNIChain(t *testing.T) {
	ours := `-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment "dnat name: \"localcluster\" id: \"87b6\"" -m multiport --dports 18099 -j CNI-DN-6c79`
	theirs := `-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment "dnat name: \"podman\" id: \"11aa\"" -m multiport --dports 8080 -j CNI-DN-9f00`
	cases := map[string]struct {
		table map[string][]string
		chain string
		want  bool
	}{
		"a pod's chain jumped to by a rule naming our network": {
			map[string][]string{"CNI-HOSTPORT-DNAT": {ours}, "CNI-DN-6c79": {"-A CNI-DN-6c79 -p tcp -j DNAT --to-destination 10.244.0.3:8080"}},
			"CNI-DN-6c79", true},
		"another network's pod chain": {
			map[string][]string{"CNI-HOSTPORT-DNAT": {theirs}, "CNI-DN-9f00": {"-A CNI-DN-9f00 -p tcp -j DNAT"}},
			"CNI-DN-9f00", false},
		"portmap's shared chain holding only our pods": {
			map[string][]string{"CNI-HOSTPORT-DNAT": {ours}}, "CNI-HOSTPORT-DNAT", true},
		"portmap's shared chain holding another network's pod": {
			map[string][]string{"CNI-HOSTPORT-DNAT": {ours, theirs}}, "CNI-HOSTPORT-DNAT", false},
		"portmap's empty shared chain": {
			map[string][]string{"CNI-HOSTPORT-DNAT": nil}, "CNI-HOSTPORT-DNAT", true},
		"portmap's fixed masquerade chain": {
			map[string][]string{"CNI-HOSTPORT-MASQ": {"-A CNI-HOSTPORT-MASQ -m mark --mark 0x2000/0x2000 -j MASQUERADE"}},
			"CNI-HOSTPORT-MASQ", true},
		"portmap's fixed masquerade chain while another network maps ports": {
			map[string][]string{"CNI-HOSTPORT-DNAT": {theirs},
				"CNI-HOSTPORT-MASQ": {"-A CNI-HOSTPORT-MASQ -m mark --mark 0x2000/0x2000 -j MASQUERADE"}},
			"CNI-HOSTPORT-MASQ", false},
		"not a CNI chain": {
			map[string][]string{"KUBE-SERVICES": {`-A KUBE-SERVICES -m comment --comment "name: \"localcluster\"" -j KUBE-SERVICES`}},
			"KUBE-SERVICES", false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := isOurCNIChain(c.chain, c.table); got != c.want {
				t.Errorf("isOurCNIChain(%s) = %v, want %v", c.chain, got, c.want)
			}
		})
	}
}

func TestJumpTarget(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string
	}{
		"jump":    {[]string{"-A", "INPUT", "-j", "KUBE-FIREWALL"}, "KUBE-FIREWALL"},
		"goto":    {[]string{"-A", "INPUT", "-g", "CNI-X"}, "CNI-X"},
		"no jump": {[]string{"-A", "INPUT", "-p", "tcp"}, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := jumpTarget(c.args); got != c.want {
				t.Errorf("jumpTarget(%q) = %q, want %q", c.args, got, c.want)
			}
		})
	}
}

func TestEmptyTable(t *testing.T) {
	cases := map[string]struct {
		chains map[string][]string
		want   bool
	}{
		"built-in chains only": {map[string][]string{"INPUT": nil, "OUTPUT": nil, "FORWARD": nil}, true},
		"a rule left":          {map[string][]string{"INPUT": {"-A INPUT -j ACCEPT"}}, false},
		"a chain of someone":   {map[string][]string{"INPUT": nil, "DOCKER-USER": nil}, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := emptyTable(c.chains); got != c.want {
				t.Errorf("emptyTable(%v) = %v, want %v", c.chains, got, c.want)
			}
		})
	}
}

func TestMatchingChainsAndJumpsTo(t *testing.T) {
	nat := map[string][]string{
		"PREROUTING": {"-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES",
			"-A PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT"},
		"OUTPUT":                    {"-A OUTPUT -j DOCKER"},
		"POSTROUTING":               {"-A POSTROUTING -j KUBE-POSTROUTING"},
		"DOCKER":                    nil,
		"KUBE-SERVICES":             {"-A KUBE-SERVICES -d 10.96.0.1/32 -j KUBE-SVC-NPX46M4PTMTKRN6Y"},
		"KUBE-SVC-NPX46M4PTMTKRN6Y": {"-A KUBE-SVC-NPX46M4PTMTKRN6Y -j KUBE-SEP-ABC"},
		"KUBE-SEP-ABC":              {"-A KUBE-SEP-ABC -p tcp -j DNAT --to-destination 10.244.0.1:6443"},
		"KUBE-POSTROUTING":          nil,
	}
	doomed := matchingChains(nat, isKubeChain)
	wantDoomed := []string{"KUBE-POSTROUTING", "KUBE-SEP-ABC", "KUBE-SERVICES", "KUBE-SVC-NPX46M4PTMTKRN6Y"}
	if !reflect.DeepEqual(doomed, wantDoomed) {
		t.Fatalf("matchingChains = %q, want %q", doomed, wantDoomed)
	}
	// Only the jumps from chains that stay are deleted one by one; those between doomed chains
	// go when the chains are flushed.
	want := [][]string{
		{"-D", "POSTROUTING", "-j", "KUBE-POSTROUTING"},
		{"-D", "PREROUTING", "-m", "comment", "--comment", "kubernetes service portals", "-j", "KUBE-SERVICES"},
	}
	if got := jumpsTo(nat, doomed); !reflect.DeepEqual(got, want) {
		t.Errorf("jumpsTo = %q, want %q", got, want)
	}
}

func TestKubeIPSets(t *testing.T) {
	list := "KUBE-SRC-ABCD\nother-set\ninet6:KUBE-DST-EFGH\nkube-lower\nKUBE-\n"
	got := kubeIPSets(list)
	want := []string{"KUBE-SRC-ABCD", "inet6:KUBE-DST-EFGH", "KUBE-"}
	if !slices.Equal(got, want) {
		t.Fatalf("kubeIPSets = %q, want %q", got, want)
	}
	if got := kubeIPSets(""); len(got) != 0 {
		t.Fatalf("kubeIPSets of no sets = %q", got)
	}
}
