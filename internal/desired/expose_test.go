package desired

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// TestExposureOf: what the MyApp names wins over the manager's defaults, a Gateway's
// namespace defaults to the MyApp's, and with no choice anywhere the app gets an Ingress of
// the cluster's default class.
func TestExposureOf(t *testing.T) {
	shared := &examplev1.GatewayReference{Namespace: "infra", Name: "shared", SectionName: "https"}
	class := "internal"
	cases := map[string]struct {
		expose   *examplev1.Expose
		defaults ExposeDefaults
		want     Exposure
	}{
		"not exposed":                               {defaults: ExposeDefaults{Gateway: shared}, want: Exposure{}},
		"no choice anywhere":                        {expose: &examplev1.Expose{}, want: Exposure{Ingress: true}},
		"default class":                             {expose: &examplev1.Expose{}, defaults: ExposeDefaults{IngressClassName: "public"}, want: Exposure{Ingress: true, IngressClassName: ptr("public")}},
		"default gateway over class":                {expose: &examplev1.Expose{}, defaults: ExposeDefaults{Gateway: shared, IngressClassName: "public"}, want: Exposure{Route: true, Gateway: *shared}},
		"a TLS secret is for an Ingress":            {expose: &examplev1.Expose{TLS: &examplev1.ExposeTLS{SecretName: "tls"}}, defaults: ExposeDefaults{Gateway: shared, IngressClassName: "public"}, want: Exposure{Ingress: true, IngressClassName: ptr("public")}},
		"TLS without a secret, through the Gateway": {expose: &examplev1.Expose{TLS: &examplev1.ExposeTLS{}}, defaults: ExposeDefaults{Gateway: shared}, want: Exposure{Route: true, Gateway: *shared}},
		"the MyApp's class wins":                    {expose: &examplev1.Expose{IngressClassName: &class}, defaults: ExposeDefaults{Gateway: shared}, want: Exposure{Ingress: true, IngressClassName: &class}},
		"the MyApp's gateway wins":                  {expose: &examplev1.Expose{Gateway: &examplev1.GatewayReference{Name: "own"}}, defaults: ExposeDefaults{IngressClassName: "public"}, want: Exposure{Route: true, Gateway: examplev1.GatewayReference{Namespace: "shop", Name: "own"}}},
		"a gateway in another place":                {expose: &examplev1.Expose{Gateway: &examplev1.GatewayReference{Namespace: "infra", Name: "gw", SectionName: "web"}}, want: Exposure{Route: true, Gateway: examplev1.GatewayReference{Namespace: "infra", Name: "gw", SectionName: "web"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
			app.Spec.Expose = tc.expose
			g.Expect(ExposureOf(app, tc.defaults)).To(Equal(tc.want))
		})
	}
}

// TestURL: the scheme from tls, the first host that is not a wildcard, the path or "/".
func TestURL(t *testing.T) {
	cases := map[string]struct {
		expose *examplev1.Expose
		want   string
	}{
		"not exposed":      {want: ""},
		"plain":            {expose: &examplev1.Expose{Hosts: []examplev1.Hostname{"shop.example.com"}}, want: "http://shop.example.com/"},
		"tls and a path":   {expose: &examplev1.Expose{Hosts: []examplev1.Hostname{"shop.example.com"}, Path: "/store/", TLS: &examplev1.ExposeTLS{}}, want: "https://shop.example.com/store/"},
		"wildcard first":   {expose: &examplev1.Expose{Hosts: []examplev1.Hostname{"*.example.com", "www.example.com"}}, want: "http://www.example.com/"},
		"only wildcards":   {expose: &examplev1.Expose{Hosts: []examplev1.Hostname{"*.example.com"}}, want: ""},
		"a one-label host": {expose: &examplev1.Expose{Hosts: []examplev1.Hostname{"shop"}, Path: "/a"}, want: "http://shop/a"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			app := &examplev1.MyApp{}
			app.Spec.Expose = tc.expose
			NewWithT(t).Expect(URL(app)).To(Equal(tc.want))
		})
	}
}

// TestExposeChildren: the Ingress and the HTTPRoute route every host's path prefix to the
// Service's port, in the order of hosts, and only an Ingress carries the TLS secret.
func TestExposeChildren(t *testing.T) {
	g := NewWithT(t)
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "u"}}
	app.Spec.Port = ptr(int32(9000))
	app.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"b.example.com", "a.example.com"}, Path: "/x",
		TLS: &examplev1.ExposeTLS{SecretName: "tls"}}

	ing := Ingress(app, nil)
	g.Expect(ing.Spec.IngressClassName).To(BeNil())
	g.Expect(ing.Spec.Rules).To(HaveLen(2))
	g.Expect(*ing.Spec.Rules[0].Host).To(Equal("b.example.com"))
	p := ing.Spec.Rules[1].HTTP.Paths[0]
	g.Expect(*p.Path).To(Equal("/x"))
	g.Expect(*p.Backend.Service.Name).To(Equal("web"))
	g.Expect(*p.Backend.Service.Port.Number).To(Equal(int32(9000)))
	g.Expect(ing.Spec.TLS[0].Hosts).To(Equal([]string{"b.example.com", "a.example.com"}))
	g.Expect(*ing.Spec.TLS[0].SecretName).To(Equal("tls"))
	g.Expect(*ing.OwnerReferences[0].Controller).To(BeTrue())

	app.Spec.Expose.TLS.SecretName = ""
	g.Expect(Ingress(app, ptr("public")).Spec.TLS[0].SecretName).To(BeNil(), "no secret: the controller's default certificate")
	g.Expect(*Ingress(app, ptr("public")).Spec.IngressClassName).To(Equal("public"))

	route := HTTPRoute(app, examplev1.GatewayReference{Namespace: "infra", Name: "gw"})
	g.Expect(route.Spec.ParentRefs).To(HaveLen(1))
	g.Expect(route.Spec.ParentRefs[0].SectionName).To(BeNil())
	g.Expect(string(*route.Spec.ParentRefs[0].Namespace)).To(Equal("infra"))
	g.Expect(route.Spec.Hostnames).To(HaveLen(2))
	rule := route.Spec.Rules[0]
	g.Expect(*rule.Matches[0].Path.Value).To(Equal("/x"))
	g.Expect(*rule.BackendRefs[0].Port).To(BeEquivalentTo(9000))
	g.Expect(string(*rule.BackendRefs[0].Name)).To(Equal("web"))
}
