package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestStatusWritesKnowWhenTheCacheMayBeStale: until the cached MyApp is the version the last
// status write produced (or a check confirmed), an unchanged status is not taken as written.
func TestStatusWritesKnowWhenTheCacheMayBeStale(t *testing.T) {
	var w statusWrites
	key := types.NamespacedName{Namespace: "shop", Name: "web"}
	if !w.current(key, "7") {
		t.Fatal("a MyApp never written since the start is taken as current")
	}
	w.remember(key, "9")
	if w.current(key, "7") {
		t.Fatal("a cached version older than the last write is current")
	}
	if !w.current(key, "9") {
		t.Fatal("the version the last write produced is not current")
	}
	w.forget(key)
	if !w.current(key, "7") {
		t.Fatal("a forgotten MyApp is not taken as current")
	}
}
