package controller

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestConfigDigestsKeepTheNewerRead: of two reconcilers that read one ConfigMap at once, the one
// that read it earlier may store last; it must not put back an older version the other stored.
func TestConfigDigestsKeepTheNewerRead(t *testing.T) {
	var c configDigests
	key := client.ObjectKey{Namespace: "shop", Name: "settings"}
	before, found := c.get(key) // both reconcilers miss
	c.swap(key, before, found, configDigest{resourceVersion: "6", digest: "d6"})
	c.swap(key, before, found, configDigest{resourceVersion: "5", digest: "d5"})
	if got, _ := c.get(key); got.resourceVersion != "6" {
		t.Fatalf("got %+v, want the read that stored first and replaced what both saw", got)
	}
	seen, _ := c.get(key)
	c.swap(key, seen, true, configDigest{resourceVersion: "7", digest: "d7"})
	if got, _ := c.get(key); got.resourceVersion != "7" {
		t.Fatalf("got %+v, want a read that replaces what it saw", got)
	}
}
