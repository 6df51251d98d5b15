package olmv1

import (
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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
	"github.com/example/myapp-operator/test/olmv1env"
)

const (
	installNS      = "myapp-operator-system"
	operatorSA     = "myapp-operator-controller-manager"
	operatorDeploy = "myapp-operator-controller-manager"
	appNS          = "team-a" // any namespace: the operator is installed for all of them
)

var samples = filepath.Join(repoRoot, "config", "olmv1")

var _ = Describe("The operator installed through OLM v1", Ordered, func() {
	It("installs a release on the old pod selector from the ClusterCatalog, upgrades to the previous release and then to the current version, each once the CRD preflight is relaxed", func() {
		By("applying config/olmv1 as a user would: the ClusterCatalog and the installer account")
		olm.ApplyFile(filepath.Join(samples, "namespace.yaml"), nil)
		olm.ApplyFile(filepath.Join(samples, "installer-rbac.yaml"), nil)
		olm.ApplyFile(filepath.Join(samples, "clustercatalog.yaml"), nil)
		started := time.Now()
		Eventually(func(g Gomega) {
			cat := olm.Get(g, "ClusterCatalog", "myapp-operator-catalog")
			g.Expect(olmv1env.Condition(cat, "Serving")).To(HaveField("Status", metav1.ConditionTrue), "%v", olmv1env.Conditions(cat))
		}).Should(Succeed())
		AddReportEntry("ClusterCatalog serving", time.Since(started).Round(100*time.Millisecond).String())

		By("installing 0.2.0: the sample ClusterExtension, pinned to 0.2.0")
		started = time.Now()
		olm.ApplyFile(filepath.Join(samples, "clusterextension.yaml"), func(u *unstructured.Unstructured) {
			Expect(unstructured.SetNestedField(u.Object, "0.2.0", "spec", "source", "catalog", "version")).To(Succeed())
		})
		olm.ExpectInstalled("0.2.0")
		expectOperatorDeployment("example.com/myapp-operator:v0.2.0")
		AddReportEntry("OLM v1 install of 0.2.0", time.Since(started).Round(100*time.Millisecond).String())

		By("running 0.2.0's manager as the operator's service account: a MyApp in another namespace gets Ready")
		Expect(olm.K8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}})).To(Succeed())
		manager := runManagerAs("manager-0.2.0", env["E2E_MANAGER_0_2_0"])
		Expect(olm.K8s.Create(ctx, &examplev1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "web"},
			Spec:       examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(int32(2))},
		})).To(Succeed())
		expectReady(2)

		// OLM v1.2.0's preflight (kapp's crdupgradesafety) names the quantities: the string
		// fields cpu and memory of 0.2.0 are "removed", being int-or-string entries of a map
		// now, and it cannot diff the rest of the schema. OLM v1.11 (crdify) reports the
		// same fields as a type change from "string"; make crd-upgrade-check shows that one.
		By("upgrading to 0.3.0: OLM v1's default CRD preflight refuses the quantity change")
		olm.PatchExtension(`{"spec":{"source":{"catalog":{"version":"0.3.0"}}}}`)
		Eventually(func(g Gomega) {
			ext := olm.Get(g, "ClusterExtension", olmv1env.Extension)
			progressing := olmv1env.Condition(ext, "Progressing")
			g.Expect(progressing).NotTo(BeNil())
			g.Expect(progressing.Reason).To(Equal("Retrying"))
			g.Expect(progressing.Message).To(ContainSubstring("myapps.example.com"))
			for _, q := range []string{"limits.cpu", "limits.memory", "requests.cpu", "requests.memory"} {
				g.Expect(progressing.Message).To(ContainSubstring(`"NoExistingFieldRemoved" validation failed`))
				g.Expect(progressing.Message).To(ContainSubstring("field/^.spec.resources." + q + " may not be removed"))
			}
		}).Should(Succeed())
		Expect(olm.InstalledVersion()).To(Equal("0.2.0"), "the refused upgrade must leave 0.2.0 installed")
		ext := olm.Get(Default, "ClusterExtension", olmv1env.Extension)
		AddReportEntry("OLM v1 preflight message", olmv1env.Condition(ext, "Progressing").Message)

		By("upgrading with spec.install.preflight.crdUpgradeSafety.enforcement: None, the documented step")
		started = time.Now()
		olm.PatchExtension(`{"spec":{"install":{"preflight":{"crdUpgradeSafety":{"enforcement":"None"}}}}}`)
		olm.ExpectInstalled("0.3.0")
		expectOperatorDeployment("example.com/myapp-operator:v0.3.0")
		AddReportEntry("OLM v1 upgrade to 0.3.0", time.Since(started).Round(100*time.Millisecond).String())
		expectReady(2) // the 0.2.0 MyApp, stored before, is still served and valid

		By("running 0.3.0's manager with 0.3.0's permissions: a 0.3.0 spec (int quantity, budget) gets Ready")
		manager.Signal(os.Interrupt)
		Eventually(manager.Exited()).Should(BeClosed())
		manager = runManagerAs("manager-0.3.0", env["E2E_MANAGER_0_3_0"])
		app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "web"}}
		Expect(olm.K8s.Patch(ctx, app, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"resources":{"limits":{"cpu":1}},"podDisruptionBudget":{"minAvailable":1}}}`)))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(olm.K8s.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "web"}, &policyv1.PodDisruptionBudget{})).To(Succeed())
		}).Should(Succeed())
		expectReady(2)
		expectNoRefusal(manager)

		// The current version refuses, at admission, MyApps that could never run (probe ports
		// named other than http, every spelling of a zero surge and unavailability, no escalation
		// beside privilege): changed CEL rules, which the preflight cannot judge.
		By("upgrading to the current version with the preflight back at its default: refused for the stricter CEL rules")
		olm.PatchExtension(`{"spec":{"install":null,"source":{"catalog":{"version":"` + currentVersion + `"}}}}`)
		Eventually(func(g Gomega) {
			progressing := olmv1env.Condition(olm.Get(g, "ClusterExtension", olmv1env.Extension), "Progressing")
			g.Expect(progressing).NotTo(BeNil())
			g.Expect(progressing.Reason).To(Equal("Retrying"))
			g.Expect(progressing.Message).To(ContainSubstring("myapps.example.com"))
			// v1.2.0's preflight (kapp's) names the fields whose change no check judges.
			g.Expect(progressing.Message).To(ContainSubstring(`field "^.spec.securityContext" has unknown change`))
			g.Expect(progressing.Message).To(ContainSubstring(`field "^.spec.rollingUpdate" has unknown change`))
		}).Should(Succeed())
		Expect(olm.InstalledVersion()).To(Equal("0.3.0"), "the refused upgrade must leave 0.3.0 installed")

		By("upgrading with the documented step")
		started = time.Now()
		olm.PatchExtension(`{"spec":{"install":{"preflight":{"crdUpgradeSafety":{"enforcement":"None"}}}}}`)
		olm.ExpectInstalled(currentVersion)
		expectOperatorDeployment("example.com/myapp-operator:v" + currentVersion)
		AddReportEntry("OLM v1 upgrade from 0.3.0", time.Since(started).Round(100*time.Millisecond).String())

		By("running the current manager with the current permissions: the MyApp stays Ready")
		manager.Signal(os.Interrupt)
		Eventually(manager.Exited()).Should(BeClosed())
		manager = runManagerAs("manager-current", env["E2E_MANAGER"])
		expectReady(2)
		Expect(olm.K8s.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3}}`)))).To(Succeed())
		expectReady(3)
		expectNoRefusal(manager)
	})
})

