//go:build linux

package testutil

import (
	"net"
	"strconv"
	"testing"
)

// A picked port lies below the kernel's ephemeral range, where no outgoing connection or
// port-0 listener of a process beside the test can take it, and can be bound at once.
func TestFreeAddrPicksBelowTheEphemeralRange(t *testing.T) {
	low, ok := ephemeralLow()
	if !ok {
		t.Fatal("cannot read /proc/sys/net/ipv4/ip_local_port_range")
	}
	for range 20 {
		addr, err := FreeLoopbackAddr()
		if err != nil {
			t.Fatal(err)
		}
		host, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(p)
		if host != "127.0.0.1" || port < lowestPicked || port >= low {
			t.Fatalf("FreeLoopbackAddr() = %s, want 127.0.0.1 and a port in [%d, %d)", addr, lowestPicked, low)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("picked %s, then cannot bind it: %v", addr, err)
		}
		_ = l.Close()
	}
}

// Two picks of one process never return the same port, though each port is free again as
// soon as the pick's check closes it: a suite picks ports for two processes before either
// binds (the e2e leader-election story's two managers once got the same metrics port).
func TestFreeAddrNeverPicksAPortTwice(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		addr, err := FreeLoopbackAddr()
		if err != nil {
			t.Fatal(err)
		}
		if seen[addr] {
			t.Fatalf("FreeLoopbackAddr() returned %s twice", addr)
		}
		seen[addr] = true
	}
}
