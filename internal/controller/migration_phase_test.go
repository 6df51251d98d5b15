package controller

import (
	"context"
	"reflect"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

// A reconcile that starts right after a migration finished can read, from a cache that lags
// behind the operator's own writes, a child that still carries the migration mark. The phase
// must be what the API server holds, or that reconcile starts the migration again: the bridge
// selector and the mark come back, and with a migration older than its deadline the MyApp is
// Stalled until something else triggers a reconcile (seen once in a fresh-clone run).
var _ = Describe("The selector migration's phase", func() {
	It("is confirmed with the API server when the cache still shows the mark", func() {
		ns := newNamespace()
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Labels = map[string]string{unwatchedLabel: "true"} })
		selector := map[string]string{desired.LabelSelector: "web"}
		live := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "example.com/v1", Kind: "MyApp", Name: "web", UID: app.UID, Controller: ptrTo(true)}}},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: selector},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: selector},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}},
			},
		}
		Expect(k8s.Create(suiteCtx, live)).To(Succeed())
		stale := live.DeepCopy()
		stale.Annotations = map[string]string{desired.AnnotationSelectorMigration: desired.SelectorMigrationFrom020}
		r := &MyAppReconciler{Client: staleCache{Client: k8s, stale: stale}, APIReader: k8s}

		By("the cache showing the mark the API server no longer holds: no migration")
		phase, _ := r.migrationPhase(suiteCtx, app)
		Expect(phase).To(Equal(migrationNone))

		By("the API server holding the mark too: the migration is under way")
		marked := live.DeepCopy()
		marked.Annotations = stale.Annotations
		Expect(k8s.Patch(suiteCtx, marked, client.MergeFrom(live))).To(Succeed())
		phase, _ = r.migrationPhase(suiteCtx, app)
		Expect(phase).To(Equal(migrationReplacing))
	})
})

// staleCache answers a read of one object with an older copy of it, as a cache that has not
// yet seen the last write does, and passes every other call to the API server.
type staleCache struct {
	client.Client
	stale client.Object
}

func (c staleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if reflect.TypeOf(obj) == reflect.TypeOf(c.stale) && key == client.ObjectKeyFromObject(c.stale) {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(c.stale.DeepCopyObject()).Elem())
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}
