package controller

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// One stored object, however odd, never stops the operator for the others. Admission now
// refuses a maxSurge beyond int32, but a MyApp stored before that rule (or through an API
// server that skips it) is still there: the story stores one under a CRD without the rule, as
// an older release's CRD was, and restores the CRD at once.
var _ = Describe("A stored MyApp whose integer does not fit the operator's types", func() {
	It("is reported as InvalidSpec, and every other MyApp is still reconciled", func() {
		poisonNS, ns := newNamespace(), newNamespace()

		By("storing a MyApp with maxSurge 2147483648 under a CRD that does not bound it")
		withoutMaxSurgeRule(func() {
			poison := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": examplev1.GroupVersion.String(), "kind": "MyApp",
				"metadata": map[string]any{"namespace": poisonNS, "name": "poison"},
				"spec":     map[string]any{"image": "nginx:1.27", "rollingUpdate": map[string]any{"maxSurge": int64(2147483648)}},
			}}
			Eventually(func() error { return k8s.Create(suiteCtx, poison.DeepCopy()) }).WithTimeout(30 * time.Second).Should(Succeed())
		})
		DeferCleanup(func() {
			_ = k8s.Delete(suiteCtx, &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: poisonNS, Name: "poison"}})
		})

		By("a MyApp created after it: the operator still sees MyApps, and reconciles it")
		createMyApp(ns, "web", nil)
		Eventually(getDeployment(ns, "web")).WithTimeout(30 * time.Second).Should(Not(BeNil()))
		rollOut(ns, "web")
		Eventually(func(g Gomega) metav1.ConditionStatus {
			return condition(g, getMyApp(ns, "web")(g), examplev1.ConditionReady).Status
		}).Should(Equal(metav1.ConditionTrue))

		By("the odd MyApp: Stalled, InvalidSpec, naming the field")
		Eventually(func(g Gomega) {
			stalled := condition(g, getMyApp(poisonNS, "poison")(g), examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonInvalidSpec))
			g.Expect(stalled.Message).To(ContainSubstring("maxSurge"))
		}).Should(Succeed())
	})
})

// withoutMaxSurgeRule runs f while the MyApp CRD admits any integer in
// spec.rollingUpdate.maxSurge (its CEL rules and maximum removed), then restores the CRD and
// waits until the API server refuses such a MyApp again.
func withoutMaxSurgeRule(f func()) {
	crdKey := types.NamespacedName{Name: "myapps.example.com"}
	crdGVK := schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	get := func() *unstructured.Unstructured {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(crdGVK)
		Expect(k8s.Get(suiteCtx, crdKey, crd)).To(Succeed())
		return crd
	}
	original := get()
	originalSpec := original.Object["spec"]
	restore := func() {
		Eventually(func() error {
			crd := get()
			crd.Object["spec"] = originalSpec
			return k8s.Update(suiteCtx, crd)
		}).Should(Succeed())
	}
	DeferCleanup(restore) // should the story fail half-way

	relaxed := original.DeepCopy()
	versions, _, _ := unstructured.NestedSlice(relaxed.Object, "spec", "versions")
	for i := range versions {
		v := versions[i].(map[string]any)
		path := []string{"schema", "openAPIV3Schema", "properties", "spec", "properties", "rollingUpdate", "properties", "maxSurge"}
		field, found, err := unstructured.NestedMap(v, path...)
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue(), "the CRD has no spec.rollingUpdate.maxSurge: the story needs updating")
		delete(field, "x-kubernetes-validations")
		delete(field, "maximum")
		Expect(unstructured.SetNestedMap(v, field, path...)).To(Succeed())
		versions[i] = v
	}
	Expect(unstructured.SetNestedSlice(relaxed.Object, versions, "spec", "versions")).To(Succeed())
	Expect(k8s.Update(suiteCtx, relaxed)).To(Succeed())

	f()

	restore()
	Eventually(func() error {
		probe := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": examplev1.GroupVersion.String(), "kind": "MyApp",
			"metadata": map[string]any{"namespace": "default", "name": "probe-bound"},
			"spec":     map[string]any{"image": "nginx:1.27", "rollingUpdate": map[string]any{"maxSurge": int64(2147483648)}},
		}}
		if err := k8s.Create(suiteCtx, probe, &client.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
			return fmt.Errorf("the API server still admits maxSurge 2147483648")
		}
		return nil
	}).WithTimeout(30 * time.Second).Should(Succeed())
}
