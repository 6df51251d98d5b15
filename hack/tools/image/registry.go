package main

import (
	"context"
	"errors"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// tlsListener is an optional second address serving the same registry over HTTPS, for
// clients that will not speak plain HTTP (operator-sdk run bundle reads image labels so).
type tlsListener struct{ addr, cert, key string }

// serveRegistry runs go-containerregistry's registry: blobs on disk under dir, manifests in
// memory, so the images live as long as this process. It stops on SIGTERM or SIGINT.
func serveRegistry(addr, dir string, tls tlsListener) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logger := log.New(os.Stderr, "", log.LstdFlags)
	// One handler for both addresses: an image pushed to one is served by the other.
	handler := registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(dir)), registry.Logger(logger))
	srv := &http.Server{Addr: addr, Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	tlsSrv := &http.Server{Addr: tls.addr, Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
		_ = tlsSrv.Shutdown(shutdown)
	}()
	errs := make(chan error, 2)
	if tls.addr != "" {
		logger.Printf("registry serving HTTPS on %s", tls.addr)
		go func() { errs <- tlsSrv.ListenAndServeTLS(tls.cert, tls.key) }()
	}
	logger.Printf("registry serving on %s, blobs in %s", addr, dir)
	go func() { errs <- srv.ListenAndServe() }()
	if err := <-errs; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
