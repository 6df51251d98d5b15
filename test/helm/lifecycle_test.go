package helm

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/test/heldrollback"
)

const (
	release   = "myapp-operator" // the names of config/default
	releaseNS = "myapp-operator-system"
	// manager is the manager's Deployment the chart names after the release.
	manager      = "myapp-operator-controller-manager"
	crdName      = "myapps.example.com"
	appNS        = "team-a"
	appName      = "web"
	appPort      = 8080
	realNodeName = "real-node"
	restricted   = "pod-security.kubernetes.io/enforce"
)

var _ = Describe("The Helm chart", Ordered, func() {
	var (
		probe *appProbe
		pods  map[types.UID]int32 // the app's pods and their restarts, from before the upgrade
		held  *heldrollback.Held  // a MyApp the previous release's manager rolled back
	)
	install := func(chart, tag string, values ...string) {
		GinkgoHelper()
		helm(append([]string{"install", release, chart, "--namespace", releaseNS, "--wait", "--timeout", "3m",
			"--set", "image.repository=" + env["E2E_MANAGER_IMAGE"], "--set", "image.tag=" + tag}, values...)...)
	}

	BeforeAll(func() {
		By("making the release's namespace and the app's, both enforcing the restricted Pod Security level")
		for _, ns := range []string{releaseNS, appNS} {
			Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
				Labels: map[string]string{restricted: "restricted"}}})).To(Succeed())
		}
	})
	AfterAll(func() {
		if probe != nil {
			probe.stop()
		}
	})

	It("installs the previous release's chart and operator, which makes a MyApp that serves and rolls another back", func() {
		// A short grace (the chart's extraArgs), so that the rollback below is quick.
		install(env["E2E_PREVIOUS_CHART"], env["E2E_PREVIOUS_TAG"], "--set-json", `extraArgs=["--rollout-failure-grace=5s"]`)
		expectManagerRunning("")
		// Its pods start while the app's below do.
		held = heldrollback.Create(ctx, k8s, appNS, "held", examplev1.MyAppSpec{Image: env["E2E_APP_IMAGE"], Port: ptr.To(int32(appPort))})

		By("creating a MyApp of the test app, two replicas, and waiting until it serves through its Service")
		Expect(k8s.Create(ctx, &examplev1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: appName},
			Spec: examplev1.MyAppSpec{Image: env["E2E_APP_IMAGE"], Replicas: ptr.To(int32(2)), Port: ptr.To(int32(appPort)),
				Env: []examplev1.EnvVar{{Name: "SHUTDOWN_DELAY", Value: ptr.To("3s")}}},
		})).To(Succeed())
		Eventually(expectAppReady).Should(Succeed())
		svc := &corev1.Service{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: appNS, Name: appName}, svc)).To(Succeed())
		url := fmt.Sprintf("http://%s:%d/", svc.Spec.ClusterIP, appPort)
		Eventually(get).WithArguments(url).Should(Succeed())
		Eventually(func(g Gomega) { pods = appPods(g) }).Should(Succeed())
		Expect(pods).To(HaveLen(2))
		probe = startProbe(url)

		held.Hold(ctx, "previous release's", "registry.invalid/myapp/app:no-such-tag")
	})

	It("upgrades to this chart: helm upgrades the CRD with the release, and the new manager adopts the MyApp, replaces none of its pods and keeps the rollback the old one holds", func() {
		old := managerPods()
		// A short lease (the chart's extraArgs, kept by the upgrades below): the manager of the
		// install after the uninstall waits out the lease of the uninstalled one, which cannot
		// release it once helm deleted its Role, for 15 s rather than a minute.
		helm("upgrade", release, env["E2E_CHART"], "--namespace", releaseNS, "--wait", "--timeout", "3m",
			"--set", "image.repository="+env["E2E_MANAGER_IMAGE"], "--set", "image.tag="+env["E2E_MANAGER_TAG"],
			"--set-json", `extraArgs=["--leader-elect-lease-duration=15s","--leader-elect-renew-deadline=10s","--leader-elect-retry-period=2s"]`)
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: crdName}, crd)).To(Succeed())
		Expect(crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["tolerations"].Items.Schema.Properties["key"].MaxLength).
			To(HaveValue(BeEquivalentTo(317)), "the CRD of this release, which bounds a toleration key")
		d := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: releaseNS, Name: manager}, d)).To(Succeed())
		Expect(d.Spec.Template.Spec.Containers[0].Image).To(HaveSuffix(":" + env["E2E_MANAGER_TAG"]))
		expectManagerRunning(old...)
		expectHandled()
		expectSamePods(pods)
		held.ExpectKept(ctx)
	})

	It("upgrades to a changed value: a new manager adopts the MyApp and replaces none of its pods", func() {
		old := managerPods()
		helm("upgrade", release, env["E2E_CHART"], "--namespace", releaseNS, "--reuse-values", "--wait", "--timeout", "3m",
			"--set", "kubeAPI.qps=30")
		d := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: releaseNS, Name: manager}, d)).To(Succeed())
		Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--kube-api-qps=30"))
		expectManagerRunning(old...)
		expectHandled()
		expectSamePods(pods)
	})

	It("uninstalls the operator and keeps the CRD, the MyApp and its pods, which keep serving", func() {
		out := helm("uninstall", release, "--namespace", releaseNS, "--wait", "--timeout", "3m")
		Expect(out).To(ContainSubstring(crdName), "helm names the CRD it keeps")
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: releaseNS, Name: manager}, &appsv1.Deployment{}))
		}).Should(BeTrue(), "the manager's Deployment is still there")
		Expect(k8s.Get(ctx, client.ObjectKey{Name: crdName}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: appNS, Name: appName}, &examplev1.MyApp{})).To(Succeed())
		// Long enough for a garbage collector that wrongly took the app for an orphan.
		Consistently(func(g Gomega) { g.Expect(appPods(g)).To(Equal(pods)) }, 10*time.Second, time.Second).Should(Succeed())
	})

	It("installs again: the release takes the kept CRD back and the new manager adopts the MyApp as it is", func() {
		install(env["E2E_CHART"], env["E2E_MANAGER_TAG"])
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: crdName}, crd)).To(Succeed())
		Expect(crd.Annotations).To(HaveKeyWithValue("meta.helm.sh/release-name", release))
		Expect(crd.Annotations).To(HaveKeyWithValue("helm.sh/resource-policy", "keep"))
		expectManagerRunning()
		expectHandled()
		expectSamePods(pods)
		report := probe.stop()
		probe = nil
		AddReportEntry("requests to the app through upgrade, uninstall and install", report.String())
		Expect(report.sent).To(BeNumerically(">", 100), "the probe measured nothing: %s", report)
		Expect(report.failed).To(BeZero(), "%s", report)
	})
})

