package controller

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

var getConfigMap = get[corev1.ConfigMap]

// filesHash is the hash the operator names the files ConfigMap of these files by.
func filesHash(files ...examplev1.File) string {
	f, err := desired.FilesOf(&examplev1.MyApp{Spec: examplev1.MyAppSpec{Files: files}})
	Expect(err).NotTo(HaveOccurred())
	return f.Hash
}

// mountedFilesHash is the hash of the files ConfigMap the Deployment's pod template mounts,
// after checking that the template mounts that ConfigMap.
func mountedFilesHash(g Gomega, d *appsv1.Deployment) string {
	hash := d.Spec.Template.Labels[desired.LabelFiles]
	g.Expect(d.Spec.Template.Spec.Volumes).To(ContainElement(HaveField("VolumeSource.ConfigMap.LocalObjectReference.Name", "web-files-"+hash)))
	return hash
}

var _ = Describe("A MyApp's files", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	configFile := func(content string) examplev1.File {
		return examplev1.File{Path: "/etc/app/config.yaml", Content: content}
	}
	gone := func(name string) func(Gomega) {
		return func(g Gomega) {
			err := k8s.Get(suiteCtx, key(ns, name), &corev1.ConfigMap{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "ConfigMap %s: %v", name, err)
		}
	}
	settled := func(g Gomega) {
		a := getMyApp(ns, "web")(g)
		g.Expect(a.Status.ObservedGeneration).To(Equal(a.Generation))
	}

	It("are written into an immutable ConfigMap it owns, kept while a ReplicaSet mounts it", func() {
		v1, v2 := filesHash(configFile("level: info\n")), filesHash(configFile("level: debug\n"))
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.Files = []examplev1.File{configFile("level: info\n")} })

		By("the ConfigMap, named by the content, and the template that mounts it")
		Eventually(func(g Gomega) {
			g.Expect(mountedFilesHash(g, getDeployment(ns, "web")(g))).To(Equal(v1))
			cm := getConfigMap(ns, "web-files-"+v1)(g)
			g.Expect(cm.Immutable).To(HaveValue(BeTrue()))
			g.Expect(cm.Data).To(Equal(map[string]string{"etc_app_config.yaml": "level: info\n"}))
			g.Expect(metav1.IsControlledBy(cm, getMyApp(ns, "web")(g))).To(BeTrue())
		}).Should(Succeed())
		currentReplicaSet(ns, "web")

		By("new content: a new ConfigMap and template; the old one stays while its ReplicaSet is there")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Files = []examplev1.File{configFile("level: debug\n")} })
		Eventually(func(g Gomega) {
			g.Expect(mountedFilesHash(g, getDeployment(ns, "web")(g))).To(Equal(v2))
			settled(g)
		}).Should(Succeed())
		Expect(getConfigMap(ns, "web-files-"+v2)(Default).Data).To(HaveKeyWithValue("etc_app_config.yaml", "level: debug\n"))
		Expect(getConfigMap(ns, "web-files-"+v1)(Default)).NotTo(BeNil(), "the ReplicaSet of the first template mounts it")
		Eventually(func(g Gomega) []corev1.Event { return eventsOf(g, app) }).Should(ContainElement(
			HaveField("Message", ContainSubstring("Created ConfigMap web-files-"+v2))))
		second := currentReplicaSet(ns, "web")

		By("files dropped from the spec: the template mounts none, and the ConfigMaps wait for their ReplicaSets")
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Files = nil })
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			g.Expect(d.Spec.Template.Labels).NotTo(HaveKey(desired.LabelFiles))
			g.Expect(d.Spec.Template.Spec.Volumes).To(BeEmpty())
			settled(g)
		}).Should(Succeed())
		Expect(getConfigMap(ns, "web-files-"+v2)(Default)).NotTo(BeNil())

		By("the ReplicaSets pruned, as the deployment controller does past revisionHistoryLimit: their ConfigMaps go")
		Expect(k8s.Delete(suiteCtx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-" + second}})).To(Succeed())
		Eventually(gone("web-files-" + v2)).WithTimeout(time.Minute).Should(Succeed())
		Expect(getConfigMap(ns, "web-files-"+v1)(Default)).NotTo(BeNil(), "its ReplicaSet is still there")
		sets := &appsv1.ReplicaSetList{}
		Expect(k8s.List(suiteCtx, sets)).To(Succeed())
		for i := range sets.Items {
			if sets.Items[i].Namespace == ns {
				Expect(k8s.Delete(suiteCtx, &sets.Items[i])).To(Succeed())
			}
		}
		Eventually(gone("web-files-" + v1)).WithTimeout(time.Minute).Should(Succeed())
	})

	It("cost a new MyApp one more child: one read and one create of its ConfigMap, and nothing at steady state", func() {
		hash := filesHash(configFile("a"))
		n := managerRequests.count()
		createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.Files = []examplev1.File{configFile("a")} })
		Eventually(func(g Gomega) {
			settled(g)
			g.Expect(mountedFilesHash(g, getDeployment(ns, "web")(g))).To(Equal(hash))
		}).Should(Succeed())

		By("counting the requests for the ConfigMap: a GET answered 404, then the apply that creates it")
		var reads, writes, others []string
		for _, r := range managerRequests.since(n, ns) {
			if !strings.Contains(r, "/configmaps") {
				continue
			}
			switch {
			case strings.HasPrefix(r, "GET ") && strings.Contains(r, "/configmaps/web-files-"+hash+"?"):
				reads = append(reads, r)
			case strings.HasPrefix(r, "PATCH ") && strings.Contains(r, "/configmaps/web-files-"+hash+"?"):
				writes = append(writes, r)
			default:
				others = append(others, r)
			}
		}
		Expect(writes).To(HaveLen(1))
		Expect(reads).To(HaveLen(1))
		Expect(others).To(BeEmpty(), "no list, watch or delete of ConfigMaps in the namespace")

		By("then nothing: the cache answers for the ConfigMap")
		rollOut(ns, "web")
		Eventually(func(g Gomega) {
			m := managerRequests.count()
			g.Consistently(func() []string { return managerRequests.since(m, ns) }, 2*resyncPeriod, 200*time.Millisecond).Should(BeEmpty())
		}).WithTimeout(30 * time.Second).Should(Succeed())
	})

	It("puts back a files ConfigMap someone deleted", func() {
		hash := filesHash(configFile("a"))
		createMyApp(ns, "web", func(a *examplev1.MyApp) { a.Spec.Files = []examplev1.File{configFile("a")} })
		first := getConfigMap(ns, "web-files-"+hash)
		Eventually(first).ShouldNot(BeNil())
		uid := first(Default).UID
		Expect(k8s.Delete(suiteCtx, first(Default))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(getConfigMap(ns, "web-files-"+hash)(g).UID).NotTo(Equal(uid))
		}).Should(Succeed())
	})

	It("leaves alone a ConfigMap of the files' name it does not own, and rolls out nothing", func() {
		hash := filesHash(configFile("a"))
		foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-files-" + hash},
			Data: map[string]string{"etc_app_config.yaml": "someone else's"}}
		Expect(k8s.Create(suiteCtx, foreign)).To(Succeed())
		app := createMyApp(ns, "web", nil)
		Eventually(getDeployment(ns, "web")).ShouldNot(BeNil())
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Files = []examplev1.File{configFile("a")} })
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			g.Expect(a.Status.ObservedGeneration).To(Equal(a.Generation))
			stalled := condition(g, a, examplev1.ConditionStalled)
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonChildNotOwned))
			g.Expect(stalled.Message).To(ContainSubstring("ConfigMap web-files-" + hash + " exists and is not owned by this MyApp"))
		}).Should(Succeed())
		Expect(getDeployment(ns, "web")(Default).Spec.Template.Labels).NotTo(HaveKey(desired.LabelFiles),
			"the running template keeps running until its files can be written")
		Expect(getConfigMap(ns, "web-files-"+hash)(Default).Data).To(Equal(foreign.Data))

		By("once it is gone, the files are written and mounted")
		Expect(k8s.Delete(suiteCtx, foreign)).To(Succeed())
		requestReconcile(app, "after-foreign-configmap")
		Eventually(func(g Gomega) {
			g.Expect(mountedFilesHash(g, getDeployment(ns, "web")(g))).To(Equal(hash))
		}).Should(Succeed())
	})
})