// currentVersion is the version of bundle/, the channel's head.
const currentVersion = "0.3.2"

// expectNoRefusal fails if the manager was ever refused a request (its RBAC falls short).
func expectNoRefusal(manager *testutil.Process) {
	log, err := os.ReadFile(manager.Log)
	Expect(err).NotTo(HaveOccurred())
	Expect(strings.ToLower(string(log))).NotTo(ContainSubstring("forbidden"), "see %s", manager.Log)
}

// expectOperatorDeployment checks the Deployment OLM v1 made from the CSV: the version's
// image, the operator's service account, and all namespaces as its targets.
func expectOperatorDeployment(image string) {
	Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(olm.K8s.Get(ctx, client.ObjectKey{Namespace: installNS, Name: operatorDeploy}, d)).To(Succeed())
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
		g.Expect(olm.K8s.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "web"}, app)).To(Succeed())
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
	cfg, err := clientcmd.LoadFromFile(olm.Kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = "system:serviceaccount:" + installNS + ":" + operatorSA
		auth.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + installNS, "system:authenticated"}
	}
	impersonating := filepath.Join(olm.Work, name+".kubeconfig")
	Expect(clientcmd.WriteToFile(*cfg, impersonating)).To(Succeed())
	metrics, err := testutil.FreeLoopbackAddr()
	Expect(err).NotTo(HaveOccurred())
	return olm.Run(name, bin, []string{"KUBECONFIG=" + impersonating, "WATCH_NAMESPACE="},
		"--leader-elect", "--leader-election-namespace="+installNS,
		"--metrics-bind-address="+metrics, "--health-probe-bind-address=0")
}

func ptr[T any](v T) *T { return &v }