// expectManagerRunning waits until the manager's Deployment has one available pod, on the real
// node, none of the given ones.
func expectManagerRunning(notThese ...string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: releaseNS, Name: manager}, d)).To(Succeed())
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		g.Expect(d.Status.UpdatedReplicas).To(BeEquivalentTo(1))
		g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(1))
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(releaseNS), client.MatchingLabels(d.Spec.Selector.MatchLabels))).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1))
		g.Expect(pods.Items[0].Spec.NodeName).To(Equal(realNodeName))
		g.Expect(notThese).NotTo(ContainElement(pods.Items[0].Name))
	}).Should(Succeed())
}

func managerPods() []string {
	GinkgoHelper()
	pods := &corev1.PodList{}
	Expect(k8s.List(ctx, pods, client.InNamespace(releaseNS), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
	names := make([]string, 0, len(pods.Items))
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	return names
}

func expectAppReady(g Gomega) {
	app := &examplev1.MyApp{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: appNS, Name: appName}, app)).To(Succeed())
	g.Expect(app.Status.ObservedGeneration).To(Equal(app.Generation))
	ready := meta.FindStatusCondition(app.Status.Conditions, examplev1.ConditionReady)
	g.Expect(ready).NotTo(BeNil())
	g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%s: %s", ready.Reason, ready.Message)
}

// expectHandled asks the running manager to reconcile the MyApp and waits until it has: proof
// that this manager, not an earlier one, found nothing to change.
func expectHandled() {
	GinkgoHelper()
	at := time.Now().UTC().Format(time.RFC3339Nano)
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: appName}}
	Expect(k8s.Patch(ctx, app, client.RawPatch(types.MergePatchType,
		fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, examplev1.ReconcileRequestAnnotation, at)))).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
		g.Expect(app.Status.LastHandledReconcileAt).To(Equal(at))
		expectAppReady(g)
	}).Should(Succeed())
}

// appPods maps the app's live pods to their containers' restarts.
func appPods(g Gomega) map[types.UID]int32 {
	pods := &corev1.PodList{}
	g.Expect(k8s.List(ctx, pods, client.InNamespace(appNS), client.MatchingLabels{desired.LabelSelector: appName})).To(Succeed())
	out := map[types.UID]int32{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		g.Expect(p.Spec.NodeName).To(Equal(realNodeName))
		var restarts int32
		for _, c := range p.Status.ContainerStatuses {
			restarts += c.RestartCount
		}
		out[p.UID] = restarts
	}
	return out
}

// expectSamePods checks, for a while, that the app runs the same pods, none restarted.
func expectSamePods(want map[types.UID]int32) {
	GinkgoHelper()
	Consistently(func(g Gomega) { g.Expect(appPods(g)).To(Equal(want)) }, 5*time.Second, 500*time.Millisecond).Should(Succeed())
}

// httpClient opens a new connection for every request: a kept-alive connection opened before
// kube-proxy wrote the Service's rules stays, by its conntrack entry, on whatever answered the
// cluster IP then (on some networks the host's gateway), and would never reach the app. A
// request may take 5 s, as test/traffic's do: an answer that is slow while CI's other lanes
// hold the 2 cores is served (a CI run once lost 1 of 1,425 requests to a 1 s timeout); a
// refused connection, a reset or an error status still fails the probe at once.
var httpClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

func get(url string) error {
	resp, err := httpClient.Get(url)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// appProbe asks the app for a page every 100 ms, a new connection each time, and counts the
// failures.
type appProbe struct {
	sent, failed atomic.Int64
	done         chan struct{}
	wg           sync.WaitGroup
	mu           sync.Mutex
	errs         []string
}

type probeReport struct {
	sent, failed int64
	errs         []string
}

func (r probeReport) String() string {
	return fmt.Sprintf("%d requests, %d failed %v", r.sent, r.failed, r.errs)
}

func startProbe(url string) *appProbe {
	p := &appProbe{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-tick.C:
			}
			p.sent.Add(1)
			if err := get(url); err != nil {
				p.failed.Add(1)
				p.mu.Lock()
				if len(p.errs) < 5 {
					p.errs = append(p.errs, time.Now().UTC().Format("15:04:05.000")+" "+err.Error())
				}
				p.mu.Unlock()
			}
		}
	}()
	return p
}

func (p *appProbe) stop() probeReport {
	close(p.done)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return probeReport{sent: p.sent.Load(), failed: p.failed.Load(), errs: slices.Clone(p.errs)}
}
