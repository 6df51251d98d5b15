package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/myapp-operator/internal/ssa"
)

// carriedIntents remembers, for each child, the last intent the operator knows it carries: the
// intent an apply just sent, when its answer (the stored object) carries it, or one the
// read-back of its managedFields (ssa.Carries) found in it. With the intent it keeps the child's UID and
// resourceVersion at that moment. The API server gives a stored object a new resourceVersion
// with every change, so a child that still shows the same UID and resourceVersion is the same
// object, and still carries the intent: the reconcile skips the read-back, the largest part of
// its own CPU when it has nothing to do (docs/performance/tuning.md). Any change to the child
// (an edit, a status written by a controller, a recreate) or a new intent is a miss, and the
// read-back decides as before. cluster-api keeps a cache of the same kind in front of its
// server-side applies, keyed by the object, its resourceVersion and the request.
//
// The entries are the MyApps' own: one per kind of child, dropped when the child is deleted
// and when the MyApp is gone, so the memory follows the number of MyApps.
type carriedIntents struct {
	mu   sync.Mutex
	seen map[childKey]carried
}

// childKey names a child: its kind and its namespace and name, which are the MyApp's.
type childKey struct {
	kind string
	types.NamespacedName
}

// carried is what is known of one child: at this UID and resourceVersion it carried intent.
type carried struct {
	uid             types.UID
	resourceVersion string
	intent          ssa.Digest
}

// childKinds are the kinds of childKey, for forgetting a MyApp's children.
var childKinds = []string{kindDeployment, kindService, kindAutoscaler, kindBudget, kindIngress, kindRoute, kindNetworkPolicy}

const (
	kindDeployment    = "Deployment"
	kindService       = "Service"
	kindAutoscaler    = "HorizontalPodAutoscaler"
	kindBudget        = "PodDisruptionBudget"
	kindNetworkPolicy = "NetworkPolicy"
)

// holds tells whether obj, as stored now, is known to carry the intent.
func (c *carriedIntents) holds(kind string, obj client.Object, intent ssa.Digest) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	got, ok := c.seen[keyOf(kind, obj)]
	return ok && got.uid == obj.GetUID() && got.resourceVersion == obj.GetResourceVersion() && got.intent == intent
}

// remember records that obj, as stored now, carries the intent.
func (c *carriedIntents) remember(kind string, obj client.Object, intent ssa.Digest) {
	if obj.GetUID() == "" || obj.GetResourceVersion() == "" {
		return // not a stored object: nothing to recognize it by
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[childKey]carried{}
	}
	c.seen[keyOf(kind, obj)] = carried{uid: obj.GetUID(), resourceVersion: obj.GetResourceVersion(), intent: intent}
}

// forget drops what is known of the MyApp's children of the given kinds (all when none).
func (c *carriedIntents) forget(app types.NamespacedName, kinds ...string) {
	if len(kinds) == 0 {
		kinds = childKinds
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, kind := range kinds {
		delete(c.seen, childKey{kind: kind, NamespacedName: app})
	}
}

// keyOf is the key of obj as a child of that kind.
func keyOf(kind string, obj client.Object) childKey {
	return childKey{kind: kind, NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
}
