package testutil

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NewClient connects to the cluster of a kubeconfig, with the built-in types and those the
// given functions add, rate limits raised for tests that create many objects.
func NewClient(kubeconfig string, addToScheme ...func(*runtime.Scheme) error) (client.WithWatch, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 100, 200
	scheme := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme}, addToScheme...) {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return client.NewWithWatch(cfg, client.Options{Scheme: scheme})
}

// FreeLoopbackAddr returns a loopback address with a port nobody listens on right now.
func FreeLoopbackAddr() (string, error) { return FreeAddr("127.0.0.1") }

// FreeAddr returns an address of the host's IP ip with a port nobody uses right now, on any
// address. The port is below the kernel's ephemeral range (net.ipv4.ip_local_port_range):
// the kernel hands ports of that range to every outgoing connection and to every listener
// on port 0, so a port picked there can be taken by any client of the lanes running beside
// this one before the process it is meant for binds it. Below the range only another
// picker like this one can take it. A process picks the ports one after the other from a
// random start, so two picks of one process never return the same port (a port checked free
// is free again once the check closes it, and a suite often picks for two processes before
// either binds), and two processes rarely meet. Where the range cannot be read, the kernel
// picks (port 0).
func FreeAddr(ip string) (string, error) {
	if low, ok := ephemeralLow(); ok && low > lowestPicked+1 {
		picks.Lock()
		defer picks.Unlock()
		span := low - lowestPicked
		if picks.next == 0 {
			picks.next = lowestPicked + rand.IntN(span)
		}
		for range 64 {
			port := picks.next
			picks.next = lowestPicked + (port+1-lowestPicked)%span
			l, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(port)))
			if err != nil {
				continue
			}
			_ = l.Close()
			return net.JoinHostPort(ip, strconv.Itoa(port)), nil
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// picks is where FreeAddr's next pick starts.
var picks struct {
	sync.Mutex
	next int
}

// lowestPicked is the lowest port FreeAddr picks: above the ports servers are configured
// with by habit (80, 443, 6443, 8080, 8443, 9090, 9443, 10250).
const lowestPicked = 20000

// ephemeralLow is the first port of the kernel's ephemeral range.
func ephemeralLow() (int, bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, false
	}
	low, err := strconv.Atoi(f[0])
	return low, err == nil
}
