package main

import (
	"reflect"
	"testing"
)

func TestOurCNIResults(t *testing.T) {
	names := []string{
		"localcluster-3f1e9a-eth0", "cni-loopback-3f1e9a-lo",
		"podman-77aa-eth0", "cni-loopback-77aa-lo",
		"localcluster-b2c4-eth0",
	}
	want := []string{"localcluster-3f1e9a-eth0", "cni-loopback-3f1e9a-lo", "localcluster-b2c4-eth0"}
	if got := ourCNIResults(names); !reflect.DeepEqual(got, want) {
		t.Errorf("ourCNIResults = %q, want %q", got, want)
	}
	if got := ourCNIResults([]string{"podman-77aa-eth0", "cni-loopback-77aa-lo"}); len(got) != 0 {
		t.Errorf("another network's results picked: %q", got)
	}
}

func TestCNIResultNetns(t *testing.T) {
	cases := map[string]struct {
		cached      string
		wantNetwork string
		wantNetns   []string
	}{
		"libcni's cache with its netns field": {
			`{"kind":"cniCacheV1","containerId":"3f1e","config":"e30=","ifName":"eth0","networkName":"localcluster",` +
				`"netns":"/var/run/netns/cni-6b1c","result":{"cniVersion":"0.4.0","interfaces":[` +
				`{"name":"lc-cni0","mac":"aa"},{"name":"veth1","mac":"bb"},{"name":"eth0","mac":"cc","sandbox":"/var/run/netns/cni-6b1c"}]}}`,
			"localcluster", []string{"/var/run/netns/cni-6b1c"},
		},
		"an older cache, the namespace only as a sandbox": {
			`{"kind":"cniCacheV1","networkName":"localcluster","result":{"interfaces":[{"name":"eth0","sandbox":"/run/netns/cni-77"}]}}`,
			"localcluster", []string{"/run/netns/cni-77"},
		},
		"another network": {
			`{"kind":"cniCacheV1","networkName":"podman","netns":"/run/netns/netns-1"}`,
			"podman", []string{"/run/netns/netns-1"},
		},
		"not JSON": {`garbage`, "", nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			network, netns := cniResultNetns([]byte(c.cached))
			if network != c.wantNetwork || !reflect.DeepEqual(netns, c.wantNetns) {
				t.Errorf("cniResultNetns = %q, %q; want %q, %q", network, netns, c.wantNetwork, c.wantNetns)
			}
		})
	}
}

func TestIsNamedNetns(t *testing.T) {
	cases := map[string]bool{
		"/run/netns/cni-6b1c":     true,
		"/var/run/netns/cni-6b1c": true,
		"/run/netns/myns":         false,
		"/work/a/.localcluster-realnode/node/containerd/state/netns/cni-6b1c": false,
		"/proc/123/ns/net": false,
	}
	for p, want := range cases {
		if got := isNamedNetns(p); got != want {
			t.Errorf("isNamedNetns(%q) = %v, want %v", p, got, want)
		}
	}
}
