//go:build tools

// Package tools pins Traefik, the Gateway API and Ingress implementation the real-node
// exposure stories route requests through.
package tools

import _ "github.com/traefik/traefik/v3/cmd/traefik"
