package olmv1

import (
	"fmt"
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
	"github.com/example/myapp-operator/test/heldrollback"
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
	It("installs a release on the old pod selector from the ClusterCatalog, upgrades it release by release to the current version, each once the CRD preflight is relaxed, the last replacing no pod", func() {
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
		message := expectPreflightRefuses("0.3.0", "0.2.0", `"NoExistingFieldRemoved" validation failed`,
			"field/^.spec.resources.limits.cpu may not be removed", "field/^.spec.resources.limits.memory may not be removed",
			"field/^.spec.resources.requests.cpu may not be removed", "field/^.spec.resources.requests.memory may not be removed")
		AddReportEntry("OLM v1 preflight message", message)

		By("upgrading with spec.install.preflight.crdUpgradeSafety.enforcement: None, the documented step")
		AddReportEntry("OLM v1 upgrade to 0.3.0", upgradeWithPreflightRelaxed("0.3.0"))
		expectReady(2) // the 0.2.0 MyApp, stored before, is still served and valid

		By("running 0.3.0's manager with 0.3.0's permissions: a 0.3.0 spec (int quantity, budget) gets Ready")
		manager = restartManager(manager, "manager-0.3.0", env["E2E_MANAGER_0_3_0"])
		app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "web"}}
		Expect(olm.K8s.Patch(ctx, app, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"resources":{"limits":{"cpu":1}},"podDisruptionBudget":{"minAvailable":1}}}`)))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(olm.K8s.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "web"}, &policyv1.PodDisruptionBudget{})).To(Succeed())
		}).Should(Succeed())
		expectReady(2)
		expectNoRefusal(manager)

		// 0.3.1 refuses, at admission, MyApps that could never run (probe ports named other than
		// http, every spelling of a zero surge and unavailability, no escalation beside
		// privilege): changed CEL rules, which v1.2.0's preflight names as unknown changes.
		By("upgrading to 0.3.1 with the preflight back at its default: refused for the stricter CEL rules")
		expectPreflightRefuses("0.3.1", "0.3.0",
			`field "^.spec.securityContext" has unknown change`, `field "^.spec.rollingUpdate" has unknown change`)

		By("upgrading with the documented step")
		AddReportEntry("OLM v1 upgrade to 0.3.1", upgradeWithPreflightRelaxed("0.3.1"))
		expectReady(2)

		// 0.3.0 set allowPrivilegeEscalation: false beside privileged: true, a pod the API
		// server refuses; 0.3.1 leaves it out, so this spec gets Ready only with 0.3.1's manager.
		By("running 0.3.1's manager with 0.3.1's permissions: a privileged MyApp, refused under 0.3.0, gets Ready")
		manager = restartManager(manager, "manager-0.3.1", env["E2E_MANAGER_0_3_1"])
		Expect(olm.K8s.Patch(ctx, app, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"securityContext":{"privileged":true}}}`)))).To(Succeed())
		expectReady(2)
		expectNoRefusal(manager)
		var pods []string
		Eventually(func(g Gomega) {
			pods = podUIDs(g)
			g.Expect(pods).To(HaveLen(2), "the pods of the privileged template only")
		}).Should(Succeed())

		// upgradeKeeping upgrades to version: the default preflight first refuses it with each
		// of the refusals, then the documented step installs it. It then runs that version's
		// manager with that version's permissions and scales the MyApp to replicas: the MyApp
		// gets Ready, and none of its pods of before is replaced (a scale proves a manager has
		// reconciled the MyApp and kept the pod template: a template it changed would have
		// replaced the pods before the MyApp got Ready), and a rollback held is kept.
		upgradeKeeping := func(version, from, why, managerName, managerBin string, replicas int32, held *heldrollback.Held, refusals ...string) {
			By("upgrading to " + version + " with the preflight back at its default: refused for " + why)
			expectPreflightRefuses(version, from, refusals...)
			By("upgrading with the documented step")
			AddReportEntry("OLM v1 upgrade from "+from+" to "+version, upgradeWithPreflightRelaxed(version))
			expectReady(replicas - 1)
			By("running " + managerName + " with its version's permissions: the MyApp stays Ready, its pods are not replaced")
			manager = restartManager(manager, managerName, managerBin)
			expectReady(replicas - 1)
			Expect(olm.K8s.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))))).To(Succeed())
			expectReady(replicas)
			Expect(podUIDs(Default)).To(ContainElements(pods), "the upgrade of the operator replaced an app's pod")
			if held != nil {
				held.ExpectKept(ctx)
			}
			expectNoRefusal(manager)
			Eventually(func(g Gomega) {
				pods = podUIDs(g)
				g.Expect(pods).To(HaveLen(int(replicas)))
			}).Should(Succeed())
		}

		// 0.3.2 bounds every integer to what the operator's types hold, and mirrors
		// Kubernetes' validation of the pod template in CEL rules
		// (hack/crdupgrade/from-0.3.1.yaml): v1.2.0's preflight refuses each new maximum (which
		// it prints as a float) and names each changed rule as an unknown change.
		upgradeKeeping("0.3.2", "0.3.1", "the bounds and the stricter CEL rules", "manager-0.3.2", env["E2E_MANAGER_0_3_2"], 3, nil,
			`field "^.spec.replicas": maximum: constraint 2.147483647e+09 added when there were no restrictions previously`,
			`field "^.spec.tolerations" has unknown change`, `field "^.spec.securityContext" has unknown change`)

		// 0.4.0 adds rules over its new fields at the spec's level and loosens env valueFrom to
		// four sources (hack/crdupgrade/from-0.3.2.yaml): v1.2.0's preflight names both as
		// unknown changes.
		upgradeKeeping("0.4.0", "0.3.2", "the changed rules", "manager-0.4.0", env["E2E_MANAGER_0_4_0"], 4, nil,
			`field "^.spec" has unknown change`, `field "^.spec.env[*].valueFrom" has unknown change`)
		held := heldrollback.Hold(ctx, olm.K8s, appNS, "held", "0.4.0",
			examplev1.MyAppSpec{Image: "nginx:1.27"}, heldrollback.UnstartableImage)

		// 0.4.1 compares a resourceFieldRef's divisor by value, a looser rule
		// (hack/crdupgrade/from-0.4.0.yaml), and changes descriptions: v1.2.0's preflight names
		// each changed rule (and each changed description) as an unknown change.
		upgradeKeeping("0.4.1", "0.4.0", "the changed divisor rule", "manager-0.4.1", env["E2E_MANAGER_0_4_1"], 5, held,
			`field "^.spec.env[*].valueFrom.resourceFieldRef" has unknown change`,
			`field "^.spec.volumes[*].downwardAPI.items[*].resourceFieldRef" has unknown change`)

		// The current version lets the autoscaler's CPU target be 0 beside a memory target, a
		// looser rule over spec.autoScaling, and adds rules at the spec's level over its new
		// fields (hack/crdupgrade/from-0.4.1.yaml): v1.2.0's preflight names them as unknown
		// changes.
		upgradeKeeping(currentVersion, "0.4.1", "the changed rules", "manager-current", env["E2E_MANAGER"], 6, held,
			`field "^.spec.autoScaling" has unknown change`, `field "^.spec" has unknown change`)
	})
})

