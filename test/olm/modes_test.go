package olm

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
	"github.com/example/myapp-operator/test/olmv0env"
)

// installMode is one way of installing the operator: the namespace its Subscription and
// OperatorGroup live in, the OperatorGroup's target namespaces (none: all namespaces), the
// namespaces where the test expects it to act, and one where it must not (none for
// AllNamespaces).
type installMode struct {
	name, installNS string
	targets, work   []string
	outside         string
}

// namespaces lists every namespace of the mode.
func (m installMode) namespaces() []string {
	out := append([]string{m.installNS}, m.work...)
	if m.outside != "" {
		out = append(out, m.outside)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sa is the operator's service account as the API server names it.
func (m installMode) sa() string {
	return "system:serviceaccount:" + m.installNS + ":" + operatorSA
}

// create makes the mode's namespaces and its OperatorGroup.
func (m installMode) create() {
	for _, ns := range m.namespaces() {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	Expect(k8s.Create(ctx, &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: m.installNS, Name: pkg},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: m.targets},
	})).To(Succeed())
	Eventually(func(g Gomega) {
		og := &operatorsv1.OperatorGroup{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: m.installNS, Name: pkg}, og)).To(Succeed())
		want := m.targets
		if len(want) == 0 {
			want = []string{corev1.NamespaceAll}
		}
		g.Expect(og.Status.Namespaces).To(ConsistOf(want), "OLM's reading of the OperatorGroup: %s", m.name)
	}).Should(Succeed())
}

// subscribe subscribes to the package's alpha channel in the catalog, with the rest of spec.
func (m installMode) subscribe(spec *operatorsv1alpha1.SubscriptionSpec) {
	spec.Package, spec.Channel = pkg, "alpha"
	spec.CatalogSource, spec.CatalogSourceNamespace = catalogName, "olm"
	Expect(k8s.Create(ctx, &operatorsv1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: m.installNS, Name: pkg},
		Spec:       spec,
	})).To(Succeed())
}

// sub is the mode's Subscription, through which the specs approve and follow its installs.
func (m installMode) sub() olmv0env.Subscription {
	return olmv0env.Subscription{K8s: k8s, Namespace: m.installNS, Name: pkg}
}

// expectOperatorDeployment checks the Deployment OLM made from the CSV: the version's image,
// the operator's service account, and the target namespaces handed to the manager. After an
// upgrade it is awaited once the replaced CSV is gone. A sync of the old CSV that does not yet
// see its replacement finds no Deployment labelled as its own and reinstalls it (its image, it
// the only owner); the garbage collector deletes that Deployment with the old CSV, and OLM
// makes the new CSV's one again. The Deployment can thus be absent for a moment after the new
// CSV has succeeded.
func (m installMode) expectOperatorDeployment(image string) {
	Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: m.installNS, Name: operatorDeploy}, d)).To(Succeed())
		g.Expect(d.Spec.Template.Spec.ServiceAccountName).To(Equal(operatorSA))
		g.Expect(container(g, d.Spec.Template.Spec.Containers, "manager").Image).To(Equal(image))
		g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", strings.Join(m.targets, ",")))
		g.Expect(d.Status.AvailableReplicas).To(BeNumerically(">=", 1))
	}).Should(Succeed())
}

// container finds a container by name.
func container(g Gomega, containers []corev1.Container, name string) corev1.Container {
	i := slices.IndexFunc(containers, func(c corev1.Container) bool { return c.Name == name })
	g.Expect(i).NotTo(Equal(-1), "no container %s", name)
	return containers[i]
}

