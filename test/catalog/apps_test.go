package catalog

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/test/traffic"
)

const (
	appPort      = 8080
	realNodeName = "real-node"
	// requestsPerSecond is each app's load during an upgrade or an uninstall, as a steady
	// stream of small clients would send it.
	requestsPerSecond = 20
	// trafficLimit bounds every stream, so that a story that hangs stops loading the node.
	trafficLimit = 10 * time.Minute
	// maxFailedPerMille is how many requests in a thousand may fail before the test does. The
	// goal is none: the apps keep serving while their pods are replaced (the test app drains
	// for shutdownDelay after SIGTERM, as Kubernetes' pod termination docs advise, and the
	// Deployments surge before they remove a pod). One in a thousand leaves room for a single
	// connection that meets a pod in the instant its endpoint changes, and fails any drop a
	// user would notice: a pod removed before its replacement is ready fails about half the
	// requests of that time, hundreds in a migration.
	maxFailedPerMille = 1
	// shutdownDelay is how long the test app keeps serving after SIGTERM: more than the few
	// hundred milliseconds in which the endpoint controller and kube-proxy drop a terminating
	// pod on one node, and well within the 30 s grace period.
	shutdownDelay = "3s"
)

// appNames are the two MyApps each story runs.
var appNames = []string{"web", "api"}

// legacyLabel is the label 0.2.0 selects pods on; selectorLabel is the current one.
const (
	legacyLabel   = "app.kubernetes.io/instance"
	selectorLabel = "myapp.example.com/name"
)

// createApps creates the two MyApps in ns as a 0.2.0 user would write them: the test app's
// first version, two replicas, its port.
func createApps(ns string) {
	for _, name := range appNames {
		two, port := int32(2), int32(appPort)
		Expect(k8s.Create(ctx, &examplev1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: examplev1.MyAppSpec{
				Image: env["E2E_APP_IMAGE"] + ":v1", Replicas: &two, Port: &port,
				Env: []examplev1.EnvVar{{Name: "SHUTDOWN_DELAY", Value: ptr.To(shutdownDelay)}},
			},
		})).To(Succeed())
	}
}

// expectAppsServing waits until each app's Deployment has rolled out its two pods on the real
// node and the app answers through its Service's cluster IP, and returns the URLs.
func expectAppsServing(ns string) []string {
	urls := make([]string, 0, len(appNames))
	for _, name := range appNames {
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
			g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
			g.Expect(d.Status.UpdatedReplicas).To(BeEquivalentTo(2))
			g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(2))
			for _, p := range appPods(g, ns, name) {
				g.Expect(p.Spec.NodeName).To(Equal(realNodeName))
			}
		}).Should(Succeed(), "MyApp %s/%s", ns, name)
		svc := &corev1.Service{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, svc)).To(Succeed())
		url := fmt.Sprintf("http://%s:%d/", svc.Spec.ClusterIP, appPort)
		Eventually(trafficGet).WithArguments(url).Should(Succeed())
		urls = append(urls, url)
	}
	return urls
}

func trafficGet(url string) error { return traffic.Get(url) }

// appPods are the pods of one app that are not terminating.
func appPods(g Gomega, ns, name string) []corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/name": name})).To(Succeed())
	var live []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	return live
}

// podRestarts maps every pod of the apps in ns to its containers' restart count.
func podRestarts(g Gomega, ns string) map[types.UID]int32 {
	out := map[types.UID]int32{}
	for _, name := range appNames {
		for _, p := range appPods(g, ns, name) {
			var restarts int32
			for _, c := range p.Status.ContainerStatuses {
				restarts += c.RestartCount
			}
			out[p.UID] = restarts
		}
	}
	return out
}

// expectMigrated waits until the current operator has moved each app to its pod selector: the
// Deployment selects on selectorLabel, every pod carries it, two are available, and the MyApp
// is Ready for its generation and no longer Reconciling.
func expectMigrated(ns string) {
	for _, name := range appNames {
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
			g.Expect(d.Spec.Selector.MatchLabels).To(Equal(map[string]string{selectorLabel: name}))
			g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(2))
			pods := appPods(g, ns, name)
			g.Expect(pods).To(HaveLen(2))
			for _, p := range pods {
				g.Expect(p.Labels).To(HaveKeyWithValue(selectorLabel, name))
			}
			expectAppReady(g, ns, name)
		}).Should(Succeed(), "MyApp %s/%s", ns, name)
	}
}

func expectAppReady(g Gomega, ns, name string) {
	app := &examplev1.MyApp{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, app)).To(Succeed())
	g.Expect(app.Status.ObservedGeneration).To(Equal(app.Generation))
	ready := meta.FindStatusCondition(app.Status.Conditions, examplev1.ConditionReady)
	g.Expect(ready).NotTo(BeNil())
	g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%s: %s", ready.Reason, ready.Message)
	g.Expect(meta.IsStatusConditionTrue(app.Status.Conditions, examplev1.ConditionReconciling)).To(BeFalse())
}

// requestReconcile asks the running operator to reconcile each app and waits until it has:
// proof that an operator handles them.
func requestReconcile(ns string) {
	at := time.Now().UTC().Format(time.RFC3339Nano)
	for _, name := range appNames {
		app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		Expect(k8s.Patch(ctx, app, client.RawPatch(types.MergePatchType,
			fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, examplev1.ReconcileRequestAnnotation, at)))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.LastHandledReconcileAt).To(Equal(at))
			expectAppReady(g, ns, name)
		}).Should(Succeed(), "MyApp %s/%s", ns, name)
	}
}

// startAppTraffic starts a stream of requests to each URL.
func startAppTraffic(urls []string) []*traffic.Stream {
	streams := make([]*traffic.Stream, 0, len(urls))
	for _, u := range urls {
		streams = append(streams, traffic.Start(u, requestsPerSecond, trafficLimit))
	}
	return streams
}

// stopAppTraffic stops the streams, reports them under what, and fails if they measured
// nothing, did not cover the story, or failed above the threshold.
func stopAppTraffic(what string, streams []*traffic.Stream, started time.Time) {
	for _, s := range streams {
		r := s.Stop()
		AddReportEntry(what+" traffic", r.String())
		GinkgoWriter.Println(what, r.String())
		Expect(r.Truncated).To(BeFalse(), "the stream reached its limit before the story ended: %s", r)
		// A stream that sent far fewer requests than its rate measured nothing.
		Expect(r.Sent).To(BeNumerically(">=", int(time.Since(started).Seconds())*requestsPerSecond/2), "%s", r)
		Expect(r.Failed*1000).To(BeNumerically("<=", r.Sent*maxFailedPerMille), "%s", r)
	}
}

// deleteStaleLease deletes the leader Lease an uninstalled manager could not release (its RBAC
// went with it), as docs/operations/install.md "Uninstalling" says, once its Deployment is
// gone: a manager installed again in ns then leads at once, not when the Lease expires.
func deleteStaleLease(ns string) {
	Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: operatorName}, &appsv1.Deployment{}))
	}).Should(BeTrue(), "the operator's Deployment in %s goes with its uninstall", ns)
	deleteAndWait(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: leaseName}})
}

// deleteAndWait deletes an object and waits until it is gone.
func deleteAndWait(obj client.Object) {
	Expect(client.IgnoreNotFound(k8s.Delete(ctx, obj))).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj))
	}).Should(BeTrue(), "%T %s still exists", obj, obj.GetName())
}
