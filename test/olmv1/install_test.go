package olmv1

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

const (
	extension      = "myapp-operator" // config/olmv1/clusterextension.yaml
	installNS      = "myapp-operator-system"
	operatorSA     = "myapp-operator-controller-manager"
	operatorDeploy = "myapp-operator-controller-manager"
	appNS          = "team-a" // any namespace: the operator is installed for all of them
)

var samples = filepath.Join(repoRoot, "config", "olmv1")

var _ = Describe("The operator installed through OLM v1", Ordered, func() {
	It("installs 0.2.0 from the ClusterCatalog, then upgrades to 0.3.0 once the CRD preflight is relaxed", func() {
		By("applying config/olmv1 as a user would: the ClusterCatalog and the installer account")
		applyFile(filepath.Join(samples, "namespace.yaml"), nil)
		applyFile(filepath.Join(samples, "installer-rbac.yaml"), nil)
		applyFile(filepath.Join(samples, "clustercatalog.yaml"), nil)
		started := time.Now()
		Eventually(func(g Gomega) {
			cat := get(g, "ClusterCatalog", "myapp-operator-catalog")
			g.Expect(condition(cat, "Serving")).To(HaveField("Status", metav1.ConditionTrue), "%v", conditions(cat))
		}).Should(Succeed())
		AddReportEntry("ClusterCatalog serving", time.Since(started).Round(100*time.Millisecond).String())

		By("installing 0.2.0: the sample ClusterExtension, pinned to 0.2.0")
		started = time.Now()
		applyFile(filepath.Join(samples, "clusterextension.yaml"), func(u *unstructured.Unstructured) {
			Expect(unstructured.SetNestedField(u.Object, "0.2.0", "spec", "source", "catalog", "version")).To(Succeed())
		})
		expectInstalled("0.2.0")
		expectOperatorDeployment("example.com/myapp-operator:v0.2.0")
		AddReportEntry("OLM v1 install of 0.2.0", time.Since(started).Round(100*time.Millisecond).String())

		By("running 0.2.0's manager as the operator's service account: a MyApp in another namespace gets Ready")
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}})).To(Succeed())
		manager := runManagerAs("manager-0.2.0", env["E2E_MANAGER_0_2_0"])
		Expect(k8s.Create(ctx, &examplev1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "web"},
			Spec:       examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(int32(2))},
		})).To(Succeed())
		expectReady(2)

		// OLM v1.2.0's preflight (kapp's crdupgradesafety) names the quantities: the string
		// fields cpu and memory of 0.2.0 are "removed", being int-or-string entries of a map
		// now, and it cannot diff the rest of the schema. OLM v1.11 (crdify) reports the
		// same fields as a type change from "string"; make crd-upgrade-check shows that one.
		By("upgrading to 0.3.0: OLM v1's default CRD preflight refuses the quantity change")
		patchExtension(`{"spec":{"source":{"catalog":{"version":"0.3.0"}}}}`)
		Eventually(func(g Gomega) {
			ext := get(g, "ClusterExtension", extension)
			progressing := condition(ext, "Progressing")
			g.Expect(progressing).NotTo(BeNil())
			g.Expect(progressing.Reason).To(Equal("Retrying"))
			g.Expect(progressing.Message).To(ContainSubstring("myapps.example.com"))
			for _, q := range []string{"limits.cpu", "limits.memory", "requests.cpu", "requests.memory"} {
				g.Expect(progressing.Message).To(ContainSubstring(`"NoExistingFieldRemoved" validation failed`))
				g.Expect(progressing.Message).To(ContainSubstring("field/^.spec.resources." + q + " may not be removed"))
			}
		}).Should(Succeed())
		Expect(installedVersion()).To(Equal("0.2.0"), "the refused upgrade must leave 0.2.0 installed")
		ext := &unstructured.Unstructured{}
		ext.SetGroupVersionKind(gvk("ClusterExtension"))
		Expect(k8s.Get(ctx, client.ObjectKey{Name: extension}, ext)).To(Succeed())
		AddReportEntry("OLM v1 preflight message", condition(ext, "Progressing").Message)

		By("upgrading with spec.install.preflight.crdUpgradeSafety.enforcement: None, the documented step")
		started = time.Now()
		patchExtension(`{"spec":{"install":{"preflight":{"crdUpgradeSafety":{"enforcement":"None"}}}}}`)
		expectInstalled("0.3.0")
		expectOperatorDeployment("example.com/myapp-operator:v0.3.0")
		AddReportEntry("OLM v1 upgrade to 0.3.0", time.Since(started).Round(100*time.Millisecond).String())
		expectReady(2) // the 0.2.0 MyApp, stored before, is still served and valid

		By("running 0.3.0's manager with 0.3.0's permissions: a 0.3.0 spec (int quantity, budget) gets Ready")
		manager.Signal(os.Interrupt)
		Eventually(manager.Exited()).Should(BeClosed())
		manager = runManagerAs("manager-0.3.0", env["E2E_MANAGER"])
		app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "web"}}
		Expect(k8s.Patch(ctx, app, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"resources":{"limits":{"cpu":1}},"podDisruptionBudget":{"minAvailable":1}}}`)))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "web"}, &policyv1.PodDisruptionBudget{})).To(Succeed())
		}).Should(Succeed())
		expectReady(2)
		log, err := os.ReadFile(manager.Log)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.ToLower(string(log))).NotTo(ContainSubstring("forbidden"))
	})
})

func gvk(kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "olm.operatorframework.io", Version: "v1", Kind: kind}
}

// get reads an OLM v1 object (cluster-scoped) as unstructured.
func get(g Gomega, kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk(kind))
	g.Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, u)).To(Succeed())
	return u
}

func conditions(u *unstructured.Unstructured) []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []metav1.Condition
	for _, r := range raw {
		m, _ := r.(map[string]any)
		c := metav1.Condition{}
		c.Type, _ = m["type"].(string)
		s, _ := m["status"].(string)
		c.Status = metav1.ConditionStatus(s)
		c.Reason, _ = m["reason"].(string)
		c.Message, _ = m["message"].(string)
		out = append(out, c)
	}
	return out
}

func condition(u *unstructured.Unstructured, t string) *metav1.Condition {
	return meta.FindStatusCondition(conditions(u), t)
}

func installedVersion() string {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk("ClusterExtension"))
	Expect(k8s.Get(ctx, client.ObjectKey{Name: extension}, u)).To(Succeed())
	v, _, _ := unstructured.NestedString(u.Object, "status", "install", "bundle", "version")
	return v
}

func expectInstalled(version string) {
	Eventually(func(g Gomega) {
		ext := get(g, "ClusterExtension", extension)
		installed := condition(ext, "Installed")
		g.Expect(installed).NotTo(BeNil(), "%v", conditions(ext))
		g.Expect(installed.Status).To(Equal(metav1.ConditionTrue), "%v", conditions(ext))
		v, _, _ := unstructured.NestedString(ext.Object, "status", "install", "bundle", "version")
		g.Expect(v).To(Equal(version), "%v", conditions(ext))
	}).Should(Succeed())
}

func patchExtension(patch string) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk("ClusterExtension"))
	u.SetName(extension)
	Expect(k8s.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// expectOperatorDeployment checks the Deployment OLM v1 made from the CSV: the version's
// image, the operator's service account, and all namespaces as its targets.
func expectOperatorDeployment(image string) {
	Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: installNS, Name: operatorDeploy}, d)).To(Succeed())
		g.Expect(d.Spec.Template.Spec.ServiceAccountName).To(Equal(operatorSA))
		i := slices.IndexFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == "manager" })
		g.Expect(i).NotTo(Equal(-1))
		g.Expect(d.Spec.Template.Spec.Containers[i].Image).To(Equal(image))
		g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", ""))
		g.Expect(d.Status.AvailableReplicas).To(BeNumerically(">=", 1))
	}).Should(Succeed())
}

func expectReady(replicas int32) {
	Eventually(func(g Gomega) {
		app := &examplev1.MyApp{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "web"}, app)).To(Succeed())
		ready := meta.FindStatusCondition(app.Status.Conditions, examplev1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%s: %s", ready.Reason, ready.Message)
		g.Expect(ready.ObservedGeneration).To(Equal(app.Generation))
		g.Expect(app.Status.ReadyReplicas).To(Equal(replicas))
	}).Should(Succeed())
}

// runManagerAs starts a manager binary against the cluster as the operator's service account
// (impersonated) watching all namespaces, as OLM v1's Deployment would run it: the simulated
// nodes run no containers.
func runManagerAs(name, bin string) *testutil.Process {
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = "system:serviceaccount:" + installNS + ":" + operatorSA
		auth.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + installNS, "system:authenticated"}
	}
	impersonating := filepath.Join(work, name+".kubeconfig")
	Expect(clientcmd.WriteToFile(*cfg, impersonating)).To(Succeed())
	metrics, err := testutil.FreeLoopbackAddr()
	Expect(err).NotTo(HaveOccurred())
	return run(name, bin, []string{"KUBECONFIG=" + impersonating, "WATCH_NAMESPACE="},
		"--leader-elect", "--leader-election-namespace="+installNS,
		"--metrics-bind-address="+metrics, "--health-probe-bind-address=0")
}

func ptr[T any](v T) *T { return &v }

// applyFile creates every object of a YAML file (after mutate, if given), leaving objects that
// exist as they are.
func applyFile(path string, mutate func(*unstructured.Unstructured)) {
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	applyObjects(data, mutate)
}

func applyYAML(doc string) { applyObjects([]byte(doc), nil) }

func applyObjects(data []byte, mutate func(*unstructured.Unstructured)) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err == io.EOF {
			return
		} else {
			Expect(err).NotTo(HaveOccurred())
		}
		if len(u.Object) == 0 {
			continue
		}
		if mutate != nil {
			mutate(u)
		}
		Eventually(func() error {
			err := k8s.Create(ctx, u.DeepCopy())
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		}).Should(Succeed(), "creating %s %s", u.GetKind(), u.GetName())
	}
}
