package realnode

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/test/traffic"
)

// rollsBackUnderTraffic is the auto-pilot's story on a real node (its spec is in the container
// of the edge's stories, expose_test.go, as it sends requests through the Gateway too): three
// failed rollouts, each rolled back by the operator, and a good change rolled forward, while
// requests flow through the Service and through the Gateway.
func rollsBackUnderTraffic() {
	ensureGateway()
	const host = "rollback.example.com"
	ns := newNamespace()
	v1, v2 := appImage+":"+appVersions[0], appImage+":"+appVersions[1]
	const configFile = "/etc/app/app.conf"
	goodFile := []examplev1.File{{Path: configFile, Content: "greeting=hello\n"}}
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"},
		Data: map[string]string{"SHUTDOWN_DELAY": "1s"}}
	Expect(k8s.Create(ctx, settings)).To(Succeed())
	app := &examplev1.MyApp{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: examplev1.MyAppSpec{Image: v1, Replicas: ptr.To[int32](2), Port: ptr.To[int32](appPort),
			// Endpoints drop a pod before it stops: the rollbacks replace no serving pod,
			// and the good change at the end replaces them all.
			TerminationGracePeriodSeconds: ptr.To[int64](20),
			Lifecycle:                     &examplev1.Lifecycle{PreStop: &examplev1.LifecycleHandler{Sleep: &examplev1.SleepAction{Seconds: 5}}},
			// The app refuses to start on a config file or a SHUTDOWN_DELAY it cannot use.
			Files:                 goodFile,
			Env:                   []examplev1.EnvVar{{Name: "CONFIG_FILE", Value: ptr.To(configFile)}},
			EnvFrom:               []examplev1.EnvFromSource{{ConfigMapRef: &examplev1.EnvFromReference{Name: "settings"}}},
			RolloutOnConfigChange: ptr.To(true),
			Expose: &examplev1.Expose{Hosts: []examplev1.Hostname{host},
				Gateway: &examplev1.GatewayReference{Namespace: traefikNamespace, Name: gatewayName}},
		},
	}
	Expect(k8s.Create(ctx, app)).To(Succeed())
	first := expectReadyAndAnswering(ns, app.Name, appVersions[0], 2)
	Eventually(func(g Gomega) string { return myApp(g, ns).Status.ReadyTemplate }).ShouldNot(BeEmpty())
	firstTemplate := &appsv1.Deployment{}
	Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: app.Name}, firstTemplate)).To(Succeed())
	Expect(firstTemplate.Spec.Template.Annotations).To(HaveKey(desired.AnnotationConfigHash))

	service := serviceURL(ns, app.Name)
	Eventually(traffic.Get).WithArguments(service).Should(Succeed())
	started := time.Now()
	stream := traffic.Start(service, perSecond, 10*time.Minute)
	edge := traefikURL()
	Eventually(answerFrom).WithArguments(edge, host).Should(HavePrefix("myapp test app " + appVersions[0]))
	edgeStarted := time.Now()
	edgeStream := traffic.StartHost(edge, host, perSecond, 10*time.Minute)
	// A story that fails half-way stops its streams before the next one measures.
	DeferCleanup(func() { stream.Stop(); edgeStream.Stop() })

	rolledBack := func(reason string) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			a := myApp(g, ns)
			g.Expect(a.Status.RolledBack).NotTo(BeNil())
			g.Expect(a.Status.RolledBack.Reason).To(Equal(reason))
			g.Expect(a.Status.RolledBack.Generation).To(Equal(a.Generation))
			stalled := meta.FindStatusCondition(a.Status.Conditions, examplev1.ConditionStalled)
			g.Expect(stalled).NotTo(BeNil())
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonRolledBack))
			d := &appsv1.Deployment{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: app.Name}, d)).To(Succeed())
			// The first template: its image, its files and its configuration.
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(v1))
			g.Expect(d.Spec.Template.Labels[desired.LabelFiles]).To(Equal(firstTemplate.Spec.Template.Labels[desired.LabelFiles]))
			g.Expect(d.Spec.Template.Annotations[desired.AnnotationConfigHash]).To(Equal(firstTemplate.Spec.Template.Annotations[desired.AnnotationConfigHash]))
			// Only the first pods remain, ready: the failed template's pods are gone.
			pods := podsOf(g, d)
			g.Expect(pods).To(HaveLen(2))
			for _, p := range pods {
				g.Expect(first).To(HaveKey(p.UID), "pod %s is not one of the first pods", p.Name)
				g.Expect(isReady(p)).To(BeTrue())
			}
		}).Should(Succeed())
	}

	By("(a) an image that cannot be pulled")
	setImage(app, "registry.invalid/myapp/app:no-such-tag")
	rolledBack(examplev1.ReasonImagePullBackOff)

	By("(b) a config file the app refuses: its new pods exit and crash-loop")
	updateSpec(app, func(s *examplev1.MyAppSpec) {
		s.Image = v1
		s.Files = []examplev1.File{{Path: configFile, Content: "greeting hello\n"}}
	})
	rolledBack("CrashLoopBackOff")

	By("(c) the file fixed, then a value of the referenced ConfigMap the app refuses")
	updateSpec(app, func(s *examplev1.MyAppSpec) { s.Files = goodFile })
	Eventually(func(g Gomega) *examplev1.RollbackStatus { return myApp(g, ns).Status.RolledBack }).Should(BeNil())
	settings.Data["SHUTDOWN_DELAY"] = "soon"
	Expect(k8s.Update(ctx, settings)).To(Succeed())
	rolledBack("CrashLoopBackOff")

	By("a good change rolls forward: the ConfigMap fixed and a new image")
	settings.Data["SHUTDOWN_DELAY"] = "2s"
	Expect(k8s.Update(ctx, settings)).To(Succeed())
	setImage(app, v2)
	after := expectReadyAndAnswering(ns, app.Name, appVersions[1], 2)
	expectOnlyPods(ns, len(after))
	Eventually(func(g Gomega) *examplev1.RollbackStatus { return myApp(g, ns).Status.RolledBack }).Should(BeNil())

	Eventually(answerFrom).WithArguments(edge, host).Should(HavePrefix("myapp test app " + appVersions[1]))

	expectNoRequestLost("traffic through the Service: three rollbacks and a rollout", stream.Stop(), started)
	expectNoRequestLostAtEdge("traffic through the Gateway: three rollbacks and a rollout", edgeStream.Stop(), edgeStarted)
}

// myApp reads the MyApp named web of the namespace.
func myApp(g Gomega, ns string) *examplev1.MyApp {
	a := &examplev1.MyApp{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, a)).To(Succeed())
	return a
}
