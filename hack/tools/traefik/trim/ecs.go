// Package ecs stands in for Traefik's Amazon ECS provider in the Traefik the tests build (the
// Makefile's $(TRAEFIK), from the source trim.sh writes). The tests configure Traefik's
// Kubernetes providers only, and the AWS SDK that the real provider needs is a large part of
// what a cold build of Traefik compiles (docs/performance/build-times.md). Configured anyway,
// this provider fails at once.
package ecs

import (
	"errors"

	"github.com/traefik/traefik/v3/pkg/config/dynamic"
	"github.com/traefik/traefik/v3/pkg/safe"
)

// Provider is the ECS provider's configuration, which this build does not take.
type Provider struct{}

var errNotBuilt = errors.New("this build of Traefik has no Amazon ECS provider (myapp-operator's test build)")

// SetDefaults sets nothing: there is nothing to set.
func (p *Provider) SetDefaults() {}

// Init fails: the provider is not built in.
func (p *Provider) Init() error { return errNotBuilt }

// Provide fails: the provider is not built in.
func (p *Provider) Provide(chan<- dynamic.Message, *safe.Pool) error { return errNotBuilt }
