package ssa

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func keyOf(obj client.Object) client.ObjectKey { return client.ObjectKeyFromObject(obj) }

func TestKeyClashOps(t *testing.T) {
	cases := map[string]struct {
		names []string
		keys  []int32
		want  []map[string]any
	}{
		"nothing clashes": {names: []string{"http", "metrics"}, keys: []int32{8080, 9090}},
		"our item's key edited": {names: []string{"metrics", "http"}, keys: []int32{9090, 8081}, want: []map[string]any{
			testOp("/spec/ports/1/name", "http"), {"op": "replace", "path": "/spec/ports/1/port", "value": int32(8080)}}},
		"our item added beside the edited one": {names: []string{"http", "http"}, keys: []int32{8081, 8080}, want: []map[string]any{
			testOp("/spec/ports/0/name", "http"), {"op": "remove", "path": "/spec/ports/0"}}},
		"two edited items of our name": {names: []string{"http", "http"}, keys: []int32{8081, 8082}, want: []map[string]any{
			testOp("/spec/ports/1/name", "http"), {"op": "replace", "path": "/spec/ports/1/port", "value": int32(8080)},
			testOp("/spec/ports/0/name", "http"), {"op": "remove", "path": "/spec/ports/0"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ops := keyClashOps(KeyedList{Path: "/spec/ports", KeyField: "port", Names: tc.names, Keys: tc.keys}, "http", 8080)
			g.Expect(ops).To(Equal(tc.want))
		})
	}
}

// TestRepairKeyClash: after someone changes the number of the manager's port, the apply is
// rejected; the repair puts the number back in the item, keeps the port someone else added,
// and the apply then goes through.
func TestRepairKeyClash(t *testing.T) {
	g := NewWithT(t)
	intent := func() *corev1ac.ServiceApplyConfiguration {
		return corev1ac.Service("repaired", "default").WithSpec(corev1ac.ServiceSpec().WithSelector(map[string]string{"app": "web"}).
			WithPorts(corev1ac.ServicePort().WithName("http").WithPort(8080).WithTargetPort(intstr.FromString("http"))))
	}
	svc := &corev1.Service{}
	g.Expect(Apply(t.Context(), k8s, intent(), svc, "tester", true)).To(Succeed())

	svc.Spec.Ports[0].Port = 8081
	svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9090)})
	g.Expect(k8s.Update(t.Context(), svc, client.FieldOwner("someone"))).To(Succeed())
	err := Apply(t.Context(), k8s, intent(), &corev1.Service{}, "tester", true)
	g.Expect(err).To(HaveOccurred(), "two ports named http")

	l := KeyedList{Path: "/spec/ports", KeyField: "port"}
	for _, p := range svc.Spec.Ports {
		l.Names, l.Keys = append(l.Names, p.Name), append(l.Keys, p.Port)
	}
	repaired, err := RepairKeyClash(t.Context(), k8s, svc, "tester", "http", 8080, l)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(repaired).To(BeTrue())
	g.Expect(Apply(t.Context(), k8s, intent(), svc, "tester", true)).To(Succeed())
	g.Expect(svc.Spec.Ports).To(ConsistOf(HaveField("Port", int32(8080)), HaveField("Port", int32(9090))))

	By := func(string) {}
	By("a repair computed from a stale read changes nothing")
	stale := svc.DeepCopy()
	stale.ResourceVersion = "1"
	_, err = RepairKeyClash(t.Context(), k8s, stale, "tester", "http", 8080,
		KeyedList{Path: "/spec/ports", KeyField: "port", Names: []string{"http"}, Keys: []int32{1}})
	g.Expect(err).To(HaveOccurred())
}

func TestEntriesOwning(t *testing.T) {
	g := NewWithT(t)
	obj := &metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "a", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)},
		{Manager: "b", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "scale", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)},
		{Manager: "c", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:image":{}}}`)},
		{Manager: "d", FieldsV1: metav1.NewFieldsV1(`not json`)},
		{Manager: "e"},
	}}
	g.Expect(Owners(obj, "f:spec", "f:replicas")).To(Equal([]string{"a", "b"}))
	g.Expect(EntriesOwning(obj, "f:spec", "f:replicas")[1].Subresource).To(Equal("scale"))
	g.Expect(Owns(obj, "c", "f:spec", "f:image")).To(BeTrue())
	g.Expect(Owns(obj, "c", "f:spec", "f:replicas")).To(BeFalse())
	g.Expect(Has(obj, "e")).To(BeTrue())
	g.Expect(Has(obj, "f")).To(BeFalse())
}

// TestDropManager: a field manager's entry is removed, the others stay; a second call has
// nothing to do.
func TestDropManager(t *testing.T) {
	g := NewWithT(t)
	svc := &corev1.Service{}
	g.Expect(Apply(t.Context(), k8s, corev1ac.Service("dropped", "default").WithSpec(corev1ac.ServiceSpec().
		WithPorts(corev1ac.ServicePort().WithName("http").WithPort(80))), svc, "tester", true)).To(Succeed())
	svc.Annotations = map[string]string{"by": "old-repair"}
	g.Expect(k8s.Update(t.Context(), svc, client.FieldOwner("old-repair"))).To(Succeed())
	g.Expect(Has(svc, "old-repair")).To(BeTrue())

	g.Expect(DropManager(t.Context(), k8s, k8s, svc, "old-repair")).To(Succeed())
	g.Expect(k8s.Get(t.Context(), keyOf(svc), svc)).To(Succeed())
	g.Expect(Has(svc, "old-repair")).To(BeFalse())
	g.Expect(Has(svc, "tester")).To(BeTrue())
	g.Expect(DropManager(t.Context(), k8s, k8s, svc, "old-repair")).To(Succeed())
}