// expectScope asks the API server (SubjectAccessReviews) what the operator's service account
// may do: everything the manager needs in the namespaces it works in, leader election in its
// own namespace, the metrics filter's reviews cluster-wide; nothing in a namespace outside
// its targets, nothing cluster-wide unless installed for all namespaces, and never Secrets.
// OLM grants a CSV's permissions in target namespaces and removes a replaced CSV's grants
// after the CSV succeeded, so the answers are awaited.
func (m installMode) expectScope() {
	type access struct{ verb, group, resource string }
	needed := []access{
		{"watch", "example.com", "myapps"}, {"patch", "example.com", "myapps/status"},
		{"update", "example.com", "myapps/finalizers"},
		{"patch", "apps", "deployments"}, {"delete", "apps", "deployments"}, {"list", "apps", "replicasets"}, {"patch", "apps", "replicasets"},
		{"patch", "", "services"}, {"delete", "autoscaling", "horizontalpodautoscalers"},
		{"patch", "policy", "poddisruptionbudgets"}, {"patch", "networking.k8s.io", "networkpolicies"}, {"create", "", "events"},
	}
	secrets := []access{{"get", "", "secrets"}, {"list", "", "secrets"}, {"watch", "", "secrets"}}
	Eventually(func(g Gomega) {
		for _, ns := range m.work {
			for _, a := range needed {
				g.Expect(m.can(a.verb, a.group, a.resource, ns)).To(BeTrue(), "%s: %s %s/%s in target %s", m.name, a.verb, a.group, a.resource, ns)
			}
		}
		for _, verb := range []string{"get", "create", "update"} {
			g.Expect(m.can(verb, "coordination.k8s.io", "leases", m.installNS)).To(BeTrue(), "%s: %s leases in its own namespace", m.name, verb)
		}
		g.Expect(m.can("create", "authentication.k8s.io", "tokenreviews", "")).To(BeTrue())
		g.Expect(m.can("create", "authorization.k8s.io", "subjectaccessreviews", "")).To(BeTrue())

		if m.outside != "" {
			for _, a := range append(needed, access{"get", "coordination.k8s.io", "leases"}) {
				g.Expect(m.can(a.verb, a.group, a.resource, m.outside)).To(BeFalse(), "%s: %s %s/%s outside the targets, in %s", m.name, a.verb, a.group, a.resource, m.outside)
			}
			g.Expect(m.can("list", "example.com", "myapps", "")).To(BeFalse(), "%s: MyApps cluster-wide", m.name)
			g.Expect(m.can("patch", "apps", "deployments", "kube-system")).To(BeFalse(), "%s: Deployments in kube-system", m.name)
		} else {
			g.Expect(m.can("list", "example.com", "myapps", "")).To(BeTrue(), "%s: MyApps cluster-wide", m.name)
			g.Expect(m.can("patch", "apps", "deployments", "kube-system")).To(BeTrue(), "%s: every namespace", m.name)
		}
		for _, ns := range append(m.namespaces(), "kube-system", "") {
			for _, a := range secrets {
				g.Expect(m.can(a.verb, a.group, a.resource, ns)).To(BeFalse(), "%s: %s secrets in %q", m.name, a.verb, ns)
			}
		}
	}).Should(Succeed())
}

// can asks the API server whether the operator's service account may do verb on a resource
// in namespace ns ("" for cluster-wide).
func (m installMode) can(verb, group, resource, ns string) bool {
	subresource := ""
	if i := strings.IndexByte(resource, '/'); i >= 0 {
		resource, subresource = resource[:i], resource[i+1:]
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   m.sa(),
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + m.installNS},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: verb, Group: group, Resource: resource, Subresource: subresource,
		},
	}}
	Expect(k8s.Create(ctx, sar)).To(Succeed())
	return sar.Status.Allowed
}

