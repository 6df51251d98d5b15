package desired

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// TestNamedPorts: spec.ports are container ports and Service ports under one name each, after
// the MyApp's own port http; the route and the Ingress send to the port expose.portName names.
func TestNamedPorts(t *testing.T) {
	udp, sctp := examplev1.ProtocolUDP, examplev1.ProtocolSCTP
	h2c := "kubernetes.io/h2c"
	ports := []examplev1.ContainerPort{
		{Name: "grpc", Port: 9000, AppProtocol: &h2c},
		{Name: "dns", Port: 53, Protocol: &udp},
		{Name: "assoc", Port: 8080, Protocol: &sctp},
	}
	type port struct {
		name     string
		number   int32
		protocol corev1.Protocol
	}
	want := []port{{"http", 8080, corev1.ProtocolTCP}, {"grpc", 9000, corev1.ProtocolTCP}, {"dns", 53, corev1.ProtocolUDP}, {"assoc", 8080, corev1.ProtocolSCTP}}

	g := NewWithT(t)
	app := newApp(func(a *examplev1.MyApp) { a.Spec.Ports = ports })
	got := make([]port, 0, len(want))
	for _, p := range Service(app, false).Spec.Ports {
		got = append(got, port{*p.Name, *p.Port, *p.Protocol})
		g.Expect(*p.TargetPort).To(Equal(intstr.FromString(*p.Name)), "the Service forwards to the container's port of the same name")
		if *p.Name == "grpc" {
			g.Expect(p.AppProtocol).To(HaveValue(Equal(h2c)))
		} else {
			g.Expect(p.AppProtocol).To(BeNil())
		}
	}
	g.Expect(got).To(Equal(want))

	tmpl, err := PodTemplate(app)
	g.Expect(err).NotTo(HaveOccurred())
	got = nil
	for _, p := range tmpl.Spec.Containers[0].Ports {
		got = append(got, port{*p.Name, *p.ContainerPort, *p.Protocol})
	}
	g.Expect(got).To(Equal(want))

	// Without spec.ports the Service and the container have the one port of 0.4.
	plain := newApp(nil)
	g.Expect(Service(plain, false).Spec.Ports).To(HaveLen(1))
	tmpl, err = PodTemplate(plain)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tmpl.Spec.Containers[0].Ports).To(HaveLen(1))
}

func TestExposedPort(t *testing.T) {
	udp := examplev1.ProtocolUDP
	ports := []examplev1.ContainerPort{{Name: "grpc", Port: 9000}, {Name: "dns", Port: 53, Protocol: &udp}}
	cases := map[string]struct {
		portName string
		ports    []examplev1.ContainerPort
		want     int32
	}{
		"unset: the MyApp's port":  {ports: ports, want: 8080},
		"http: the MyApp's port":   {portName: "http", ports: ports, want: 8080},
		"a TCP port of spec.ports": {portName: "grpc", ports: ports, want: 9000},
		// Admission refuses these; an object stored without the rule still gets a port the
		// Service has.
		"a UDP port":                {portName: "dns", ports: ports, want: 8080},
		"a port spec.ports lacks":   {portName: "web", ports: ports, want: 8080},
		"a port without spec.ports": {portName: "grpc", want: 8080},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "u"}}
			app.Spec.Ports = tc.ports
			app.Spec.Expose = &examplev1.Expose{Hosts: []examplev1.Hostname{"a.example.com"}, PortName: tc.portName}
			g.Expect(*Ingress(app, nil).Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port.Number).To(Equal(tc.want))
			route := HTTPRoute(app, examplev1.GatewayReference{Name: "gw"})
			g.Expect(*route.Spec.Rules[0].BackendRefs[0].Port).To(BeEquivalentTo(tc.want))
		})
	}
}
