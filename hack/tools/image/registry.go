package main

import (
	"context"
	"errors"
	"log"
	"net"
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
// memory, so the images live as long as this process. It stops on SIGTERM or SIGINT. With
// addrFile set, the address it listens on is written there once it listens, so a caller can
// ask for port 0 and learn the free port it got.
func serveRegistry(addr, addrFile, dir string, tls tlsListener) error {
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
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	logger.Printf("registry serving on %s, blobs in %s", ln.Addr(), dir)
	if addrFile != "" {
		// Written whole under another name, then renamed: a reader never sees half an address.
		if err := os.WriteFile(addrFile+".tmp", []byte(ln.Addr().String()), 0o644); err != nil {
			return err
		}
		if err := os.Rename(addrFile+".tmp", addrFile); err != nil {
			return err
		}
	}
	go func() { errs <- srv.Serve(ln) }()
	if err := <-errs; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