// startManager runs a manager binary as OLM's Deployment would, with nothing but the
// permissions OLM granted. The simulated nodes run no containers, so the manager runs here,
// as the CSV's service account (impersonated), with the environment the CSV's Deployment gives
// it: the target namespaces OLM wrote into the pod's annotation as WATCH_NAMESPACE, and its
// own namespace as POD_NAMESPACE, where its leader election Lease must appear.
func (m installMode) startManager(bin, version string) *testutil.Process {
	d := &appsv1.Deployment{}
	Eventually(func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: m.installNS, Name: operatorDeploy}, d)
	}).Should(Succeed(), "%s: OLM's Deployment of the operator", m.name)
	watch := d.Spec.Template.Annotations["olm.targetNamespaces"]

	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = m.sa()
		auth.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + m.installNS, "system:authenticated"}
	}
	impersonating := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(clientcmd.WriteToFile(*cfg, impersonating)).To(Succeed())
	metrics, err := testutil.FreeLoopbackAddr()
	Expect(err).NotTo(HaveOccurred())
	args := []string{"--leader-elect", "--leader-election-namespace=" + leaseNamespaceFlag(version, m.installNS),
		"--metrics-bind-address=" + metrics, "--health-probe-bind-address=0"}
	if hasGraceFlag(version) {
		// A rollback the story holds under a previous manager waits its grace; the Helm
		// suite runs with the same 5 s.
		args = append(args, "--rollout-failure-grace=5s")
	}
	return run("manager-"+m.name+"-"+version, bin,
		[]string{"KUBECONFIG=" + impersonating, "WATCH_NAMESPACE=" + watch, "POD_NAMESPACE=" + m.installNS}, args...)
}

// hasGraceFlag tells whether the manager of version has --rollout-failure-grace: 0.4.0 and
// later (the current one too).
func hasGraceFlag(version string) bool {
	switch version {
	case "0.2.0", "0.3.0", "0.3.1", "0.3.2":
		return false
	}
	return true
}

// leaseNamespaceFlag is empty for the current manager, which finds its namespace in
// POD_NAMESPACE; 0.2.0 needs the flag outside a cluster.
func leaseNamespaceFlag(version, ns string) string {
	if version == "0.2.0" {
		return ns
	}
	return ""
}

// stopManager stops a manager as the kubelet would, and fails if it was ever refused a request.
func (m installMode) stopManager(manager *testutil.Process) {
	manager.Signal(os.Interrupt)
	Eventually(manager.Exited()).WithTimeout(45 * time.Second).Should(BeClosed())
	log, err := os.ReadFile(manager.Log)
	Expect(err).NotTo(HaveOccurred())
	Expect(strings.ToLower(string(log))).NotTo(ContainSubstring("forbidden"), "%s: see %s", m.name, manager.Log)
}

// expectServes runs the current manager: a MyApp in each namespace it works in gets Ready, and
// one outside its targets is left alone. while, if given, runs while the manager is up.
func (m installMode) expectServes(while ...func()) {
	manager := m.startManager(managerBin, "current")
	for _, ns := range append(slices.Clone(m.work), m.outside) {
		if ns == "" {
			continue
		}
		Expect(k8s.Create(ctx, &examplev1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec:       examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(int32(2))},
		})).To(Succeed())
	}
	for _, ns := range m.work {
		Eventually(func(g Gomega) {
			app := &examplev1.MyApp{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, app)).To(Succeed())
			ready := meta.FindStatusCondition(app.Status.Conditions, examplev1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%s: %s", ready.Reason, ready.Message)
			g.Expect(app.Status.ReadyReplicas).To(Equal(int32(2)))
		}).Should(Succeed(), "%s: the MyApp in target %s", m.name, ns)
	}
	Eventually(func(g Gomega) {
		lease := &coordinationv1.Lease{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: m.installNS, Name: "myapp-operator.example.com"}, lease)).To(Succeed())
	}).Should(Succeed(), "the leader election lease in the operator's namespace")
	if m.outside != "" {
		// The targets' MyApps are Ready, so the manager is up and has listed its namespaces; a
		// MyApp it would touch would have a status or a Deployment by now.
		Consistently(func(g Gomega) {
			app := &examplev1.MyApp{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: m.outside, Name: "web"}, app)).To(Succeed())
			g.Expect(app.Status.Conditions).To(BeEmpty())
			g.Expect(app.Status.ObservedGeneration).To(BeZero())
			err := k8s.Get(ctx, client.ObjectKey{Namespace: m.outside, Name: "web"}, &appsv1.Deployment{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a Deployment for the MyApp outside the targets")
		}, 5*time.Second, 250*time.Millisecond).Should(Succeed(), "%s: the MyApp outside the targets, in %s", m.name, m.outside)
	}
	for _, f := range while {
		f()
	}
	m.stopManager(manager)
}

