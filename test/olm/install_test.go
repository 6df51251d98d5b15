package olm

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/test/heldrollback"
)

const (
	pkg            = "myapp-operator"
	catalogName    = "myapp-operator-catalog"
	operatorSA     = "myapp-operator-controller-manager"
	operatorDeploy = "myapp-operator-controller-manager"
	csv020         = "myapp-operator.v0.2.0"
	csv030         = "myapp-operator.v0.3.0"
	csv031         = "myapp-operator.v0.3.1"
	csv032         = "myapp-operator.v0.3.2"
	csv040         = "myapp-operator.v0.4.0"
	csv041         = "myapp-operator.v0.4.1"
	currentCSV     = "myapp-operator.v0.5.0"
	currentImage   = "example.com/myapp-operator:v0.5.0"
)

// The four install modes the CSV declares, installed one after another on one cluster, each
// in namespaces of its own and uninstalled before the next. OLM refuses two installs of one
// operator whose OperatorGroups overlap, and AllNamespaces overlaps everything, so they do not
// run side by side.
var (
	ownNamespace = installMode{name: "OwnNamespace", installNS: "own-operator",
		targets: []string{"own-operator"}, work: []string{"own-operator"}, outside: "own-outside"}
	ownNamespaceFrom030 = installMode{name: "OwnNamespace-from-0.3.0", installNS: "own-030",
		targets: []string{"own-030"}, work: []string{"own-030"}, outside: "own-030-outside"}
	ownNamespaceFrom031 = installMode{name: "OwnNamespace-from-0.3.1", installNS: "own-031",
		targets: []string{"own-031"}, work: []string{"own-031"}, outside: "own-031-outside"}
	ownNamespaceFrom032 = installMode{name: "OwnNamespace-from-0.3.2", installNS: "own-032",
		targets: []string{"own-032"}, work: []string{"own-032"}, outside: "own-032-outside"}
	ownNamespaceFrom040 = installMode{name: "OwnNamespace-from-0.4.0", installNS: "own-040",
		targets: []string{"own-040"}, work: []string{"own-040"}, outside: "own-040-outside"}
	ownNamespaceFrom041 = installMode{name: "OwnNamespace-from-0.4.1", installNS: "own-041",
		targets: []string{"own-041"}, work: []string{"own-041"}, outside: "own-041-outside"}
	singleNamespace = installMode{name: "SingleNamespace", installNS: "single-operator",
		targets: []string{"single-team"}, work: []string{"single-team"}, outside: "single-outside"}
	multiNamespace = installMode{name: "MultiNamespace", installNS: "multi-operator",
		targets: []string{"multi-team-a", "multi-team-b"}, work: []string{"multi-team-a", "multi-team-b"}, outside: "multi-outside"}
	allNamespaces = installMode{name: "AllNamespaces", installNS: "all-operator",
		work: []string{"all-team"}}
)

