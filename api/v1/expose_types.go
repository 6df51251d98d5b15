package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Expose makes the app reachable over HTTP from outside the cluster, at its hosts and path,
// through an HTTPRoute attached to a Gateway or through an Ingress.
//
// Where it attaches: spec.expose.gateway makes an HTTPRoute (gateway.networking.k8s.io/v1) to
// that Gateway; spec.expose.ingressClassName makes an Ingress of that class. With neither, the
// manager's defaults decide (its --expose-gateway flag, then its --expose-ingress-class flag),
// and with no default either an Ingress of the cluster's default IngressClass.
// +kubebuilder:validation:XValidation:rule="!(has(self.gateway) && has(self.ingressClassName))",message="set gateway or ingressClassName, not both"
// +kubebuilder:validation:XValidation:rule="!has(self.gateway) || !has(self.tls) || !has(self.tls.secretName)",message="an HTTPRoute cannot carry a certificate: the Gateway's listener holds it; leave tls.secretName out",fieldPath=".tls.secretName"
// +kubebuilder:validation:XValidation:rule="!has(self.gateway) || !has(self.tls) || !has(self.tls.issuerRef)",message="a certificate for a Gateway belongs to its listener: ask cert-manager for it on the Gateway, and leave tls.issuerRef out",fieldPath=".tls.issuerRef"
type Expose struct {
	// Hosts are the DNS names the app answers on, such as shop.example.com, at most 16. A name
	// may start with a wildcard label ("*.example.com"); its last label starts with a letter,
	// so an IP address is no host. status.url names the first host that is not a wildcard.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +required
	Hosts []Hostname `json:"hosts"`

	// Path is the path prefix the app is reached under: "/" when left out. It is matched by
	// whole elements ("/shop" matches /shop and /shop/cart, not /shopping). Letters, digits
	// and -._~!$&'()*+,;=:@ only (no percent-encoding), without an empty, '.' or '..' element.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/(([-A-Za-z0-9_~!$&'()*+,;=:@][-A-Za-z0-9._~!$&'()*+,;=:@]*|[.][-A-Za-z0-9_~!$&'()*+,;=:@][-A-Za-z0-9._~!$&'()*+,;=:@]*|[.][.][-A-Za-z0-9._~!$&'()*+,;=:@]+)(/([-A-Za-z0-9_~!$&'()*+,;=:@][-A-Za-z0-9._~!$&'()*+,;=:@]*|[.][-A-Za-z0-9_~!$&'()*+,;=:@][-A-Za-z0-9._~!$&'()*+,;=:@]*|[.][.][-A-Za-z0-9._~!$&'()*+,;=:@]+))*/?)?$`
	// +optional
	Path string `json:"path,omitempty"`

	// TLS, when set, says that the app is reached over HTTPS: status.url starts with https://.
	// An Ingress gets a TLS entry for all hosts with secretName (or, without it, the ingress
	// controller's default certificate); through a Gateway, the listener terminates TLS.
	// +optional
	TLS *ExposeTLS `json:"tls,omitempty"`

	// Gateway is the Gateway the app's HTTPRoute attaches to. The cluster must serve the
	// Gateway API (its CRDs installed); the MyApp is Stalled until it does, and Ready only
	// once the Gateway accepted the route.
	// +optional
	Gateway *GatewayReference `json:"gateway,omitempty"`

	// PortName is the port the route or Ingress sends requests to: http (the MyApp's port,
	// the default) or the name of a TCP port in spec.ports.
	// +kubebuilder:validation:MaxLength=15
	// +optional
	PortName string `json:"portName,omitempty"`

	// IngressClassName is the class of the app's Ingress (an IngressClass's name).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	IngressClassName *string `json:"ingressClassName,omitempty"`
}

// Hostname is a DNS name, optionally with a wildcard first label.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern=`^([*][.])?([a-z0-9]([-a-z0-9]*[a-z0-9])?[.])*[a-z]([-a-z0-9]*[a-z0-9])?$`
type Hostname string

// ExposeTLS asks for HTTPS.
// +kubebuilder:validation:XValidation:rule="!has(self.issuerRef) || has(self.secretName)",message="tls.issuerRef needs tls.secretName: it names the Secret cert-manager writes the certificate to",fieldPath=".secretName"
type ExposeTLS struct {
	// SecretName is the Secret, in the MyApp's namespace, holding the certificate an Ingress
	// serves (type kubernetes.io/tls). Left out, the ingress controller's default certificate
	// is served. Not for a Gateway: its listener holds the certificate.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// IssuerRef, when set, asks cert-manager for the certificate: the operator makes a
	// cert-manager Certificate named after the MyApp for the hosts its Ingress serves, which
	// cert-manager issues from this issuer into the Secret secretName names (required with
	// it; that Secret is then cert-manager's to write). The cluster must serve cert-manager's
	// Certificates (cert-manager.io/v1): the MyApp is Stalled until it does, and Ready once
	// the certificate is issued. Not for a Gateway: its listener holds the certificate.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Certificate issuer"
	// +optional
	IssuerRef *IssuerReference `json:"issuerRef,omitempty"`
}

// IssuerReference names the cert-manager issuer of a certificate.
// +kubebuilder:validation:XValidation:rule="!has(self.kind) || (has(self.group) && self.group != 'cert-manager.io') || self.kind == 'Issuer' || self.kind == 'ClusterIssuer'",message="cert-manager's own issuers are of kind Issuer or ClusterIssuer: another kind is an external issuer's, named with its group",fieldPath=".kind"
type IssuerReference struct {
	// Name is the issuer's name: an Issuer in the MyApp's namespace, or a ClusterIssuer.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Issuer name",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +required
	Name string `json:"name"`

	// Kind is the issuer's kind: Issuer (the default) or ClusterIssuer for cert-manager's own,
	// or the kind of an external issuer's group.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Issuer kind",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	Kind string `json:"kind,omitempty"`

	// Group is the issuer's API group: cert-manager.io (the default) or an external issuer's.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Issuer group",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	Group string `json:"group,omitempty"`
}

// GatewayReference names a Gateway (gateway.networking.k8s.io) and optionally one of its
// listeners.
type GatewayReference struct {
	// Namespace is the Gateway's namespace: the MyApp's when left out. A Gateway in another
	// namespace accepts the route only if its listener allows routes from the MyApp's
	// namespace (allowedRoutes).
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name is the Gateway's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Name string `json:"name"`

	// SectionName is the name of the Gateway's listener to attach to; left out, the route
	// attaches to every listener that allows it.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	SectionName string `json:"sectionName,omitempty"`
}

// ExposureStatus is what the MyApp holds of what spec.expose asks for.
type ExposureStatus struct {
	// Claims are the hosts of spec.expose, each with the path, that the MyApp holds, and since
	// when. A host of spec.expose missing here is held by another MyApp (Stalled, reason
	// HostClaimed, names it).
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	Claims []HostClaim `json:"claims,omitempty"`
}

// HostClaim is a host and path a MyApp holds.
type HostClaim struct {
	// Host is a host of spec.expose.hosts.
	// +required
	Host Hostname `json:"host"`

	// Path is spec.expose.path ("/" when left out).
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Path string `json:"path"`

	// Since is when the MyApp first held the host on the path: the claim's age, which decides
	// between two MyApps asking for one host.
	// +required
	Since metav1.Time `json:"since"`
}
