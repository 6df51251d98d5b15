package v1

// AccessPolicy restricts the network traffic of the app's pods: who may connect to them
// (inbound) and what they may connect to (outbound). The operator makes it into a
// NetworkPolicy named after the MyApp that, for each direction it lists, allows only the peers
// given; other NetworkPolicies selecting the pods add what they allow. Only a cluster whose
// network plugin enforces NetworkPolicies (Calico, Cilium, kube-network-policies and others;
// not the bridge plugin alone) refuses anything.
type AccessPolicy struct {
	// Inbound, when set, lists who may connect to the app's pods, on any of their ports.
	// Set and empty, nobody may. Clients outside the cluster (a NodePort or LoadBalancer
	// Service) are not among the peers it can list.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Inbound"
	Inbound *AccessRules `json:"inbound,omitempty"`

	// Outbound, when set, lists what the app's pods may connect to, besides DNS: ports 53
	// and 5353 (where OpenShift's DNS pods listen), UDP and TCP, to any destination.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Outbound"
	Outbound *AccessRules `json:"outbound,omitempty"`
}

// AccessRules are the peers of one direction of an AccessPolicy: pods of the MyApp's own
// namespace, of named namespaces, or of named MyApps.
type AccessRules struct {
	// OwnNamespace allows every pod of the MyApp's namespace.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Own namespace",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch"}
	OwnNamespace bool `json:"ownNamespace,omitempty"`

	// Namespaces allows every pod of these namespaces, at most 16: for inbound traffic
	// through a Gateway or an Ingress, the namespace of its proxy's pods (Traefik's, the
	// ingress controller's).
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Namespaces"
	Namespaces []NamespaceName `json:"namespaces,omitempty"`

	// Apps allows the pods of these MyApps, at most 16.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Apps"
	Apps []AppReference `json:"apps,omitempty"`
}

// NamespaceName is the name of a namespace.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
type NamespaceName string

// AppReference names a MyApp, whose pods carry the label myapp.example.com/name=<name>.
type AppReference struct {
	// Namespace is the MyApp's namespace: the referring MyApp's when left out.
	// +optional
	Namespace NamespaceName `json:"namespace,omitempty"`

	// Name is the MyApp's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`
}
