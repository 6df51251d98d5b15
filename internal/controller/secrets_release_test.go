package controller

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// TestReleaseOn: the namespace of a MyApp is queued for release when the MyApp tracked Secrets
// and went, or stopped tracking them; no other event of MyApps queues anything.
func TestReleaseOn(t *testing.T) {
	tracking := func(ns string) *examplev1.MyApp {
		a := &examplev1.MyApp{Spec: examplev1.MyAppSpec{RolloutOnConfigChange: ptrTo(true),
			EnvFrom: []examplev1.EnvFromSource{{SecretRef: &examplev1.EnvFromReference{Name: "db"}}}}}
		a.Namespace, a.Name = ns, "web"
		return a
	}
	notTracking := func(ns string) *examplev1.MyApp {
		a := tracking(ns)
		a.Spec.RolloutOnConfigChange = nil
		return a
	}
	onlyConfigMaps := func(ns string) *examplev1.MyApp {
		a := tracking(ns)
		a.Spec.EnvFrom = []examplev1.EnvFromSource{{ConfigMapRef: &examplev1.EnvFromReference{Name: "settings"}}}
		return a
	}
	cases := map[string]struct {
		event func(h toolscache.ResourceEventHandler)
		want  []string
	}{
		"a tracking MyApp deleted": {func(h toolscache.ResourceEventHandler) { h.OnDelete(tracking("shop")) }, []string{"shop"}},
		"a deletion the watch missed": {func(h toolscache.ResourceEventHandler) {
			h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "shop/web", Obj: notTracking("shop")})
		}, []string{"shop"}},
		"rolloutOnConfigChange turned off": {func(h toolscache.ResourceEventHandler) {
			h.OnUpdate(tracking("shop"), notTracking("shop"))
		}, []string{"shop"}},
		"its Secret references removed": {func(h toolscache.ResourceEventHandler) {
			h.OnUpdate(tracking("shop"), onlyConfigMaps("shop"))
		}, []string{"shop"}},
		"a MyApp that never tracked deleted": {func(h toolscache.ResourceEventHandler) { h.OnDelete(notTracking("shop")) }, nil},
		"a tracking MyApp changed, still tracking": {func(h toolscache.ResourceEventHandler) {
			h.OnUpdate(tracking("shop"), tracking("shop"))
		}, nil},
		"a MyApp starting to track": {func(h toolscache.ResourceEventHandler) {
			h.OnUpdate(notTracking("shop"), tracking("shop"))
		}, nil},
		"a tracking MyApp created": {func(h toolscache.ResourceEventHandler) { h.OnAdd(tracking("shop"), false) }, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			queue := workqueue.NewTyped[string]()
			defer queue.ShutDown()
			tc.event(releaseOn(queue))
			var got []string
			for queue.Len() > 0 {
				ns, _ := queue.Get()
				got = append(got, ns)
				queue.Done(ns)
			}
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

// TestReleaseStopsTheWatchOfAnUntrackedNamespace: a release stops the namespace's cache and
// forgets the namespace only once no MyApp there tracks Secrets; a look after it finds a new
// entry, which asks about the grant again.
func TestReleaseStopsTheWatchOfAnUntrackedNamespace(t *testing.T) {
	g := NewWithT(t)
	tracked := true
	s := &secretWatches{
		tracked: func(context.Context, string) (bool, error) { return tracked, nil },
		base:    context.Background(),
	}
	// The entry as a look that found the grant leaves it: its cache runs until stop.
	stopped := 0
	n, _ := s.lock("shop")
	n.checkedAt, n.stop = time.Now(), func() { stopped++ }
	n.mu.Unlock()

	g.Expect(s.release(context.Background(), "shop")).To(Succeed())
	g.Expect(stopped).To(BeZero(), "a MyApp still tracks the namespace's Secrets")
	g.Expect(s.ns).To(HaveKey("shop"))

	tracked = false
	g.Expect(s.release(context.Background(), "shop")).To(Succeed())
	g.Expect(stopped).To(Equal(1))
	g.Expect(s.ns).NotTo(HaveKey("shop"))
	g.Expect(n.released).To(BeTrue())
	g.Expect(s.release(context.Background(), "shop")).To(Succeed())
	g.Expect(stopped).To(Equal(1), "a namespace released twice is stopped once")

	again, _ := s.lock("shop")
	defer again.mu.Unlock()
	g.Expect(again).NotTo(BeIdenticalTo(n))
	g.Expect(again.checkedAt.IsZero()).To(BeTrue(), "the grant is asked about again")
}
