package controller

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("A read of an optional kind's cache", func() {
	It("fails after its bound, naming the cache, when the API server never lists the kind, and leaves the caller's own end to the caller", func() {
		// A kind the mapper resolves and the API server does not serve: the cache's informer
		// never completes its first list, as when the HTTPRoute CRD goes after the manager
		// found it and before the route cache synced.
		gone := schema.GroupVersionKind{Group: "gone.example.com", Version: "v1", Kind: "Widget"}
		mapper := meta.NewDefaultRESTMapper(nil)
		mapper.AddSpecific(gone, gone.GroupVersion().WithResource("widgets"), gone.GroupVersion().WithResource("widget"), meta.RESTScopeNamespace)
		c, err := cache.New(cfg, cache.Options{Scheme: k8s.Scheme(), Mapper: mapper})
		Expect(err).NotTo(HaveOccurred())
		ctx, stop := context.WithCancel(suiteCtx)
		DeferCleanup(stop)
		go func() { defer GinkgoRecover(); Expect(c.Start(ctx)).To(Succeed()) }()
		Expect(c.WaitForCacheSync(ctx)).To(BeTrue(), "the cache started (it holds no informer yet)")
		reads := boundedReader{Reader: c, what: "Widgets", wait: 200 * time.Millisecond}
		widget := func() *unstructured.Unstructured {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gone)
			return u
		}

		var notSynced *notSyncedError
		err = reads.Get(suiteCtx, client.ObjectKey{Namespace: "default", Name: "web"}, widget())
		Expect(errors.As(err, &notSynced)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("the cache of Widgets has not synced"))
		Expect(mayBeUnserved(err)).To(BeTrue(), "the reconciler asks discovery whether the kind is still served")
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gone.GroupVersion().WithKind("WidgetList"))
		err = reads.List(suiteCtx, list)
		Expect(errors.As(err, &notSynced)).To(BeTrue(), "got %v", err)

		By("a caller whose own context ends first gets its own error")
		ended, cancel := context.WithCancel(suiteCtx)
		cancel()
		err = reads.Get(ended, client.ObjectKey{Namespace: "default", Name: "web"}, widget())
		Expect(err).To(HaveOccurred())
		Expect(errors.As(err, &notSynced)).To(BeFalse(), "got %v", err)
	})
})
