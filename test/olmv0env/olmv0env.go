// Package olmv0env reads and approves OLM v0's Subscriptions, InstallPlans and
// ClusterServiceVersions for the suites that install the operator through OLM v0 (test/olm on
// simulated nodes, test/catalog on a real node). Its functions are Ginkgo steps: they fail the
// spec that calls them, at the caller's line, and wait with the suite's default Eventually
// timeout.
package olmv0env

import (
	"context"

	. "github.com/onsi/ginkgo/v2" //nolint:revive,staticcheck // Ginkgo's DSL, as in the suites
	. "github.com/onsi/gomega"    //nolint:revive,staticcheck // Gomega's DSL, as in the suites
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var ctx = context.Background()

// Subscription is a Subscription in the namespace the operator is installed into; its CSVs
// live in that namespace too.
type Subscription struct {
	K8s             client.Client
	Namespace, Name string
}

// ApproveAndComplete waits for the Subscription's InstallPlan that installs csv, approves it,
// and waits until OLM has carried it out.
func (s Subscription) ApproveAndComplete(csv string) {
	GinkgoHelper()
	var plan operatorsv1alpha1.InstallPlan
	Eventually(func(g Gomega) {
		sub := &operatorsv1alpha1.Subscription{}
		g.Expect(s.K8s.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.Name}, sub)).To(Succeed())
		g.Expect(sub.Status.InstallPlanRef).NotTo(BeNil(), "%v", sub.Status.Conditions)
		g.Expect(s.K8s.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: sub.Status.InstallPlanRef.Name}, &plan)).To(Succeed())
		g.Expect(plan.Spec.ClusterServiceVersionNames).To(ContainElement(csv))
	}).Should(Succeed())
	if !plan.Spec.Approved {
		// A merge patch carries no resourceVersion, so OLM's own writes to the plan in between
		// cannot make the approval conflict.
		approved := plan.DeepCopy()
		approved.Spec.Approved = true
		Expect(s.K8s.Patch(ctx, approved, client.MergeFrom(&plan))).To(Succeed())
	}
	Eventually(func(g Gomega) operatorsv1alpha1.InstallPlanPhase {
		g.Expect(s.K8s.Get(ctx, client.ObjectKeyFromObject(&plan), &plan)).To(Succeed())
		g.Expect(plan.Status.Phase).NotTo(Equal(operatorsv1alpha1.InstallPlanPhaseFailed), "%v", plan.Status.Conditions)
		return plan.Status.Phase
	}).Should(Equal(operatorsv1alpha1.InstallPlanPhaseComplete))
}

// ExpectSucceeded waits until the CSV reaches Succeeded, and fails at once if it fails.
func (s Subscription) ExpectSucceeded(csv string) {
	GinkgoHelper()
	Eventually(func(g Gomega) operatorsv1alpha1.ClusterServiceVersionPhase {
		c := &operatorsv1alpha1.ClusterServiceVersion{}
		g.Expect(s.K8s.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: csv}, c)).To(Succeed())
		g.Expect(c.Status.Phase).NotTo(Equal(operatorsv1alpha1.CSVPhaseFailed), "%s: %s", c.Status.Reason, c.Status.Message)
		return c.Status.Phase
	}).Should(Equal(operatorsv1alpha1.CSVPhaseSucceeded))
}

// ExpectCSVGone waits until OLM has removed the CSV an upgrade replaced.
func (s Subscription) ExpectCSVGone(csv string) {
	GinkgoHelper()
	Eventually(func() bool {
		return apierrors.IsNotFound(s.K8s.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: csv}, &operatorsv1alpha1.ClusterServiceVersion{}))
	}).Should(BeTrue(), "the replaced CSV should be removed")
}
