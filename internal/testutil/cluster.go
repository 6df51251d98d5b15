package testutil

import (
	"net"

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

// FreeAddr returns an address of the host's IP ip with a port nobody listens on right now.
func FreeAddr(ip string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}
