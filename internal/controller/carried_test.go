package controller

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/myapp-operator/internal/ssa"
)

// TestCarriedIntents: a child is known to carry an intent only as the very object it was seen
// as (same kind, UID and resourceVersion) and for the very intent; anything else is a miss,
// which sends the reconcile back to reading the child's managedFields.
func TestCarriedIntents(t *testing.T) {
	stored := func(uid, rv string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web",
			UID: types.UID(uid), ResourceVersion: rv}}
	}
	v1, v2 := ssa.Digest{1}, ssa.Digest{2}
	app := types.NamespacedName{Namespace: "shop", Name: "web"}

	cases := map[string]struct {
		remember client.Object // seen carrying v1 as a Deployment, nil: nothing seen
		forget   []string      // kinds forgotten after that (nil: none; empty: all)
		ask      client.Object
		kind     string
		intent   ssa.Digest
		holds    bool
	}{
		"the same object, the same intent":   {remember: stored("u1", "7"), ask: stored("u1", "7"), kind: kindDeployment, intent: v1, holds: true},
		"nothing seen":                       {ask: stored("u1", "7"), kind: kindDeployment, intent: v1},
		"changed since (edit, status)":       {remember: stored("u1", "7"), ask: stored("u1", "8"), kind: kindDeployment, intent: v1},
		"recreated under the same name":      {remember: stored("u1", "7"), ask: stored("u2", "7"), kind: kindDeployment, intent: v1},
		"a new intent":                       {remember: stored("u1", "7"), ask: stored("u1", "7"), kind: kindDeployment, intent: v2},
		"another kind of the same name":      {remember: stored("u1", "7"), ask: stored("u1", "7"), kind: kindService, intent: v1},
		"the child was deleted":              {remember: stored("u1", "7"), forget: []string{kindDeployment}, ask: stored("u1", "7"), kind: kindDeployment, intent: v1},
		"another child was deleted":          {remember: stored("u1", "7"), forget: []string{kindAutoscaler}, ask: stored("u1", "7"), kind: kindDeployment, intent: v1, holds: true},
		"the MyApp is gone":                  {remember: stored("u1", "7"), forget: []string{}, ask: stored("u1", "7"), kind: kindDeployment, intent: v1},
		"not a stored object (no UID)":       {remember: stored("", "7"), ask: stored("", "7"), kind: kindDeployment, intent: v1},
		"not a stored object (no version)":   {remember: stored("u1", ""), ask: stored("u1", ""), kind: kindDeployment, intent: v1},
		"another MyApp's child of that kind": {remember: stored("u1", "7"), ask: &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api", UID: "u1", ResourceVersion: "7"}}, kind: kindDeployment, intent: v1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var c carriedIntents
			if tc.remember != nil {
				c.remember(kindDeployment, tc.remember, v1)
			}
			if tc.forget != nil {
				c.forget(app, tc.forget...)
			}
			NewWithT(t).Expect(c.holds(tc.kind, tc.ask, tc.intent)).To(Equal(tc.holds))
		})
	}
}

// TestCarriedIntentsForgetEveryKind: forgetting a MyApp leaves nothing of its children, so the
// memory follows the number of MyApps.
func TestCarriedIntentsForgetEveryKind(t *testing.T) {
	g := NewWithT(t)
	var c carriedIntents
	app := types.NamespacedName{Namespace: "shop", Name: "web"}
	for _, kind := range childKinds {
		c.remember(kind, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "u", ResourceVersion: "1"}}, ssa.Digest{})
	}
	c.remember(kindDeployment, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api", UID: "u", ResourceVersion: "1"}}, ssa.Digest{})
	g.Expect(c.seen).To(HaveLen(len(childKinds) + 1))
	c.forget(app)
	g.Expect(c.seen).To(HaveLen(1), "only the other MyApp's child is left")
}
