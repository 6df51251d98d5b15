package desired

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestService(t *testing.T) {
	cases := map[string]struct {
		mutate   func(*examplev1.MyApp)
		wantType corev1.ServiceType
		wantPort int32
	}{
		"cluster IP":       {wantType: corev1.ServiceTypeClusterIP, wantPort: 8080},
		"node port":        {mutate: func(a *examplev1.MyApp) { a.Spec.ServiceType = examplev1.ServiceTypeNodePort }, wantType: corev1.ServiceTypeNodePort, wantPort: 8080},
		"load balancer":    {mutate: func(a *examplev1.MyApp) { a.Spec.ServiceType = examplev1.ServiceTypeLoadBalancer }, wantType: corev1.ServiceTypeLoadBalancer, wantPort: 8080},
		"undefaulted type": {mutate: func(a *examplev1.MyApp) { a.Spec.ServiceType = "" }, wantType: corev1.ServiceTypeClusterIP, wantPort: 8080},
		"custom port":      {mutate: func(a *examplev1.MyApp) { a.Spec.Port = ptr(int32(9090)) }, wantType: corev1.ServiceTypeClusterIP, wantPort: 9090},
		"undefaulted port": {mutate: func(a *examplev1.MyApp) { a.Spec.Port = nil }, wantType: corev1.ServiceTypeClusterIP, wantPort: DefaultPort},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := newApp(tc.mutate)
			s := Service(app, false)
			g.Expect(*s.Name).To(Equal("web"))
			g.Expect(s.Labels).To(Equal(Labels(app)))
			g.Expect(s.OwnerReferences).To(HaveLen(1))
			g.Expect(*s.Spec.Type).To(Equal(tc.wantType))
			g.Expect(s.Spec.Selector).To(Equal(SelectorLabels(app)))
			g.Expect(s.Spec.Ports).To(HaveLen(1))
			g.Expect(*s.Spec.Ports[0].Port).To(Equal(tc.wantPort))
			g.Expect(*s.Spec.Ports[0].TargetPort).To(Equal(intstr.FromString(PortName)))
			// Allocated fields stay the API server's.
			g.Expect(s.Spec.ClusterIP).To(BeNil())
			g.Expect(s.Spec.Ports[0].NodePort).To(BeNil())
		})
	}
}
