package desired

import (
	"slices"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestCertificate(t *testing.T) {
	issuer := func(name, kind, group string) *examplev1.ExposeTLS {
		return &examplev1.ExposeTLS{SecretName: "web-tls", IssuerRef: &examplev1.IssuerReference{Name: name, Kind: kind, Group: group}}
	}
	cases := map[string]struct {
		expose              *examplev1.Expose
		none                bool
		hosts               []string
		issuer, kind, group string
	}{
		"not exposed":                {none: true},
		"no tls":                     {expose: &examplev1.Expose{Hosts: []examplev1.Hostname{"a.example.com"}}, none: true},
		"a Secret of the user's own": {expose: &examplev1.Expose{Hosts: []examplev1.Hostname{"a.example.com"}, TLS: &examplev1.ExposeTLS{SecretName: "mine"}}, none: true},
		"no host held":               {expose: &examplev1.Expose{Hosts: nil, TLS: issuer("ca", "", "")}, none: true},
		"an Issuer by name only: cert-manager's own kind": {expose: &examplev1.Expose{Hosts: []examplev1.Hostname{"a.example.com", "*.b.example.com"}, TLS: issuer("ca", "", "")},
			hosts: []string{"a.example.com", "*.b.example.com"}, issuer: "ca", kind: "Issuer", group: "cert-manager.io"},
		"a ClusterIssuer": {expose: &examplev1.Expose{Hosts: []examplev1.Hostname{"a.example.com"}, TLS: issuer("letsencrypt", "ClusterIssuer", "")},
			hosts: []string{"a.example.com"}, issuer: "letsencrypt", kind: "ClusterIssuer", group: "cert-manager.io"},
		"an external issuer": {expose: &examplev1.Expose{Hosts: []examplev1.Hostname{"a.example.com"}, TLS: issuer("pca", "AWSPCAClusterIssuer", "awspca.cert-manager.io")},
			hosts: []string{"a.example.com"}, issuer: "pca", kind: "AWSPCAClusterIssuer", group: "awspca.cert-manager.io"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: "u1"},
				Spec: examplev1.MyAppSpec{Image: "nginx", Expose: tc.expose}}
			c := Certificate(app)
			if tc.none {
				if c != nil {
					t.Fatalf("a Certificate %+v, want none", c)
				}
				return
			}
			if c == nil {
				t.Fatal("no Certificate")
			}
			if *c.Name != "web" || *c.Namespace != "team" || *c.Kind != "Certificate" || *c.APIVersion != "cert-manager.io/v1" {
				t.Fatalf("named %s/%s, kind %s %s", *c.Namespace, *c.Name, *c.APIVersion, *c.Kind)
			}
			if len(c.OwnerReferences) != 1 || *c.OwnerReferences[0].UID != "u1" || !*c.OwnerReferences[0].Controller {
				t.Errorf("owner references %+v: want the MyApp as controller", c.OwnerReferences)
			}
			if c.Labels[LabelManagedBy] != ManagedBy {
				t.Errorf("labels %v: want the operator's, which its cache of optional kinds selects", c.Labels)
			}
			if !slices.Equal(c.Spec.DNSNames, tc.hosts) || deref(c.Spec.SecretName) != "web-tls" {
				t.Errorf("dnsNames %v secret %v, want %v web-tls", c.Spec.DNSNames, c.Spec.SecretName, tc.hosts)
			}
			if c.Spec.PrivateKey == nil || c.Spec.PrivateKey.RotationPolicy == nil || *c.Spec.PrivateKey.RotationPolicy != cmv1.RotationPolicyAlways {
				t.Errorf("private key %+v: want a new key at every issuance, said", c.Spec.PrivateKey)
			}
			ref := c.Spec.IssuerRef
			if deref(ref.Name) != tc.issuer || deref(ref.Kind) != tc.kind || deref(ref.Group) != tc.group {
				t.Errorf("issuer %v %v %v, want %s %s %s", deref(ref.Name), deref(ref.Kind), deref(ref.Group), tc.issuer, tc.kind, tc.group)
			}
		})
	}
}
