package events

import (
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// cfg reaches a real kube-apiserver (envtest): whether an event is stored is the API server's
// to say.
var cfg *rest.Config

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		println("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
		os.Exit(1)
	}
	env := &envtest.Environment{}
	var err error
	code := 1
	if cfg, err = env.Start(); err == nil {
		code = m.Run()
	} else {
		println("setting up the API server:", err.Error())
	}
	_ = env.Stop()
	os.Exit(code)
}
