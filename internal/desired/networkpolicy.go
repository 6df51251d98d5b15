package desired

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// namespaceNameLabel is the label the API server gives every namespace, its name.
const namespaceNameLabel = "kubernetes.io/metadata.name"

// dnsPorts are the ports name lookups reach the cluster's DNS pods on, over UDP and TCP: 53,
// and 5353, where OpenShift's DNS pods listen behind its DNS Service's port 53 (a
// NetworkPolicy sees a connection to a Service at the pod's port, after the translation).
var dnsPorts = []int32{53, 5353}

// NetworkPolicy is the NetworkPolicy spec.accessPolicy asks for, or nil when it asks for none
// (the operator then deletes the one it owns). It selects the MyApp's pods (while migrating is
// true, those of the 0.2.0 Deployment being replaced too, as the Service does) and lists a policy
// type for each direction the access policy sets, so that in that direction only the peers
// listed connect: an empty list of peers refuses every connection (a rule without peers would
// allow every one, so none is written). Outbound, DNS stays open to every destination, since
// where the cluster's DNS answers (a Service, a node-local cache on a link-local address)
// differs between clusters.
func NetworkPolicy(app *examplev1.MyApp, migrating bool) *networkingv1ac.NetworkPolicyApplyConfiguration {
	ap := app.Spec.AccessPolicy
	if ap == nil || (ap.Inbound == nil && ap.Outbound == nil) {
		return nil
	}
	selector := SelectorLabels(app)
	if migrating {
		selector = migrationSelectorLabels(app)
	}
	spec := networkingv1ac.NetworkPolicySpec().
		WithPodSelector(metav1ac.LabelSelector().WithMatchLabels(selector))
	if ap.Inbound != nil {
		spec.WithPolicyTypes(networkingv1.PolicyTypeIngress)
		if peers := accessPeers(app, ap.Inbound); len(peers) > 0 {
			spec.WithIngress(networkingv1ac.NetworkPolicyIngressRule().WithFrom(peers...))
		}
	}
	if ap.Outbound != nil {
		spec.WithPolicyTypes(networkingv1.PolicyTypeEgress)
		if peers := accessPeers(app, ap.Outbound); len(peers) > 0 {
			spec.WithEgress(networkingv1ac.NetworkPolicyEgressRule().WithTo(peers...))
		}
		dns := networkingv1ac.NetworkPolicyEgressRule()
		for _, port := range dnsPorts {
			dns.WithPorts(
				networkingv1ac.NetworkPolicyPort().WithProtocol(corev1.ProtocolUDP).WithPort(intstr.FromInt32(port)),
				networkingv1ac.NetworkPolicyPort().WithProtocol(corev1.ProtocolTCP).WithPort(intstr.FromInt32(port)))
		}
		spec.WithEgress(dns)
	}
	return networkingv1ac.NetworkPolicy(app.Name, app.Namespace).
		WithLabels(Labels(app)).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(spec)
}

// accessPeers are the peers one direction of the access policy allows: every pod of the
// MyApp's namespace (a pod selector alone selects in the policy's namespace), every pod of
// each named namespace, and the pods of each named MyApp.
func accessPeers(app *examplev1.MyApp, rules *examplev1.AccessRules) []*networkingv1ac.NetworkPolicyPeerApplyConfiguration {
	peers := make([]*networkingv1ac.NetworkPolicyPeerApplyConfiguration, 0, 2+len(rules.Apps))
	if rules.OwnNamespace {
		peers = append(peers, networkingv1ac.NetworkPolicyPeer().WithPodSelector(metav1ac.LabelSelector()))
	}
	if len(rules.Namespaces) > 0 {
		names := make([]string, 0, len(rules.Namespaces))
		for _, ns := range rules.Namespaces {
			names = append(names, string(ns))
		}
		peers = append(peers, networkingv1ac.NetworkPolicyPeer().WithNamespaceSelector(metav1ac.LabelSelector().
			WithMatchExpressions(metav1ac.LabelSelectorRequirement().
				WithKey(namespaceNameLabel).WithOperator(metav1.LabelSelectorOpIn).WithValues(names...))))
	}
	for _, a := range rules.Apps {
		ns := string(a.Namespace)
		if ns == "" {
			ns = app.Namespace
		}
		peers = append(peers, networkingv1ac.NetworkPolicyPeer().
			WithNamespaceSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{namespaceNameLabel: ns})).
			WithPodSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{LabelSelector: a.Name})))
	}
	return peers
}
