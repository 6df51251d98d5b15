package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// A MyApp names a Secret's key for an environment variable; the operator passes the reference
// on to the Deployment and never needs the value. This story makes sure no value reaches the
// operator's log or any event, on the happy path and on the failure paths (a wrong key, a
// missing Secret, a child the MyApp does not own), with the operator at its most verbose.
var _ = Describe("Secret values", Ordered, Serial, func() {
	It("never appear in the operator's log or in any event", func() {
		op := startManager("secrets", "--metrics-bind-address=0", "--zap-log-level=10")
		Eventually(op.isLeader).Should(BeTrue())
		ns := newNamespace()

		raw := make([]byte, 16)
		_, err := rand.Read(raw)
		Expect(err).NotTo(HaveOccurred())
		value := "e2e-secret-value-" + hex.EncodeToString(raw)
		// Forms a leak could take: the value, and its base64 (how a Secret's data is serialised).
		forms := []string{value, base64.StdEncoding.EncodeToString([]byte(value))}

		By("creating a Secret whose value is recognisable")
		Expect(k8s.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
			StringData: map[string]string{"password": value, "user": value + "-user"},
		})).To(Succeed())

		By("an unowned Deployment in the way of one MyApp, so that the operator reports a failure")
		blocker := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "clash"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr[int32](0),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "clash"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "clash"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
				},
			},
		}
		Expect(k8s.Create(ctx, blocker)).To(Succeed())

		By("creating MyApps that take variables from it: a good key, a wrong key, a missing Secret, a clash")
		ref := func(secret, key string) examplev1.EnvVar {
			return examplev1.EnvVar{Name: "PASSWORD", ValueFrom: &examplev1.EnvVarSource{
				SecretKeyRef: &examplev1.KeySelector{Name: secret, Key: key}}}
		}
		apps := map[string]examplev1.EnvVar{
			"good":           ref("db", "password"),
			"wrong-key":      ref("db", "no-such-key"),
			"missing-secret": ref("absent", "password"),
			"clash":          ref("db", "password"),
		}
		for name, env := range apps {
			app := &examplev1.MyApp{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr[int32](1),
					Env: []examplev1.EnvVar{{Name: "GREETING", Value: ptr("hello")}, env}},
			}
			Expect(k8s.Create(ctx, app)).To(Succeed())
		}

		By("waiting until every MyApp is reconciled: its status is for its generation")
		for name := range apps {
			Eventually(func(g Gomega) {
				app := getMyApp(g, ns, name)
				g.Expect(app.Status.ObservedGeneration).To(Equal(app.Generation))
				g.Expect(app.Status.Conditions).NotTo(BeEmpty())
			}).Should(Succeed(), "MyApp %s", name)
		}
		expectReady(ns, "good", 1)
		Eventually(func(g Gomega) string {
			return conditionOf(getMyApp(g, ns, "clash"), examplev1.ConditionStalled).Reason
		}).Should(Equal("ChildNotOwned"))
		By("checking the Deployment got the reference, not the value")
		d := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, key(ns, "good"), d)).To(Succeed())
		Expect(mustJSON(d.Spec.Template)).To(ContainSubstring(`"secretKeyRef":{"name":"db","key":"password"}`))

		By("waiting for the operator's events about these MyApps")
		events := &corev1.EventList{}
		Eventually(func(g Gomega) int {
			g.Expect(k8s.List(ctx, events, client.InNamespace(ns))).To(Succeed())
			return len(events.Items)
		}).Should(BeNumerically(">=", len(apps)))

		By("grepping the operator's whole log and every event in the cluster for the value")
		log, err := os.ReadFile(op.Log)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(log)).To(ContainSubstring(ns), "the operator's log does not mention the story's namespace: nothing to grep")
		all := &corev1.EventList{}
		Expect(k8s.List(ctx, all)).To(Succeed())
		Expect(all.Items).NotTo(BeEmpty())
		allEvents := mustJSON(all)
		for _, f := range forms {
			Expect(string(log)).NotTo(ContainSubstring(f), "the operator's log (%s) holds a secret value", op.Log)
			Expect(allEvents).NotTo(ContainSubstring(f), "an event holds a secret value")
		}
		GinkgoWriter.Printf("grepped %d bytes of operator log and %d events (%d in the story's namespace)\n",
			len(log), len(all.Items), len(events.Items))
	})
})

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}