var _ = Describe("The operator installed through OLM", Ordered, func() {
	BeforeAll(func() {
		err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "olm"}})
		Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
		Expect(k8s.Create(ctx, &operatorsv1alpha1.CatalogSource{
			ObjectMeta: metav1.ObjectMeta{Namespace: "olm", Name: catalogName},
			Spec: operatorsv1alpha1.CatalogSourceSpec{
				SourceType: operatorsv1alpha1.SourceTypeGrpc, Address: catalogAddress,
				DisplayName: "MyApp Operator", Publisher: "Example",
			},
		})).To(Succeed())
	})

	It("OwnNamespace: installs a release on the old pod selector, upgrades to the current version along the channel with MyApps served throughout, and acts in its own namespace only", func() {
		m := ownNamespace
		m.create()
		// Manual approval starting at 0.2.0, so that the test drives each step of the upgrade.
		m.subscribe(&operatorsv1alpha1.SubscriptionSpec{StartingCSV: csv020, InstallPlanApproval: operatorsv1alpha1.ApprovalManual})

		By("installing 0.2.0 through an InstallPlan approved by hand")
		started := time.Now()
		m.sub().ApproveAndComplete(csv020)
		m.sub().ExpectSucceeded(csv020)
		m.expectOperatorDeployment("example.com/myapp-operator:v0.2.0")
		AddReportEntry("OLM install of 0.2.0", time.Since(started).Round(100*time.Millisecond).String())

		By("granting 0.2.0's service account what its CSV asks for")
		Expect(m.can("patch", "apps", "deployments", m.installNS)).To(BeTrue())
		Expect(m.can("watch", "example.com", "myapps", m.installNS)).To(BeTrue())
		Expect(m.can("patch", "example.com", "myapps/status", m.installNS)).To(BeTrue())
		Expect(m.can("delete", "apps", "deployments", m.installNS)).To(BeFalse(), "0.2.0 never deletes Deployments")
		Expect(m.can("get", "", "secrets", m.installNS)).To(BeFalse(), "the operator never reads Secrets")

		By("serving MyApps with the 0.2.0 manager, run with 0.2.0's permissions")
		previous := m.startManager(manager020Bin, "0.2.0")
		apps := map[string]int32{"shop": 3, "blog": 1}
		for name, replicas := range apps {
			Expect(k8s.Create(ctx, &examplev1.MyApp{
				ObjectMeta: metav1.ObjectMeta{Namespace: m.installNS, Name: name},
				Spec:       examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(replicas)},
			})).To(Succeed())
		}
		for name, replicas := range apps {
			Eventually(func(g Gomega) {
				app := &examplev1.MyApp{}
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: m.installNS, Name: name}, app)).To(Succeed())
				g.Expect(meta.IsStatusConditionTrue(app.Status.Conditions, examplev1.ConditionReady)).To(BeTrue(), "%+v", app.Status)
				g.Expect(app.Status.ReadyReplicas).To(Equal(replicas))
			}).Should(Succeed(), "MyApp %s under 0.2.0", name)
		}
		served := watchServed(m.installNS, "shop", "blog")
		// OLM's rollout replaces the 0.2.0 pod with the current one; here the old process stops
		// before the upgrade and the new one starts after it, while the apps' pods keep serving.
		m.stopManager(previous)

		By("upgrading to the channel's head, which skips 0.3.0 (skipRange), approved by hand")
		started = time.Now()
		m.sub().ApproveAndComplete(currentCSV)
		m.sub().ExpectSucceeded(currentCSV)
		m.sub().ExpectCSVGone(csv020)
		m.expectOperatorDeployment(currentImage)
		AddReportEntry("OLM upgrade from 0.2.0", time.Since(started).Round(100*time.Millisecond).String())

		By("granting the current version what it newly needs, in its own namespace, and nothing outside it")
		// 0.2.0 asked for everything cluster-wide; OLM removes those grants with its CSV.
		m.expectScope()

		By("running the manager with nothing but the permissions OLM granted from the CSV")
		m.expectServes(func() {
			By("bringing 0.2.0's MyApps to Ready under the current version, on the new pod selector, served throughout")
			for name, replicas := range apps {
				Eventually(func(g Gomega) {
					app := &examplev1.MyApp{}
					g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: m.installNS, Name: name}, app)).To(Succeed())
					ready := meta.FindStatusCondition(app.Status.Conditions, examplev1.ConditionReady)
					g.Expect(ready).NotTo(BeNil())
					d := &appsv1.Deployment{}
					g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: m.installNS, Name: name}, d)).To(Succeed())
					g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%s: %s (Deployment generation %d, observed %d, status %+v; MyApp status %+v)",
						ready.Reason, ready.Message, d.Generation, d.Status.ObservedGeneration, d.Status, app.Status)
					g.Expect(app.Status.ObservedGeneration).To(Equal(app.Generation))
					g.Expect(app.Status.ReadyReplicas).To(Equal(replicas))
					g.Expect(d.Spec.Selector.MatchLabels).To(HaveKey("myapp.example.com/name"), "the selector 0.3.0 introduced")
					rs := &appsv1.ReplicaSetList{}
					g.Expect(k8s.List(ctx, rs, client.InNamespace(m.installNS), client.MatchingLabels{appLabel: name})).To(Succeed())
					g.Expect(rs.Items).To(HaveLen(1), "0.2.0's ReplicaSet is removed once the new pods run")
				}).Should(Succeed(), "MyApp %s under the current version", name)
			}
			fewest := served.stop()
			for name := range apps {
				Expect(fewest[name]).To(BeNumerically(">", 0), "MyApp %s had no ready pod at some point of the upgrade", name)
			}
			AddReportEntry("fewest ready pods through the upgrade", fmt.Sprint(fewest))
		})
		m.uninstall()
	})

	// The releases of 0.3 and 0.4, each installed and then upgraded to the current version.
	// Their managers are read when the suite starts, so each story names its own.
	for _, from := range []struct {
		mode         installMode
		version, csv string
		manager      func() string
	}{
		{ownNamespaceFrom030, "0.3.0", csv030, func() string { return manager030Bin }},
		{ownNamespaceFrom031, "0.3.1", csv031, func() string { return manager031Bin }},
		{ownNamespaceFrom032, "0.3.2", csv032, func() string { return manager032Bin }},
		{ownNamespaceFrom040, "0.4.0", csv040, func() string { return manager040Bin }},
		{ownNamespaceFrom041, "0.4.1", csv041, func() string { return manager041Bin }},
	} {
		It("OwnNamespace: installs "+from.version+" and upgrades to the current version with MyApps served throughout, no pod replaced", func() {
			m := from.mode
			m.create()
			m.subscribe(&operatorsv1alpha1.SubscriptionSpec{StartingCSV: from.csv, InstallPlanApproval: operatorsv1alpha1.ApprovalManual})

			By("installing " + from.version + " through an InstallPlan approved by hand")
			started := time.Now()
			m.sub().ApproveAndComplete(from.csv)
			m.sub().ExpectSucceeded(from.csv)
			m.expectOperatorDeployment("example.com/myapp-operator:v" + from.version)
			AddReportEntry("OLM install of "+from.version, time.Since(started).Round(100*time.Millisecond).String())

			By("serving MyApps with the " + from.version + " manager, run with its permissions")
			previous := m.startManager(from.manager(), from.version)
			apps := map[string]int32{"shop": 2, "blog": 1}
			for name, replicas := range apps {
				Expect(k8s.Create(ctx, &examplev1.MyApp{
					ObjectMeta: metav1.ObjectMeta{Namespace: m.installNS, Name: name},
					Spec:       examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(replicas)},
				})).To(Succeed())
			}
			expectAppsReady(m.installNS, apps, from.version)
			var held *heldrollback.Held
			if from.version == "0.4.0" || from.version == "0.4.1" {
				held = heldrollback.Hold(ctx, k8s, m.installNS, "held", from.version,
					examplev1.MyAppSpec{Image: "nginx:1.27"}, heldrollback.UnstartableImage)
			}
			pods := podUIDs(m.installNS, "shop", "blog")
			served := watchServed(m.installNS, "shop", "blog")
			m.stopManager(previous)

			By("upgrading to the current version, approved by hand")
			started = time.Now()
			m.sub().ApproveAndComplete(currentCSV)
			m.sub().ExpectSucceeded(currentCSV)
			m.sub().ExpectCSVGone(from.csv)
			m.expectOperatorDeployment(currentImage)
			AddReportEntry("OLM upgrade from "+from.version, time.Since(started).Round(100*time.Millisecond).String())
			m.expectScope()
			m.expectServes(func() {
				expectAppsReady(m.installNS, apps, "the current version")
				fewest := served.stop()
				for name := range apps {
					Expect(fewest[name]).To(BeNumerically(">", 0), "MyApp %s had no ready pod at some point of the upgrade", name)
				}
				Expect(podUIDs(m.installNS, "shop", "blog")).To(Equal(pods), "the upgrade of the operator replaced an app's pod")
				if held != nil {
					held.ExpectKept(ctx)
				}
			})
			m.uninstall()
		})
	}

	It("SingleNamespace: acts in its one target namespace and honours the Subscription's config", func() {
		m := singleNamespace
		m.create()
		// Automatic approval: OLM installs the channel head without anyone approving it.
		config := &operatorsv1alpha1.SubscriptionConfig{
			Env: []corev1.EnvVar{{Name: "MYAPP_SUBSCRIPTION_SETTING", Value: "from-subscription"}},
			Resources: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("150m"), corev1.ResourceMemory: resource.MustParse("96Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("640Mi")},
			},
			// One of the local cluster's two simulated nodes, so that the pod's placement shows it.
			NodeSelector: map[string]string{"kubernetes.io/hostname": "kwok-node-1"},
			Tolerations: []corev1.Toleration{{Key: "example.com/dedicated", Operator: corev1.TolerationOpEqual,
				Value: "operators", Effect: corev1.TaintEffectNoSchedule}},
		}
		m.subscribe(&operatorsv1alpha1.SubscriptionSpec{InstallPlanApproval: operatorsv1alpha1.ApprovalAutomatic, Config: config})
		started := time.Now()
		m.sub().ExpectSucceeded(currentCSV)
		m.expectOperatorDeployment(currentImage)
		AddReportEntry("OLM install of the current version, SingleNamespace", time.Since(started).Round(100*time.Millisecond).String())

		By("passing the Subscription's env, resources, nodeSelector and tolerations to the manager's pod")
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8s.List(ctx, pods, client.InNamespace(m.installNS),
				client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(1))
			pod := pods.Items[0]
			g.Expect(pod.Spec.NodeSelector).To(Equal(config.NodeSelector))
			g.Expect(pod.Spec.NodeName).To(Equal("kwok-node-1"), "scheduled where the Subscription's nodeSelector says")
			g.Expect(pod.Spec.Tolerations).To(ContainElement(config.Tolerations[0]))
			manager := container(g, pod.Spec.Containers, "manager")
			g.Expect(manager.Env).To(ContainElement(config.Env[0]))
			g.Expect(manager.Env).To(ContainElement(HaveField("Name", "WATCH_NAMESPACE")), "OLM's env is merged, not replaced")
			g.Expect(manager.Resources.Requests).To(Equal(config.Resources.Requests))
			g.Expect(manager.Resources.Limits).To(Equal(config.Resources.Limits))
			g.Expect(pod.Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))))
		}).Should(Succeed())
		d := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: m.installNS, Name: operatorDeploy}, d)).To(Succeed())
		Expect(d.Spec.Template.Spec.NodeSelector).To(Equal(config.NodeSelector))

		By("granting the rules in the target namespace, leases in its own, and nothing elsewhere")
		m.expectScope()
		By("reconciling MyApps in the target namespace only")
		m.expectServes()
		m.uninstall()
	})

	It("MultiNamespace: upgrades from a release on the old pod selector with no one approving, and acts in its two target namespaces only", func() {
		m := multiNamespace
		m.create()
		// Automatic approval from 0.2.0: OLM installs it, then upgrades along the channel by itself.
		m.subscribe(&operatorsv1alpha1.SubscriptionSpec{StartingCSV: csv020, InstallPlanApproval: operatorsv1alpha1.ApprovalAutomatic})
		started := time.Now()
		m.sub().ExpectSucceeded(currentCSV)
		m.sub().ExpectCSVGone(csv020)
		m.expectOperatorDeployment(currentImage)
		plans := &operatorsv1alpha1.InstallPlanList{}
		Expect(k8s.List(ctx, plans, client.InNamespace(m.installNS))).To(Succeed())
		Expect(plans.Items).To(ContainElement(HaveField("Spec.ClusterServiceVersionNames", ContainElement(csv020))),
			"0.2.0 was installed on the way")
		AddReportEntry("OLM install of 0.2.0 and automatic upgrade to the current version, MultiNamespace", time.Since(started).Round(100*time.Millisecond).String())
		m.expectScope()
		m.expectServes()
		m.uninstall()
	})

	It("AllNamespaces: acts in every namespace, and still never reads Secrets", func() {
		m := allNamespaces
		m.create()
		m.subscribe(&operatorsv1alpha1.SubscriptionSpec{InstallPlanApproval: operatorsv1alpha1.ApprovalAutomatic})
		started := time.Now()
		m.sub().ExpectSucceeded(currentCSV)
		m.expectOperatorDeployment(currentImage)
		AddReportEntry("OLM install of the current version, AllNamespaces", time.Since(started).Round(100*time.Millisecond).String())
		m.expectScope()
		m.expectServes()
		m.uninstall()
	})
})

// expectAppsReady waits until each MyApp of ns is Ready for its current generation, with the
// given number of ready pods, under the named manager version.
func expectAppsReady(ns string, apps map[string]int32, version string) {
	for name, replicas := range apps {
		Eventually(func(g Gomega) {
			app := &examplev1.MyApp{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, app)).To(Succeed())
			ready := meta.FindStatusCondition(app.Status.Conditions, examplev1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%s: %s", ready.Reason, ready.Message)
			g.Expect(app.Status.ObservedGeneration).To(Equal(app.Generation))
			g.Expect(app.Status.ReadyReplicas).To(Equal(replicas))
		}).Should(Succeed(), "MyApp %s under %s", name, version)
	}
}
