package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

var _ = Describe("Faults: the control plane restarts under the operator", Ordered, Serial, func() {
	It("converges 100 MyApps through an API server restart, then 100 updates through an etcd restart", func() {
		// Convergence is judged by expectConverged (honest status, exact children), not by every
		// pod being ready: see there why the simulated nodes' pods may stay NotReady.
		// No leader election here: an outage longer than the renew deadline (10 s) makes a
		// leader exit by design (the lease story proves that); this story proves that the
		// clients and informers of a process that stays up reconnect.
		op := startOperatorWith("faults-restart", operatorConfig{noLeaderElection: true})
		Eventually(op.workersStarted).Should(BeTrue())
		ns := newNamespace()
		const n = 100

		By("restarting the API server while the operator reconciles 100 new MyApps")
		restarted := make(chan struct{})
		for i := range n {
			if i == n/2 {
				// Once the operator is part-way through the first half.
				Eventually(func(g Gomega) int {
					return countDeployments(g, ns, func(*appsv1.Deployment) bool { return true })
				}).Should(BeNumerically(">=", 5))
				go func() {
					defer GinkgoRecover()
					defer close(restarted)
					restartComponent("kube-apiserver")
				}()
			}
			createMyApp(myAppSpec(ns, fmt.Sprintf("app-%03d", i), i))
		}
		Eventually(restarted).WithTimeout(4 * time.Minute).Should(BeClosed())
		Eventually(func(g Gomega) {
			if !op.running() {
				StopTrying("the operator exited, see " + op.Log).Now()
			}
			apps := &examplev1.MyAppList{}
			g.Expect(k8s.List(ctx, apps, client.InNamespace(ns))).To(Succeed())
			g.Expect(apps.Items).To(HaveLen(n))
			expectConverged(g, ns)
		}).WithTimeout(4 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

		By("restarting etcd while the operator rolls out a new image to all 100")
		restarted = make(chan struct{})
		for i := range n {
			if i == n/2 {
				Eventually(func(g Gomega) int {
					return countDeployments(g, ns, func(d *appsv1.Deployment) bool {
						return d.Spec.Template.Spec.Containers[0].Image == "nginx:1.28"
					})
				}).Should(BeNumerically(">=", 5))
				go func() {
					defer GinkgoRecover()
					defer close(restarted)
					restartComponent("etcd")
				}()
			}
			updateMyAppPatiently(ns, fmt.Sprintf("app-%03d", i), func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
		}
		Eventually(restarted).WithTimeout(4 * time.Minute).Should(BeClosed())
		Eventually(func(g Gomega) {
			if !op.running() {
				StopTrying("the operator exited, see " + op.Log).Now()
			}
			apps := &examplev1.MyAppList{}
			g.Expect(k8s.List(ctx, apps, client.InNamespace(ns))).To(Succeed())
			g.Expect(apps.Items).To(HaveLen(n))
			for _, a := range apps.Items {
				g.Expect(a.Spec.Image).To(Equal("nginx:1.28"), a.Name)
			}
			expectConverged(g, ns)
		}).WithTimeout(4 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		op.expectNoPanic()
	})
})

// countDeployments counts the namespace's Deployments for which match holds.
func countDeployments(g Gomega, ns string, match func(*appsv1.Deployment) bool) int {
	list := &appsv1.DeploymentList{}
	g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	n := 0
	for i := range list.Items {
		if match(&list.Items[i]) {
			n++
		}
	}
	return n
}

// updateMyAppPatiently is updateMyApp with room for a control plane restart.
func updateMyAppPatiently(ns, name string, mutate func(*examplev1.MyApp)) {
	Eventually(func(g Gomega) {
		app := getMyApp(g, ns, name)
		mutate(app)
		g.Expect(k8s.Update(ctx, app)).To(Succeed())
	}).WithTimeout(3 * time.Minute).Should(Succeed())
}