// csvSettled is how long a CSV must have kept its phase before uninstall deletes it.
const csvSettled = 10 * time.Second

// uninstall removes the operator as an administrator would (Subscription, CSV, OperatorGroup)
// and the mode's namespaces, waits until they are gone, and removes the cluster-wide grants OLM
// orphaned, so that the next mode starts from a clean cluster.
func (m installMode) uninstall() {
	By("uninstalling " + m.name)
	// A CSV succeeds while the catalog operator may still be executing its InstallPlan's
	// remaining steps; RBAC it creates after the CSV is deleted has no one to remove it.
	// An administrator uninstalls once OLM has finished: the Subscription's latest InstallPlan,
	// when approved, Complete.
	Eventually(func(g Gomega) {
		sub := &operatorsv1alpha1.Subscription{}
		err := k8s.Get(ctx, client.ObjectKey{Namespace: m.installNS, Name: pkg}, sub)
		if apierrors.IsNotFound(err) || (err == nil && sub.Status.InstallPlanRef == nil) {
			return
		}
		g.Expect(err).NotTo(HaveOccurred())
		plan := &operatorsv1alpha1.InstallPlan{}
		err = k8s.Get(ctx, client.ObjectKey{Namespace: m.installNS, Name: sub.Status.InstallPlanRef.Name}, plan)
		if apierrors.IsNotFound(err) {
			return
		}
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(plan.Status.Phase).NotTo(Equal(operatorsv1alpha1.InstallPlanPhaseFailed), "%v", plan.Status.Conditions)
		if plan.Spec.Approved {
			g.Expect(plan.Status.Phase).To(Equal(operatorsv1alpha1.InstallPlanPhaseComplete), "InstallPlan %s", plan.Name)
		}
	}).Should(Succeed())
	// After an upgrade OLM may reinstall the current CSV (its Deployment briefly gone with the
	// replaced CSV: docs/reliability.md, Flakes); RBAC that reinstall creates while the CSV is
	// being deleted is left behind (seen once in CI). An administrator uninstalls an operator
	// at rest: every CSV Succeeded, with no phase change for csvSettled.
	Eventually(func(g Gomega) {
		csvs := &operatorsv1alpha1.ClusterServiceVersionList{}
		g.Expect(k8s.List(ctx, csvs, client.InNamespace(m.installNS))).To(Succeed())
		for _, c := range csvs.Items {
			g.Expect(c.Status.Phase).To(Equal(operatorsv1alpha1.CSVPhaseSucceeded), "CSV %s", c.Name)
			g.Expect(c.Status.LastTransitionTime).NotTo(BeNil(), "CSV %s", c.Name)
			g.Expect(time.Since(c.Status.LastTransitionTime.Time)).To(BeNumerically(">=", csvSettled), "CSV %s changed phase a moment ago", c.Name)
		}
	}).Should(Succeed())
	Expect(client.IgnoreNotFound(k8s.Delete(ctx, &operatorsv1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: m.installNS, Name: pkg}}))).To(Succeed())
	// The CSVs are deleted again on every poll: a sync of the InstallPlan that the catalog
	// operator began before the Subscription (and with it the InstallPlan) was deleted can
	// still create the CSV once more, with nothing left to own it. An administrator runs the
	// delete again; so does this.
	Eventually(func(g Gomega) {
		g.Expect(client.IgnoreNotFound(k8s.DeleteAllOf(ctx, &operatorsv1alpha1.ClusterServiceVersion{},
			client.InNamespace(m.installNS)))).To(Succeed())
		csvs := &operatorsv1alpha1.ClusterServiceVersionList{}
		g.Expect(k8s.List(ctx, csvs)).To(Succeed())
		for _, c := range csvs.Items {
			g.Expect(c.Labels).NotTo(HaveKeyWithValue(operatorsv1alpha1.CopiedLabelKey, m.installNS), "copied CSV %s/%s", c.Namespace, c.Name)
			g.Expect(c.Namespace).NotTo(Equal(m.installNS), "CSV %s", c.Name)
		}
	}).Should(Succeed())
	Expect(client.IgnoreNotFound(k8s.Delete(ctx, &operatorsv1.OperatorGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: m.installNS, Name: pkg}}))).To(Succeed())
	for _, ns := range m.namespaces() {
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
	}
	Eventually(func(g Gomega) {
		for _, ns := range m.namespaces() {
			err := k8s.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace %s still there", ns)
		}
	}).Should(Succeed())
	m.removeOrphanedClusterRBAC()
}

