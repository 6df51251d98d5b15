package controller

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
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
		withUnbounded([]string{"rollingUpdate", "maxSurge"}, func() {
			poison := unstructuredMyApp(poisonNS, "poison")
			Expect(unstructured.SetNestedField(poison.Object, unbounded, "spec", "rollingUpdate", "maxSurge")).To(Succeed())
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

// A budget is a child the app serves without: a spec that cannot be built into one makes the
// MyApp Degraded, never Stalled, as a budget the API server refuses does. It is reported as the
// spec's problem (InvalidSpec, naming the field) rather than sent for the API server to refuse
// (ChildRejected), as the rolling update is; the budget applied last stays.
var _ = Describe("A stored MyApp whose budget does not fit the operator's types", func() {
	It("is Degraded with InvalidSpec naming the field, keeps its last budget, and still serves", func() {
		ns := newNamespace()
		createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Spec.PodDisruptionBudget = &examplev1.PodDisruptionBudgetSpec{MinAvailable: ptrTo(intstr.FromInt32(1))}
		})
		Eventually(getDeployment(ns, "web")).WithTimeout(30 * time.Second).Should(Not(BeNil()))
		rollOut(ns, "web")
		Eventually(func(g Gomega) intstr.IntOrString {
			return *getPDB(ns, "web")(g).Spec.MinAvailable
		}).Should(Equal(intstr.FromInt32(1)))

		By("storing minAvailable 2147483648 under a CRD that does not bound it")
		withUnbounded([]string{"podDisruptionBudget", "minAvailable"}, func() {
			patch := []byte(fmt.Sprintf(`{"spec":{"podDisruptionBudget":{"minAvailable":%d}}}`, unbounded))
			Eventually(func() error {
				return k8s.Patch(suiteCtx, unstructuredMyApp(ns, "web"), client.RawPatch(types.MergePatchType, patch))
			}).WithTimeout(30 * time.Second).Should(Succeed())
		})

		By("Degraded with InvalidSpec naming the field, not Stalled, Ready")
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			degraded := condition(g, a, examplev1.ConditionDegraded)
			g.Expect(degraded.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(degraded.Reason).To(Equal(examplev1.ReasonInvalidSpec))
			g.Expect(degraded.Message).To(ContainSubstring("spec.podDisruptionBudget.minAvailable"))
			g.Expect(condition(g, a, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
		// The reconcile that wrote this status has dealt with the budget already.
		budget := &policyv1.PodDisruptionBudget{}
		Expect(k8s.Get(suiteCtx, key(ns, "web"), budget)).To(Succeed(), "the budget applied last is kept")
		Expect(budget.Spec.MinAvailable).To(HaveValue(Equal(intstr.FromInt32(1))), "the budget applied last is kept")
	})
})

// unbounded is an integer admission refuses in every int-or-string field: it does not fit
// the int32 of intstr.IntOrString.
const unbounded = int64(2147483648)

// unstructuredMyApp is MyApp ns/name with an image, as an unstructured object: a typed MyApp
// cannot carry an integer its Go type does not hold.
func unstructuredMyApp(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": examplev1.GroupVersion.String(), "kind": "MyApp",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     map[string]any{"image": "nginx:1.27"},
	}}
}

// withUnbounded runs f while the MyApp CRD admits any integer in the int-or-string field at
// path under spec (the field's CEL rules and maximum removed), as an older release's CRD did,
// then restores the CRD and waits until the API server refuses unbounded there again.
func withUnbounded(path []string, f func()) {
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
	schemaPath := []string{"schema", "openAPIV3Schema", "properties", "spec"}
	for _, p := range path {
		schemaPath = append(schemaPath, "properties", p)
	}
	for i := range versions {
		v := versions[i].(map[string]any)
		field, found, err := unstructured.NestedMap(v, schemaPath...)
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue(), "the CRD has no spec.%s: the story needs updating", strings.Join(path, "."))
		delete(field, "x-kubernetes-validations")
		delete(field, "maximum")
		Expect(unstructured.SetNestedMap(v, field, schemaPath...)).To(Succeed())
		versions[i] = v
	}
	Expect(unstructured.SetNestedSlice(relaxed.Object, versions, "spec", "versions")).To(Succeed())
	Expect(k8s.Update(suiteCtx, relaxed)).To(Succeed())

	f()

	restore()
	probe := unstructuredMyApp("default", "probe-bound")
	Expect(unstructured.SetNestedField(probe.Object, unbounded, append([]string{"spec"}, path...)...)).To(Succeed())
	Eventually(func() error {
		if err := k8s.Create(suiteCtx, probe.DeepCopy(), &client.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
			return fmt.Errorf("the API server still admits spec.%s %d", strings.Join(path, "."), unbounded)
		}
		return nil
	}).WithTimeout(30 * time.Second).Should(Succeed())
}
