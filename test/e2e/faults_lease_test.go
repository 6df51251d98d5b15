package e2e

import (
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
)

// The suite's operators hold a 15 s lease, renewed within 10 s, retried every 2 s
// (operatorConfig.defaultLease); the outage story runs with the manager's own defaults, a
// 1 min lease renewed within 40 s, retried every 5 s (cmd/main.go).
const leaseDuration = 15 * time.Second

var _ = Describe("Faults: the leader's lease", Ordered, Serial, func() {
	It("exits cleanly when the API server is unreachable past the renew deadline, and a standby takes over", func() {
		proxy := startTCPProxy("")
		viaProxy, apiAddr := writeKubeconfigVia(proxy.addr())
		proxy.target = apiAddr
		leader := startOperatorWith("lease-cut", operatorConfig{kubeconfig: viaProxy})
		Eventually(leader.isLeader).WithTimeout(60 * time.Second).Should(BeTrue())
		standby := startOperatorWith("lease-standby", operatorConfig{})
		Eventually(standby.logContains).WithArguments("Attempting to acquire leader lease").Should(BeTrue())
		Expect(standby.isLeader()).To(BeFalse())

		By("cutting the leader off from the API server")
		cut := time.Now()
		proxy.close()
		Eventually(leader.Exited()).WithTimeout(leaseDuration + 30*time.Second).Should(BeClosed())
		exitedAfter := time.Since(cut)
		AddReportEntry("leader exit after losing the API server", exitedAfter.Round(100*time.Millisecond).String())
		Expect(leader.ExitCode()).To(BeNumerically(">", 0), "a lost lease ends the process with an error, see %s", leader.Log)
		Expect(leader.logContains("leader election lost")).To(BeTrue(), "the log says why the process ended, see %s", leader.Log)
		leader.expectNoPanic()

		By("the standby taking over and reconciling")
		Eventually(standby.isLeader).WithTimeout(leaseDuration + 30*time.Second).Should(BeTrue())
		ns := newNamespace()
		newMyApp(ns, "after-cut", "nginx:1.27", 1)
		expectReady(ns, "after-cut", 1)
	})

	It("keeps leading through a 10 s API server outage with the default lease settings, and reconciles after it", func() {
		proxy := startTCPProxy("")
		viaProxy, apiAddr := writeKubeconfigVia(proxy.addr())
		proxy.target = apiAddr
		leader := startOperatorWith("lease-stall", operatorConfig{kubeconfig: viaProxy, defaultLease: true})
		Eventually(leader.isLeader).WithTimeout(60 * time.Second).Should(BeTrue())
		ns := newNamespace()
		newMyApp(ns, "before-stall", "nginx:1.27", 1)
		expectReady(ns, "before-stall", 1)

		By("making the API server unreachable for 10 s")
		proxy.stall(10 * time.Second)
		Consistently(leader.Exited()).WithTimeout(20*time.Second).ShouldNot(BeClosed(),
			"the leader restarted on a 10 s outage, see %s", leader.Log)
		Expect(leader.logContains("leader election lost")).To(BeFalse())

		By("reconciling after the outage, still the same process")
		newMyApp(ns, "after-stall", "nginx:1.27", 1)
		expectReady(ns, "after-stall", 1)
		leader.expectNoPanic()
	})

	It("releases the lease on SIGTERM, so that a standby takes over without waiting for it to expire", func() {
		a, b := startOperator("lease-term-a"), startOperator("lease-term-b")
		Eventually(func() bool { return a.isLeader() || b.isLeader() }).WithTimeout(60 * time.Second).Should(BeTrue())
		leader, standby := a, b
		if b.isLeader() {
			leader, standby = b, a
		}
		Eventually(standby.logContains).WithArguments("Attempting to acquire leader lease").Should(BeTrue())

		lease := &coordinationv1.Lease{}
		Expect(k8s.Get(ctx, key("default", "myapp-operator.example.com"), lease)).To(Succeed())
		held := lease.Spec.HolderIdentity
		Expect(held).To(HaveValue(Not(BeEmpty())))

		term := time.Now()
		leader.stop(syscall.SIGTERM)
		Expect(leader.ExitCode()).To(BeZero(), "a graceful shutdown exits 0, see %s", leader.Log)
		leader.expectNoPanic()
		Expect(k8s.Get(ctx, key("default", "myapp-operator.example.com"), lease)).To(Succeed())
		Expect(lease.Spec.HolderIdentity).NotTo(Equal(held), "the stopped leader still holds the lease: it was not released")
		Eventually(standby.isLeader).WithTimeout(leaseDuration + 30*time.Second).WithPolling(100 * time.Millisecond).Should(BeTrue())
		takeover := time.Since(term)
		AddReportEntry("leader takeover after SIGTERM", takeover.Round(100*time.Millisecond).String())
		// A released lease is taken at the standby's next retry (2 s); an unreleased one only
		// after the lease duration has passed since the last renewal.
		Expect(takeover).To(BeNumerically("<", leaseDuration), "the standby waited for the lease to expire: it was not released")

	})
})
