package status

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// TestKstatus runs the kstatus library that Flux, kpt and cli-utils use on MyApps whose
// status Compute wrote, in each phase, and checks what those tools would report.
func TestKstatus(t *testing.T) {
	refused := withCondition(deployment(1, 1, 2, 0, 0, 0, 0, false), appsv1.DeploymentCondition{
		Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "forbidden"})
	deadline := withCondition(deployment(1, 1, 3, 4, 1, 3, 3, true), appsv1.DeploymentCondition{
		Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"})

	cases := map[string]struct {
		obs  Observed
		want kstatus.Status
	}{
		"rolled out":                 {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true)}, kstatus.CurrentStatus},
		"scaled to zero":             {Observed{Deployment: deployment(1, 1, 0, 0, 0, 0, 0, true)}, kstatus.CurrentStatus},
		"rolling out":                {Observed{Deployment: deployment(1, 1, 3, 4, 1, 3, 3, true)}, kstatus.InProgressStatus},
		"scaling up":                 {Observed{Deployment: deployment(1, 1, 5, 3, 3, 3, 3, true)}, kstatus.InProgressStatus},
		"no Deployment yet":          {Observed{}, kstatus.InProgressStatus},
		"progress deadline exceeded": {Observed{Deployment: deadline}, kstatus.FailedStatus},
		"pods refused":               {Observed{Deployment: refused}, kstatus.FailedStatus},
		"child not owned": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true),
			Failures: []Failure{{Reason: examplev1.ReasonChildNotOwned, Message: "m", Terminal: true}}}, kstatus.FailedStatus},
		"child rejected": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true),
			Failures: []Failure{{Reason: examplev1.ReasonChildRejected, Message: "m", Terminal: true}}}, kstatus.FailedStatus},
		"rolled back": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true), DeploymentStale: true,
			RolledBack: &examplev1.RollbackStatus{Reason: examplev1.ReasonImagePullBackOff, Message: "m"}}, kstatus.FailedStatus},
		"waiting for a predecessor": {Observed{Waiting: &Failure{Reason: examplev1.ReasonWaitingForPredecessor, Message: "m"}}, kstatus.InProgressStatus},
		"waiting for the Gateway": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true),
			Unreachable: &Failure{Reason: examplev1.ReasonWaitingForGateway, Message: "m"}}, kstatus.InProgressStatus},
		"route refused": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true),
			Failures: []Failure{{Reason: examplev1.ReasonRouteNotAccepted, Message: "m", Terminal: true}}}, kstatus.FailedStatus},
		"no Gateway API": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true),
			Failures: []Failure{{Reason: examplev1.ReasonGatewayAPINotInstalled, Message: "m", Terminal: true}}}, kstatus.FailedStatus},
		"waiting for cert-manager to issue the certificate": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true),
			Unreachable: &Failure{Reason: examplev1.ReasonCertificateNotReady, Message: "m"}}, kstatus.InProgressStatus},
		"a certificate renewal failed, the certificate issued before still served": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true),
			Failures: []Failure{{Reason: examplev1.ReasonCertificateIssueFailed, Message: "m", Terminal: true, ServedWithout: true}}}, kstatus.CurrentStatus},
		"no cert-manager": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true),
			Failures: []Failure{{Reason: examplev1.ReasonCertManagerNotInstalled, Message: "m", Terminal: true}}}, kstatus.FailedStatus},

		"a canary under way": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true), DeploymentStale: true,
			Canary: canaryIn("Progressing")}, kstatus.InProgressStatus},
		"a canary paused for the user": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true), DeploymentStale: true,
			Canary: canaryIn("Paused")}, kstatus.InProgressStatus},
		"a canary promoted": {Observed{Deployment: deployment(1, 1, 3, 4, 1, 3, 3, true), Canary: canaryIn("Promoting")}, kstatus.InProgressStatus},
		"a canary whose check cannot be evaluated": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true), DeploymentStale: true,
			Canary: func() *Canary {
				c := canaryIn("Progressing")
				c.Inconclusive = "check \"a\" cannot be evaluated"
				return c
			}()}, kstatus.InProgressStatus},
		"a canary aborted": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true), DeploymentStale: true,
			Canary: canaryIn("Aborted")}, kstatus.FailedStatus},
		"a promotion aborted after it moved the stable pods, its canary keeping the requests until they are back": {Observed{
			Deployment: deployment(3, 2, 4, 5, 1, 4, 4, false), DeploymentStale: true,
			Canary: func() *Canary {
				c := canaryIn("Aborted")
				c.Status.Weight, c.Status.Size, c.Status.StableMoved = 100, 100, true
				return c
			}()}, kstatus.FailedStatus},
		"a release held for want of a Prometheus": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true), DeploymentStale: true,
			Canary: &Canary{Steps: 2, Unavailable: true, Held: true}}, kstatus.FailedStatus},
		"metric checks without a Prometheus, no release pending": {Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true),
			Canary: &Canary{Steps: 2, Unavailable: true}}, kstatus.CurrentStatus},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := &examplev1.MyApp{}
			app.APIVersion, app.Kind = examplev1.GroupVersion.String(), "MyApp"
			app.Name, app.Namespace, app.Generation = "web", "shop", 1
			app.Status = Compute(app, tc.obs, t0)
			g.Expect(kstatusOf(g, app)).To(Equal(tc.want))
		})
	}

	t.Run("a new generation not yet reconciled", func(t *testing.T) {
		g := NewWithT(t)
		app := &examplev1.MyApp{}
		app.APIVersion, app.Kind = examplev1.GroupVersion.String(), "MyApp"
		app.Generation = 1
		app.Status = Compute(app, Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true)}, t0)
		app.Generation = 2
		g.Expect(kstatusOf(g, app)).To(Equal(kstatus.InProgressStatus))
	})
}

func kstatusOf(g Gomega, app *examplev1.MyApp) kstatus.Status {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(app)
	g.Expect(err).NotTo(HaveOccurred())
	res, err := kstatus.Compute(&unstructured.Unstructured{Object: raw})
	g.Expect(err).NotTo(HaveOccurred())
	return res.Status
}

// canaryIn is a canary recorded in phase, at its second step of four.
func canaryIn(phase string) *Canary {
	return &Canary{Steps: 4, Status: &examplev1.CanaryStatus{Template: "t", Phase: phase, Step: 1, Weight: 25, Size: 25,
		Reason: "CrashLoopBackOff", Message: "step 2 of 4: the canary's pods fail"}}
}
