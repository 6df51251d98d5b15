package ssa

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// k8s talks to a real kube-apiserver (envtest): what server-side apply answers, and what it
// records in managedFields, is the API server's to say.
var k8s client.Client

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		println("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
		os.Exit(1)
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	code := 1
	if err == nil {
		scheme := runtime.NewScheme()
		_ = clientgoscheme.AddToScheme(scheme)
		if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err == nil {
			code = m.Run()
		}
	}
	if err != nil {
		println("setting up the API server:", err.Error())
	}
	_ = env.Stop()
	os.Exit(code)
}
