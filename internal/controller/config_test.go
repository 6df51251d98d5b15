package controller

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

// templateConfigHash is the config hash on the pod template of the Deployment of the MyApp web.
func templateConfigHash(ns string) func(Gomega) string {
	return func(g Gomega) string {
		return getDeployment(ns, "web")(g).Spec.Template.Annotations[desired.AnnotationConfigHash]
	}
}

// editSettings changes the ConfigMap settings as its user would.
func editSettings(ns string, mutate func(*corev1.ConfigMap)) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		cm := getConfigMap(ns, "settings")(g)
		mutate(cm)
		g.Expect(k8s.Update(suiteCtx, cm)).To(Succeed())
	}).Should(Succeed())
}

var _ = Describe("A MyApp that rolls out on config changes", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	// settings creates the ConfigMap settings with data, and levels, which the MyApp below
	// takes a key of, unless it exists.
	settings := func(data map[string]string) {
		Expect(k8s.Create(suiteCtx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: data})).To(Succeed())
		levels := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "levels"}, Data: map[string]string{"level": "info"}}
		Expect(client.IgnoreAlreadyExists(k8s.Create(suiteCtx, levels))).To(Succeed())
	}
	referencing := func(rollout *bool) func(*examplev1.MyApp) {
		return func(a *examplev1.MyApp) {
			a.Spec.RolloutOnConfigChange = rollout
			a.Spec.EnvFrom = []examplev1.EnvFromSource{{ConfigMapRef: &examplev1.EnvFromReference{Name: "settings"}}}
			a.Spec.Env = []examplev1.EnvVar{{Name: "LEVEL",
				ValueFrom: &examplev1.EnvVarSource{ConfigMapKeyRef: &examplev1.KeySelector{Name: "levels", Key: "level"}}}}
			a.Spec.Volumes = []examplev1.Volume{{Name: "conf", ConfigMap: &examplev1.ConfigMapVolumeSource{Name: "files", Optional: ptrTo(true)}}}
			a.Spec.VolumeMounts = []examplev1.VolumeMount{{Name: "conf", MountPath: "/etc/conf"}}
		}
	}

	It("rolls its pods out when the data of a ConfigMap it references changes, and only then", func() {
		By("a manager without resyncs: what it learns, it learns from its watches")
		startQuietManager()
		settings(map[string]string{"MODE": "one"})
		createMyApp(ns, "web", func(a *examplev1.MyApp) {
			referencing(ptrTo(true))(a)
			a.Labels = map[string]string{unwatchedLabel: "quiet"}
		})
		var first string
		Eventually(func(g Gomega) { first = templateConfigHash(ns)(g); g.Expect(first).To(HaveLen(16)) }).Should(Succeed())

		By("a change of the data: a new hash on the template")
		editSettings(ns, func(cm *corev1.ConfigMap) { cm.Data["MODE"] = "two" })
		var second string
		Eventually(func(g Gomega) { second = templateConfigHash(ns)(g); g.Expect(second).NotTo(Equal(first)) }).Should(Succeed())

		By("a change of the ConfigMap's labels only: the template stays")
		editSettings(ns, func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{"team": "web"} })
		Consistently(templateConfigHash(ns), 2*resyncPeriod, 200*time.Millisecond).Should(Equal(second))

		By("the optional ConfigMap of a volume, missing until now, created: a new hash, since the pods see it")
		Expect(k8s.Create(suiteCtx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "files"},
			Data: map[string]string{"app.conf": "level=info"}})).To(Succeed())
		var third string
		Eventually(func(g Gomega) { third = templateConfigHash(ns)(g); g.Expect(third).NotTo(BeElementOf(first, second)) }).Should(Succeed())

		By("a change, then the data back as it was: the hash it had with that data")
		editSettings(ns, func(cm *corev1.ConfigMap) { cm.Data["MODE"] = "three" })
		Eventually(templateConfigHash(ns)).ShouldNot(Equal(third))
		editSettings(ns, func(cm *corev1.ConfigMap) { cm.Data["MODE"] = "two" })
		Eventually(templateConfigHash(ns)).Should(Equal(third))

		By("a ConfigMap of the namespace it does not reference changes: nothing")
		now := templateConfigHash(ns)(Default)
		Expect(k8s.Create(suiteCtx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other"}})).To(Succeed())
		Consistently(templateConfigHash(ns), 2*resyncPeriod, 200*time.Millisecond).Should(Equal(now))
	})

	It("rolls nothing while a ConfigMap the pods need is deleted to be created again", func() {
		settings(map[string]string{"MODE": "one"})
		createMyApp(ns, "web", referencing(ptrTo(true)))
		var before string
		Eventually(func(g Gomega) { before = templateConfigHash(ns)(g); g.Expect(before).NotTo(BeEmpty()) }).Should(Succeed())

		By("the required ConfigMap deleted: the template keeps its hash")
		Expect(k8s.Delete(suiteCtx, getConfigMap(ns, "settings")(Default))).To(Succeed())
		Consistently(templateConfigHash(ns), 2*resyncPeriod, 200*time.Millisecond).Should(Equal(before))

		By("created again with the same data: still the same hash")
		settings(map[string]string{"MODE": "one"})
		Consistently(templateConfigHash(ns), 2*resyncPeriod, 200*time.Millisecond).Should(Equal(before))

		By("created again with other data: a new hash")
		editSettings(ns, func(cm *corev1.ConfigMap) { cm.Data["MODE"] = "two" })
		Eventually(templateConfigHash(ns)).ShouldNot(Equal(before))
	})

	It("reads a changed ConfigMap once, and nothing at steady state", func() {
		settings(map[string]string{"MODE": "one"})
		createMyApp(ns, "web", referencing(ptrTo(true)))
		Eventually(templateConfigHash(ns)).ShouldNot(BeEmpty())
		rollOut(ns, "web")
		Eventually(func(g Gomega) {
			m := managerRequests.count()
			g.Consistently(func() []string { return managerRequests.since(m, ns) }, 2*resyncPeriod, 200*time.Millisecond).Should(BeEmpty())
		}).WithTimeout(30 * time.Second).Should(Succeed())

		By("one change: one GET of that ConfigMap")
		before := templateConfigHash(ns)(Default)
		n := managerRequests.count()
		editSettings(ns, func(cm *corev1.ConfigMap) { cm.Data["MODE"] = "two" })
		Eventually(templateConfigHash(ns)).ShouldNot(Equal(before))
		rollOut(ns, "web")
		Eventually(func(g Gomega) {
			m := managerRequests.count()
			g.Consistently(func() []string { return managerRequests.since(m, ns) }, 2*resyncPeriod, 200*time.Millisecond).Should(BeEmpty())
		}).WithTimeout(30 * time.Second).Should(Succeed())
		var reads []string
		for _, r := range managerRequests.since(n, ns) {
			if strings.Contains(r, "/configmaps") {
				reads = append(reads, r)
			}
		}
		Expect(reads).To(ConsistOf(HavePrefix("GET /api/v1/namespaces/" + ns + "/configmaps/settings")))
	})

	It("puts nothing on the template when not asked, so that a ConfigMap's change rolls nothing", func() {
		settings(map[string]string{"MODE": "one"})
		app := createMyApp(ns, "web", referencing(nil))
		Eventually(getDeployment(ns, "web")).ShouldNot(BeNil())
		generation := getDeployment(ns, "web")(Default).Generation
		editSettings(ns, func(cm *corev1.ConfigMap) { cm.Data["MODE"] = "two" })
		requestReconcile(app, "after-config-change")
		Consistently(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			g.Expect(d.Spec.Template.Annotations).NotTo(HaveKey(desired.AnnotationConfigHash))
			g.Expect(d.Generation).To(Equal(generation))
		}, 2*resyncPeriod, 200*time.Millisecond).Should(Succeed())

		By("turned on, then off: the hash comes, then goes")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.RolloutOnConfigChange = ptrTo(true) })
		Eventually(templateConfigHash(ns)).ShouldNot(BeEmpty())
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.RolloutOnConfigChange = ptrTo(false) })
		Eventually(templateConfigHash(ns)).Should(BeEmpty())
	})
})
