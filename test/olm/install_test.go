package olm

import (
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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/test/utils"
)

const (
	pkg            = "myapp-operator"
	installNS      = "myapp-system"
	operatorSA     = "myapp-operator-controller-manager"
	operatorDeploy = "myapp-operator-controller-manager"
	firstCSV       = "myapp-operator.v0.2.0"
	nextCSV        = "myapp-operator.v0.3.0"
)

var _ = Describe("The operator installed through OLM", Ordered, func() {
	It("installs from the catalog, runs with its CSV's permissions, and upgrades along the channel", func() {
		for _, ns := range []string{"olm", installNS} {
			err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
			Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
		}
		Expect(k8s.Create(ctx, &operatorsv1alpha1.CatalogSource{
			ObjectMeta: metav1.ObjectMeta{Namespace: "olm", Name: "myapp-operator-catalog"},
			Spec: operatorsv1alpha1.CatalogSourceSpec{
				SourceType: operatorsv1alpha1.SourceTypeGrpc, Address: catalogAddress,
				DisplayName: "MyApp Operator", Publisher: "Example",
			},
		})).To(Succeed())
		Expect(k8s.Create(ctx, &operatorsv1.OperatorGroup{
			ObjectMeta: metav1.ObjectMeta{Namespace: installNS, Name: pkg},
			Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{installNS}},
		})).To(Succeed())
		// Manual approval starting at 0.2.0, so that the test drives each step of the upgrade.
		Expect(k8s.Create(ctx, &operatorsv1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Namespace: installNS, Name: pkg},
			Spec: &operatorsv1alpha1.SubscriptionSpec{
				Package: pkg, Channel: "alpha", CatalogSource: "myapp-operator-catalog", CatalogSourceNamespace: "olm",
				StartingCSV: firstCSV, InstallPlanApproval: operatorsv1alpha1.ApprovalManual,
			},
		})).To(Succeed())

		By("installing 0.2.0 through an InstallPlan")
		started := time.Now()
		approveAndComplete(firstCSV)
		expectSucceeded(firstCSV)
		expectOperatorDeployment("example.com/myapp-operator:v0.2.0")
		AddReportEntry("OLM install of 0.2.0", time.Since(started).Round(100*time.Millisecond).String())

		By("granting the operator's service account exactly what the CSV asks for")
		Expect(can("patch", "apps", "deployments", installNS)).To(BeTrue())
		Expect(can("watch", "example.com", "myapps", installNS)).To(BeTrue())
		Expect(can("patch", "example.com", "myapps/status", installNS)).To(BeTrue())
		Expect(can("delete", "apps", "deployments", installNS)).To(BeFalse(), "0.2.0 never deletes Deployments")
		Expect(can("get", "", "secrets", installNS)).To(BeFalse(), "the operator never reads Secrets")

		By("upgrading to 0.3.0, the next version in the channel")
		started = time.Now()
		approveAndComplete(nextCSV)
		expectSucceeded(nextCSV)
		expectOperatorDeployment("example.com/myapp-operator:v0.3.0")
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: installNS, Name: firstCSV}, &operatorsv1alpha1.ClusterServiceVersion{}))
		}).Should(BeTrue(), "the replaced CSV should be removed")
		AddReportEntry("OLM upgrade to 0.3.0", time.Since(started).Round(100*time.Millisecond).String())
		By("granting 0.3.0 what it newly needs: budgets, and replacing 0.2.0's Deployments")
		Eventually(func() bool { return can("patch", "policy", "poddisruptionbudgets", installNS) }).Should(BeTrue())
		Expect(can("delete", "apps", "deployments", installNS)).To(BeTrue())
		Expect(can("list", "apps", "replicasets", installNS)).To(BeTrue())
		Expect(can("get", "", "secrets", installNS)).To(BeFalse(), "the operator never reads Secrets")

		By("running the manager with nothing but the permissions OLM granted from the CSV")
		// The simulated nodes run no containers, so the manager runs here, as the CSV's
		// service account (impersonated), with the settings the CSV's Deployment gives it.
		runManagerAs(operatorSA)
		Expect(k8s.Create(ctx, &examplev1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: installNS, Name: "web"},
			Spec:       examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptr(int32(2))},
		})).To(Succeed())
		Eventually(func(g Gomega) {
			app := &examplev1.MyApp{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: installNS, Name: "web"}, app)).To(Succeed())
			ready := meta.FindStatusCondition(app.Status.Conditions, examplev1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%s: %s", ready.Reason, ready.Message)
			g.Expect(app.Status.ReadyReplicas).To(Equal(int32(2)))
		}).Should(Succeed())
		log, err := os.ReadFile(managerLog)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.ToLower(string(log))).NotTo(ContainSubstring("forbidden"))
	})
})

