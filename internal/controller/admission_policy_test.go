package controller

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/admission"
	"github.com/example/myapp-operator/internal/ssa"
)

var _ = Describe("The operator's admission policy", Ordered, func() {
	policyKey := client.ObjectKey{Name: admission.Name}
	requests := &requestCounter{}
	// policyRequests are the requests for the policy or binding seen after the first n, the
	// informers' watches left out.
	policyRequests := func(n int) []string {
		requests.mu.Lock()
		defer requests.mu.Unlock()
		var out []string
		for _, r := range requests.seen[n:] {
			if strings.Contains(r, "validatingadmissionpolic") && !strings.Contains(r, "watch=true") {
				out = append(out, r)
			}
		}
		return out
	}

	BeforeAll(func() {
		By("running the admission policy controller as cmd/main.go wires it, with the manager's cache")
		ctx, cancel := context.WithCancel(suiteCtx)
		skip := true
		mgrCfg := rest.CopyConfig(cfg)
		mgrCfg.Wrap(requests.wrap)
		mgr, err := ctrl.NewManager(mgrCfg, ctrl.Options{
			Scheme:                 scheme,
			Cache:                  CacheOptions(nil, resyncPeriod),
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			Controller:             config.Controller{SkipNameValidation: &skip},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect((&AdmissionPolicyReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)).To(Succeed())
		stopped := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(stopped)
			Expect(mgr.Start(ctx)).To(Succeed())
		}()
		DeferCleanup(func() {
			cancel()
			Eventually(stopped).Should(BeClosed())
			// The other stories run without the policy, as they did before it existed.
			Expect(client.IgnoreNotFound(k8s.Delete(suiteCtx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: admission.Name}}))).To(Succeed())
			Expect(client.IgnoreNotFound(k8s.Delete(suiteCtx, &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: admission.Name}}))).To(Succeed())
		})
	})

	badSysctl := func(ns string) *examplev1.MyApp {
		return &examplev1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: examplev1.MyAppSpec{Image: "nginx:1.27", PodSecurityContext: &corev1.PodSecurityContext{
				Sysctls: []corev1.Sysctl{{Name: "Net.Core.Somaxconn", Value: "1024"}}}},
		}
	}

	It("is applied when the operator starts, and refuses a MyApp whose pods Kubernetes would refuse, naming the field", func() {
		Eventually(func(g Gomega) {
			p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
			g.Expect(k8s.Get(suiteCtx, policyKey, p)).To(Succeed())
			g.Expect(ssa.Has(p, FieldOwner)).To(BeTrue())
			b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
			g.Expect(k8s.Get(suiteCtx, policyKey, b)).To(Succeed())
			g.Expect(b.Spec.ValidationActions).To(Equal([]admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}))
		}).Should(Succeed())

		ns := newNamespace()
		// The API server enforces a policy a moment after it is stored.
		Eventually(func(g Gomega) {
			err := k8s.Create(suiteCtx, badSysctl(ns), client.DryRunAll)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "creating a MyApp with sysctl Net.Core.Somaxconn answered %v", err)
			g.Expect(err.Error()).To(ContainSubstring("spec.podSecurityContext.sysctls"))
		}).Should(Succeed())
	})

	It("comes back when it is deleted, and its binding when it is changed by hand", func() {
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		// The manager applies the policy once it has started.
		Eventually(func() error { return k8s.Get(suiteCtx, policyKey, p) }).Should(Succeed())
		Expect(k8s.Delete(suiteCtx, p)).To(Succeed())
		Eventually(func(g Gomega) {
			again := &admissionregistrationv1.ValidatingAdmissionPolicy{}
			g.Expect(k8s.Get(suiteCtx, policyKey, again)).To(Succeed())
			g.Expect(again.UID).NotTo(Equal(p.UID))
		}).Should(Succeed())

		b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		Eventually(func() error { return k8s.Get(suiteCtx, policyKey, b) }).Should(Succeed())
		b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn}
		Expect(k8s.Update(suiteCtx, b, client.FieldOwner("kubectl-edit"))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(suiteCtx, policyKey, b)).To(Succeed())
			g.Expect(b.Spec.ValidationActions).To(Equal([]admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}))
		}).Should(Succeed())

		By("sending nothing once both hold what the operator applies, through resyncs")
		// The last apply's own watch event may still be on its way: what must come, within a
		// minute, is a window of two resyncs in which nothing is sent.
		Eventually(func(g Gomega) {
			n := requests.count()
			g.Consistently(func() []string { return policyRequests(n) }).WithTimeout(2 * resyncPeriod).Should(BeEmpty())
		}).WithTimeout(time.Minute).Should(Succeed())
	})
})
