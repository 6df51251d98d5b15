package realnode

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

// A Secret or ConfigMap that spec.env refers to and that does not exist: the API accepts the
// MyApp, the Deployment creates its pods, and only the kubelet finds out, when it builds the
// container (CreateContainerConfigError). The operator reads that from the pods, never from
// the Secrets, and says it on the MyApp.
var _ = Describe("MyApps whose pods a real kubelet cannot start", Ordered, Label("realnode", "pod-problems"), func() {
	BeforeAll(func() { deployOperatorAgain() })

	It("reports a missing Secret and a missing ConfigMap with the kubelet's reason, one event each, recovers once they exist, while a neighbour reconciles on", func() {
		ns := newNamespace()
		v1, v2 := appImage+":"+appVersions[0], appImage+":"+appVersions[1]
		newApp := func(name string, env ...examplev1.EnvVar) *examplev1.MyApp {
			app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: examplev1.MyAppSpec{Image: v1, Replicas: ptr.To[int32](1), Port: ptr.To[int32](appPort), Env: env}}
			Expect(k8s.Create(ctx, app)).To(Succeed())
			return app
		}
		healthy := newApp("healthy")
		secret := newApp("secret", examplev1.EnvVar{Name: "PASSWORD",
			ValueFrom: &examplev1.EnvVarSource{SecretKeyRef: &examplev1.KeySelector{Name: "db", Key: "password"}}})
		config := newApp("config", examplev1.EnvVar{Name: "COLOR",
			ValueFrom: &examplev1.EnvVarSource{ConfigMapKeyRef: &examplev1.KeySelector{Name: "ui", Key: "color"}}})

		By("the kubelet failing to build the containers: the MyApps say what is missing")
		expectStalledBy(secret, examplev1.ReasonCreateContainerConfigError, "Secret db key password")
		expectStalledBy(config, examplev1.ReasonCreateContainerConfigError, "ConfigMap ui key color")
		for _, app := range []*examplev1.MyApp{secret, config} {
			expectOneEventThroughReconciles(app, examplev1.ReasonCreateContainerConfigError)
		}

		By("the healthy neighbour gets Ready and follows an update to the next version")
		expectReadyAndAnswering(ns, healthy.Name, appVersions[0], 1)
		Eventually(func(g Gomega) {
			latest := &examplev1.MyApp{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(healthy), latest)).To(Succeed())
			latest.Spec.Image = v2
			g.Expect(k8s.Update(ctx, latest)).To(Succeed())
		}).Should(Succeed())
		expectReadyAndAnswering(ns, healthy.Name, appVersions[1], 1)

		By("creating the Secret and the ConfigMap: the kubelet starts the containers, and both MyApps get Ready")
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
			StringData: map[string]string{"password": "not-a-real-one"}})).To(Succeed())
		Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ui"},
			Data: map[string]string{"color": "blue"}})).To(Succeed())
		expectReadyAndAnswering(ns, secret.Name, appVersions[0], 1)
		expectReadyAndAnswering(ns, config.Name, appVersions[0], 1)
		for _, app := range []*examplev1.MyApp{secret, config} {
			Expect(countEvents(Default, app, examplev1.ReasonCreateContainerConfigError)).To(Equal(1))
		}
	})
})

// expectStalledBy waits until the MyApp is Stalled with that reason, its message naming what
// is missing and what to do.
func expectStalledBy(app *examplev1.MyApp, reason, missing string) {
	Eventually(func(g Gomega) {
		latest := &examplev1.MyApp{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), latest)).To(Succeed())
		stalled := meta.FindStatusCondition(latest.Status.Conditions, examplev1.ConditionStalled)
		g.Expect(stalled).NotTo(BeNil())
		g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue), "Stalled: %s: %s", stalled.Reason, stalled.Message)
		g.Expect(stalled.Reason).To(Equal(reason))
		g.Expect(stalled.Message).To(ContainSubstring(missing))
		g.Expect(stalled.Message).To(ContainSubstring("Create the Secret or ConfigMap"))
		g.Expect(meta.IsStatusConditionTrue(latest.Status.Conditions, examplev1.ConditionReady)).To(BeFalse())
	}).Should(Succeed())
}

// expectOneEventThroughReconciles checks that the MyApp has exactly one event of that reason,
// and still one after three more reconciles, each seen to reach its status write.
func expectOneEventThroughReconciles(app *examplev1.MyApp, reason string) {
	Eventually(func(g Gomega) int { return countEvents(g, app, reason) }).Should(Equal(1))
	for i := range 3 {
		v := fmt.Sprintf("%s-%d", reason, i)
		Eventually(func(g Gomega) {
			latest := &examplev1.MyApp{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), latest)).To(Succeed())
			if latest.Annotations == nil {
				latest.Annotations = map[string]string{}
			}
			latest.Annotations[examplev1.ReconcileRequestAnnotation] = v
			g.Expect(k8s.Update(ctx, latest)).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) string {
			latest := &examplev1.MyApp{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, latest)).To(Succeed())
			return latest.Status.LastHandledReconcileAt
		}).Should(Equal(v))
	}
	Consistently(func(g Gomega) int { return countEvents(g, app, reason) }, 3*time.Second).Should(Equal(1))
}

// countEvents counts the events of that reason recorded on the MyApp (testutil.CountEvents),
// failing when it cannot count.
func countEvents(g Gomega, app *examplev1.MyApp, reason string) int {
	n, err := testutil.CountEvents(ctx, k8s, app, reason)
	g.Expect(err).NotTo(HaveOccurred())
	return n
}