// removeOrphanedClusterRBAC checks the cluster-wide grants left to the mode's service accounts
// once every CSV of the mode is gone, and removes those OLM orphaned.
//
// OLM deletes the ClusterRoles and ClusterRoleBindings labelled for a CSV in the CSV's
// finalizer (operators.coreos.com/csv-cleanup), so a CSV that is gone has had its cluster RBAC
// removed. The catalog operator creates a step's RBAC whenever it executes an InstallPlan,
// with that plan's CSV as the owner label; a plan of a release that an automatic upgrade
// replaced while the plan still ran creates them after that CSV's finalizer, and nothing ever
// removes them (docs/reliability.md, Flakes). That is OLM's, and what an administrator cleans
// up after an uninstall: the story reports each one, with its owner and creation time, and
// deletes it so that the next mode starts from a clean cluster. A grant to the mode's service
// accounts that OLM did not label for one of the mode's CSVs is not OLM's, and fails the story.
func (m installMode) removeOrphanedClusterRBAC() {
	GinkgoHelper()
	orphanedBy := func(o metav1.Object) (string, bool) {
		l := o.GetLabels()
		return l["olm.owner"], l["olm.owner.kind"] == operatorsv1alpha1.ClusterServiceVersionKind && l["olm.owner.namespace"] == m.installNS
	}
	bindings := &rbacv1.ClusterRoleBindingList{}
	Expect(k8s.List(ctx, bindings)).To(Succeed())
	orphans := make([]string, 0, len(bindings.Items))
	for _, b := range bindings.Items {
		if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Namespace == m.installNS
		}) {
			continue
		}
		owner, ok := orphanedBy(&b)
		Expect(ok).To(BeTrue(), "ClusterRoleBinding %s grants the operator's service account ClusterRole %s, and OLM did not make it for a CSV of %s: labels %v",
			b.Name, b.RoleRef.Name, m.installNS, b.Labels)
		orphans = append(orphans, fmt.Sprintf("ClusterRoleBinding %s of CSV %s, created %s", b.Name, owner, b.CreationTimestamp.UTC().Format(time.RFC3339)))
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, &b))).To(Succeed())
	}
	roles := &rbacv1.ClusterRoleList{}
	Expect(k8s.List(ctx, roles, client.MatchingLabels{"olm.owner.namespace": m.installNS,
		"olm.owner.kind": operatorsv1alpha1.ClusterServiceVersionKind})).To(Succeed())
	for _, r := range roles.Items {
		owner, _ := orphanedBy(&r)
		orphans = append(orphans, fmt.Sprintf("ClusterRole %s of CSV %s, created %s", r.Name, owner, r.CreationTimestamp.UTC().Format(time.RFC3339)))
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, &r))).To(Succeed())
	}
	if len(orphans) > 0 {
		AddReportEntry(m.name+": cluster RBAC OLM left behind after its CSVs were gone, removed by the story", orphans)
	}
}

func ptr[T any](v T) *T { return &v }
