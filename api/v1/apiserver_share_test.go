package v1_test

import (
	"encoding/json"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
)

// `go test -fuzz` runs the fuzz target in worker processes that it starts and stops itself;
// each runs TestMain, and a worker stopped by the fuzzer never reaches the code after m.Run,
// so an API server of its own would outlive it. The process that starts the workers shares
// its API server with them instead: the workers inherit its environment, which names a file
// holding the address and credentials.

// sharedAPIServerEnv names the file that holds the shared API server's connection.
const sharedAPIServerEnv = "MYAPP_API_TEST_SHARED_APISERVER"

// apiServerConnection is what a client needs to reach the test API server.
type apiServerConnection struct {
	Host               string `json:"host"`
	CA, Cert, Key      []byte
	Insecure           bool `json:"insecure"`
	BearerToken        string
	ServerNameOverride string
}

// sharedAPIServer returns the connection to the API server a parent process shares, or nil
// when there is none.
func sharedAPIServer() (*rest.Config, error) {
	path := os.Getenv(sharedAPIServerEnv)
	if path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c apiServerConnection
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	return &rest.Config{Host: c.Host, BearerToken: c.BearerToken, TLSClientConfig: rest.TLSClientConfig{
		CAData: c.CA, CertData: c.Cert, KeyData: c.Key, Insecure: c.Insecure, ServerName: c.ServerNameOverride}}, nil
}

// shareAPIServer makes cfg the API server of the processes this one starts.
func shareAPIServer(cfg *rest.Config) error {
	dir, err := os.MkdirTemp("", "myapp-api-test-")
	if err != nil {
		return err
	}
	raw, err := json.Marshal(apiServerConnection{Host: cfg.Host, CA: cfg.CAData, Cert: cfg.CertData, Key: cfg.KeyData,
		Insecure: cfg.Insecure, BearerToken: cfg.BearerToken, ServerNameOverride: cfg.ServerName})
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "apiserver.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return err
	}
	return os.Setenv(sharedAPIServerEnv, path)
}

// unshareAPIServer removes the file shareAPIServer wrote.
func unshareAPIServer() {
	if path := os.Getenv(sharedAPIServerEnv); path != "" {
		_ = os.RemoveAll(filepath.Dir(path))
	}
}