// managerLog is where runManagerAs writes the manager's output.
var managerLog string

// runManagerAs starts the manager binary against the cluster as the given service account of
// the install namespace, watching the OperatorGroup's target namespace, as OLM's Deployment
// would run it.
func runManagerAs(sa string) {
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = "system:serviceaccount:" + installNS + ":" + sa
		auth.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + installNS, "system:authenticated"}
	}
	impersonating := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(clientcmd.WriteToFile(*cfg, impersonating)).To(Succeed())
	metrics, err := utils.FreeLoopbackAddr()
	Expect(err).NotTo(HaveOccurred())
	managerLog = filepath.Join(logDir, "olm-test-manager.log")
	run("manager", managerBin, []string{"KUBECONFIG=" + impersonating, "WATCH_NAMESPACE=" + installNS},
		"--leader-elect", "--leader-election-namespace="+installNS,
		"--metrics-bind-address="+metrics, "--health-probe-bind-address=0")
}

func ptr[T any](v T) *T { return &v }

// approveAndComplete waits for the Subscription's InstallPlan that installs csv, approves it,
// and waits until OLM has executed it.
func approveAndComplete(csv string) {
	var plan operatorsv1alpha1.InstallPlan
	Eventually(func(g Gomega) {
		sub := &operatorsv1alpha1.Subscription{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: installNS, Name: pkg}, sub)).To(Succeed())
		g.Expect(sub.Status.InstallPlanRef).NotTo(BeNil())
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: installNS, Name: sub.Status.InstallPlanRef.Name}, &plan)).To(Succeed())
		g.Expect(plan.Spec.ClusterServiceVersionNames).To(ContainElement(csv))
	}).Should(Succeed())
	if !plan.Spec.Approved {
		// A merge patch carries no resourceVersion, so OLM's own writes to the plan in between
		// cannot make the approval conflict.
		approved := plan.DeepCopy()
		approved.Spec.Approved = true
		Expect(k8s.Patch(ctx, approved, client.MergeFrom(&plan))).To(Succeed())
	}
	Eventually(func(g Gomega) operatorsv1alpha1.InstallPlanPhase {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&plan), &plan)).To(Succeed())
		g.Expect(plan.Status.Phase).NotTo(Equal(operatorsv1alpha1.InstallPlanPhaseFailed), "%v", plan.Status.Conditions)
		return plan.Status.Phase
	}).Should(Equal(operatorsv1alpha1.InstallPlanPhaseComplete))
}

func expectSucceeded(csv string) {
	Eventually(func(g Gomega) operatorsv1alpha1.ClusterServiceVersionPhase {
		c := &operatorsv1alpha1.ClusterServiceVersion{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: installNS, Name: csv}, c)).To(Succeed())
		return c.Status.Phase
	}).Should(Equal(operatorsv1alpha1.CSVPhaseSucceeded))
}

// expectOperatorDeployment checks the Deployment OLM made from the CSV: the version's image,
// the operator's service account, and the target namespaces handed to the manager.
func expectOperatorDeployment(image string) {
	Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: installNS, Name: operatorDeploy}, d)).To(Succeed())
		g.Expect(d.Spec.Template.Spec.ServiceAccountName).To(Equal(operatorSA))
		i := slices.IndexFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == "manager" })
		g.Expect(i).NotTo(Equal(-1))
		g.Expect(d.Spec.Template.Spec.Containers[i].Image).To(Equal(image))
		g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", installNS))
		g.Expect(d.Status.AvailableReplicas).To(BeNumerically(">=", 1))
	}).Should(Succeed())
}

// can asks the API server whether the operator's service account may do verb on a resource.
func can(verb, group, resource, ns string) bool {
	subresource := ""
	if i := slices.Index([]byte(resource), '/'); i >= 0 {
		resource, subresource = resource[:i], resource[i+1:]
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:" + installNS + ":" + operatorSA,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + installNS},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: verb, Group: group, Resource: resource, Subresource: subresource,
		},
	}}
	Expect(k8s.Create(ctx, sar)).To(Succeed())
	return sar.Status.Allowed
}
