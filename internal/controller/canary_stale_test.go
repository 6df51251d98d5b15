package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// A canary's children follow status.canary. A reconcile queued by a child's event can read, from
// a cache that lags behind the operator's own status write, the MyApp with the record before
// it: a canary not yet started, or a weight before its abort. Built from that record, the stable
// Deployment would take the template under test, or the route send the aborted canary a share
// again. Such a reconcile acts on nothing and looks again.
var _ = Describe("A canary's reconcile from a cache older than the operator's last status write", func() {
	It("applies nothing, and goes on once the cache holds that write", func() {
		ns := newNamespace()
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Labels = map[string]string{unwatchedLabel: "true"}
			a.Spec.Canary = &examplev1.Canary{Steps: []examplev1.CanaryStep{{SetWeight: ptrTo(int32(10))}}}
		})
		r := &MyAppReconciler{APIReader: k8s, Recorder: record.NewFakeRecorder(10)}

		By("the operator's last status write, which the cache does not hold yet")
		stale := app.DeepCopy()
		written := app.DeepCopy()
		written.Status.ObservedGeneration = written.Generation
		Expect(k8s.Status().Patch(suiteCtx, written, client.MergeFrom(app))).To(Succeed())
		r.statusWrites.remember(client.ObjectKeyFromObject(app), written.ResourceVersion)
		r.Client = staleCache{Client: k8s, stale: stale}

		result, err := r.Reconcile(suiteCtx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(app)})
		Expect(err).NotTo(HaveOccurred())
		Expect(result.RequeueAfter).To(Equal(statusConflictRetry), "the reconcile looks again once the cache may have caught up")
		err = k8s.Get(suiteCtx, client.ObjectKeyFromObject(app), &appsv1.Deployment{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a Deployment applied from the stale MyApp: %v", err)

		By("the cache holding the write: the MyApp is current")
		current := &examplev1.MyApp{}
		Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(app), current)).To(Succeed())
		Expect(r.cacheCurrent(suiteCtx, current)).To(BeTrue())
		By("a user's change after the write: confirmed with the API server, then remembered")
		current.Annotations = map[string]string{"team": "shop"}
		Expect(k8s.Update(suiteCtx, current)).To(Succeed())
		Expect(r.statusWrites.current(client.ObjectKeyFromObject(app), current.ResourceVersion)).To(BeFalse())
		r.Client = k8s
		Expect(r.cacheCurrent(suiteCtx, current)).To(BeTrue())
		Expect(r.statusWrites.current(client.ObjectKeyFromObject(app), current.ResourceVersion)).To(BeTrue())
	})
})
