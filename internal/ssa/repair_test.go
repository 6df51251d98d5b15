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
	tcp := func(name string, n int32) KeyedItem { return KeyedItem{Name: name, ItemKey: ItemKey{n, "TCP"}} }
	sctp := func(name string, n int32) KeyedItem { return KeyedItem{Name: name, ItemKey: ItemKey{n, "SCTP"}} }
	http := map[string]ItemKey{"http": {8080, "TCP"}}
	cases := map[string]struct {
		items []KeyedItem
		want  map[string]ItemKey
		ops   []map[string]any
	}{
		"nothing clashes": {items: []KeyedItem{tcp("http", 8080), tcp("metrics", 9090)}, want: http},
		"our item's number edited": {items: []KeyedItem{tcp("metrics", 9090), tcp("http", 8081)}, want: http, ops: []map[string]any{
			testOp("/spec/ports/1/name", "http"), {"op": "replace", "path": "/spec/ports/1/port", "value": int32(8080)}}},
		"our item added beside the edited one": {items: []KeyedItem{tcp("http", 8081), tcp("http", 8080)}, want: http, ops: []map[string]any{
			testOp("/spec/ports/0/name", "http"), {"op": "remove", "path": "/spec/ports/0"}}},
		"two edited items of our name": {items: []KeyedItem{tcp("http", 8081), tcp("http", 8082)}, want: http, ops: []map[string]any{
			testOp("/spec/ports/1/name", "http"), {"op": "replace", "path": "/spec/ports/1/port", "value": int32(8080)},
			testOp("/spec/ports/0/name", "http"), {"op": "remove", "path": "/spec/ports/0"}}},
		// Another port of the same number over another protocol is no clash: our item gets
		// its number back rather than being removed.
		"our number taken over another protocol": {items: []KeyedItem{tcp("http", 7070), sctp("assoc", 8080)},
			want: map[string]ItemKey{"http": {8080, "TCP"}, "assoc": {8080, "SCTP"}}, ops: []map[string]any{
				testOp("/spec/ports/0/name", "http"), {"op": "replace", "path": "/spec/ports/0/port", "value": int32(8080)}}},
		"our item's protocol edited": {items: []KeyedItem{{Name: "http", ItemKey: ItemKey{8080, "UDP"}}}, want: http, ops: []map[string]any{
			testOp("/spec/ports/0/name", "http"), {"op": "replace", "path": "/spec/ports/0/protocol", "value": "TCP"}}},
		"several of our ports edited": {items: []KeyedItem{tcp("http", 8081), tcp("metrics", 9191), tcp("other", 1)},
			want: map[string]ItemKey{"http": {8080, "TCP"}, "metrics": {9090, "TCP"}}, ops: []map[string]any{
				testOp("/spec/ports/1/name", "metrics"), {"op": "replace", "path": "/spec/ports/1/port", "value": int32(9090)},
				testOp("/spec/ports/0/name", "http"), {"op": "replace", "path": "/spec/ports/0/port", "value": int32(8080)}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ops := keyClashOps(KeyedList{Path: "/spec/ports", KeyField: "port", Items: tc.items}, tc.want)
			g.Expect(ops).To(Equal(tc.ops))
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
		l.Items = append(l.Items, KeyedItem{Name: p.Name, ItemKey: ItemKey{p.Port, string(p.Protocol)}})
	}
	want := map[string]ItemKey{"http": {8080, "TCP"}}
	repaired, err := RepairKeyClash(t.Context(), k8s, svc, "tester", want, l)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(repaired).To(BeTrue())
	g.Expect(Apply(t.Context(), k8s, intent(), svc, "tester", true)).To(Succeed())
	g.Expect(svc.Spec.Ports).To(ConsistOf(HaveField("Port", int32(8080)), HaveField("Port", int32(9090))))

	By := func(string) {}
	By("a repair computed from a stale read changes nothing")
	stale := svc.DeepCopy()
	stale.ResourceVersion = "1"
	_, err = RepairKeyClash(t.Context(), k8s, stale, "tester", want,
		KeyedList{Path: "/spec/ports", KeyField: "port", Items: []KeyedItem{{Name: "http", ItemKey: ItemKey{1, "TCP"}}}})
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
