package desired

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestNetworkPolicy(t *testing.T) {
	own := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{}}
	namespaces := func(names ...string) networkingv1.NetworkPolicyPeer {
		return networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: names}}}}
	}
	app := func(ns, name string) networkingv1.NetworkPolicyPeer {
		return networkingv1.NetworkPolicyPeer{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{LabelSelector: name}}}
	}
	udp, tcp, port53, port5353 := corev1.ProtocolUDP, corev1.ProtocolTCP, intstr.FromInt32(53), intstr.FromInt32(5353)
	dns := networkingv1.NetworkPolicyEgressRule{Ports: []networkingv1.NetworkPolicyPort{
		{Protocol: &udp, Port: &port53}, {Protocol: &tcp, Port: &port53}, {Protocol: &udp, Port: &port5353}, {Protocol: &tcp, Port: &port5353}}}
	cases := map[string]struct {
		policy *examplev1.AccessPolicy
		want   *networkingv1.NetworkPolicySpec
	}{
		"no access policy":        {},
		"neither direction":       {policy: &examplev1.AccessPolicy{}},
		"inbound empty: deny all": {policy: &examplev1.AccessPolicy{Inbound: &examplev1.AccessRules{}}, want: &networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}},
		"inbound from every kind of peer": {
			policy: &examplev1.AccessPolicy{Inbound: &examplev1.AccessRules{OwnNamespace: true, Namespaces: []examplev1.NamespaceName{"traefik", "monitoring"},
				Apps: []examplev1.AppReference{{Name: "front"}, {Namespace: "shop", Name: "checkout"}}}},
			want: &networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{own, namespaces("traefik", "monitoring"), app("shop", "front"), app("shop", "checkout")}}}},
		},
		"outbound empty: DNS only": {
			policy: &examplev1.AccessPolicy{Outbound: &examplev1.AccessRules{}},
			want:   &networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}, Egress: []networkingv1.NetworkPolicyEgressRule{dns}},
		},
		"both directions": {
			policy: &examplev1.AccessPolicy{Inbound: &examplev1.AccessRules{OwnNamespace: true}, Outbound: &examplev1.AccessRules{Apps: []examplev1.AppReference{{Name: "db"}}}},
			want: &networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{own}}},
				Egress:  []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{app("shop", "db")}}, dns}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			a := newApp(func(a *examplev1.MyApp) { a.Spec.AccessPolicy = tc.policy })
			np := NetworkPolicy(a, false)
			if tc.want == nil {
				g.Expect(np).To(BeNil())
				return
			}
			g.Expect(*np.Name).To(Equal(a.Name))
			g.Expect(np.Labels).To(Equal(Labels(a)))
			g.Expect(np.OwnerReferences).To(HaveLen(1))
			b, err := json.Marshal(np.Spec)
			g.Expect(err).NotTo(HaveOccurred())
			var got networkingv1.NetworkPolicySpec
			g.Expect(json.Unmarshal(b, &got)).To(Succeed())
			want := *tc.want
			want.PodSelector = metav1.LabelSelector{MatchLabels: SelectorLabels(a)}
			g.Expect(got).To(Equal(want))
		})
	}
}

// TestNetworkPolicyWhileMigrating: during the 0.2.0 selector migration the policy covers the
// old pods and the new ones alike, as the Service does.
func TestNetworkPolicyWhileMigrating(t *testing.T) {
	g := NewWithT(t)
	a := newApp(func(a *examplev1.MyApp) {
		a.Spec.AccessPolicy = &examplev1.AccessPolicy{Inbound: &examplev1.AccessRules{}}
	})
	g.Expect(NetworkPolicy(a, true).Spec.PodSelector.MatchLabels).To(Equal(migrationSelectorLabels(a)))
	g.Expect(NetworkPolicy(a, false).Spec.PodSelector.MatchLabels).To(Equal(SelectorLabels(a)))
}