// expectPreflightRefuses asks OLM v1 for version with the CRD preflight at its default (no
// install stanza, as the upgrade docs leave it after each upgrade) and waits until the
// preflight refuses the upgrade of myapps.example.com with each of the messages, leaving
// installed in place. It returns the refusal.
func expectPreflightRefuses(version, installed string, messages ...string) string {
	olm.PatchExtension(`{"spec":{"install":null,"source":{"catalog":{"version":"` + version + `"}}}}`)
	var message string
	Eventually(func(g Gomega) {
		progressing := olmv1env.Condition(olm.Get(g, "ClusterExtension", olmv1env.Extension), "Progressing")
		g.Expect(progressing).NotTo(BeNil())
		g.Expect(progressing.Reason).To(Equal("Retrying"))
		g.Expect(progressing.Message).To(ContainSubstring("myapps.example.com"))
		for _, m := range messages {
			g.Expect(progressing.Message).To(ContainSubstring(m))
		}
		message = progressing.Message
	}).Should(Succeed())
	Expect(olm.InstalledVersion()).To(Equal(installed), "the refused upgrade must leave %s installed", installed)
	return message
}

// upgradeWithPreflightRelaxed takes the documented step for the refused upgrade
// (spec.install.preflight.crdUpgradeSafety.enforcement: None), waits until OLM v1 has
// installed version and made its operator Deployment, and returns how long that took.
func upgradeWithPreflightRelaxed(version string) string {
	started := time.Now()
	olm.PatchExtension(`{"spec":{"install":{"preflight":{"crdUpgradeSafety":{"enforcement":"None"}}}}}`)
	olm.ExpectInstalled(version)
	expectOperatorDeployment("example.com/myapp-operator:v" + version)
	return time.Since(started).Round(100 * time.Millisecond).String()
}

// restartManager stops the running manager and starts the given one in its place, as OLM
// v1's upgrade of the operator's Deployment replaces its pod.
func restartManager(running *testutil.Process, name, bin string) *testutil.Process {
	running.Signal(os.Interrupt)
	Eventually(running.Exited()).Should(BeClosed())
	return runManagerAs(name, bin)
}

// podUIDs lists the UIDs of the MyApp's pods that are not being deleted, sorted. The pods
// are objects the cluster's deployment controller makes and kwok marks running, so a pod
// template the operator changed shows as new UIDs, even though no container runs.
func podUIDs(g Gomega) []string {
	pods := &corev1.PodList{}
	g.Expect(olm.K8s.List(ctx, pods, client.InNamespace(appNS), client.MatchingLabels{"app.kubernetes.io/name": "web"})).To(Succeed())
	uids := make([]string, 0, len(pods.Items))
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			uids = append(uids, string(p.UID))
		}
	}
	slices.Sort(uids)
	return uids
}

// currentVersion is the version of bundle/, the channel's head.
const currentVersion = "0.5.0"

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
