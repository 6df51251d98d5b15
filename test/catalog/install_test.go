package catalog

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/myapp-operator/internal/testutil"
	"github.com/example/myapp-operator/test/olmv0env"
	"github.com/example/myapp-operator/test/olmv1env"
)

const (
	pkg          = "myapp-operator"
	csv020       = "myapp-operator.v0.2.0"
	currentCSV   = "myapp-operator.v0.5.0"
	current      = "0.5.0"
	operatorName = "myapp-operator-controller-manager" // the manager's Deployment and ServiceAccount
	crdName      = "myapps.example.com"
	leaseName    = "myapp-operator.example.com" // the manager's leader election ID
	// The namespaces of config/olm (OwnNamespace: the operator and its MyApps) and of
	// config/olmv1 (the operator; its MyApps live anywhere).
	olmNS        = "myapp-operator"
	olmv1NS      = "myapp-operator-system"
	olmv1AppNS   = "team-a"
	catalogNS    = "olm" // config/olm/catalogsource.yaml
	catalogName  = "myapp-operator-catalog"
	managerImage = "example.com/myapp-operator:v" // + version: as the bundles name it
	// The mirror of a disconnected cluster (hack/catalog/disconnected.sh): images by digest only.
	mirrorRepo        = "example.com/disconnected"
	mirrorCatalogName = "myapp-operator-mirror"
	mirrorAppNS       = "mirror-apps"
)

var (
	olmSamples   = filepath.Join(repoRoot, "config", "olm")
	olmv1Samples = filepath.Join(repoRoot, "config", "olmv1")
)

// Both stories run on one cluster, one after the other: each removes the CRD it leaves, so
// that the next installs it as its own.
var _ = Describe("Installing from the catalog image", Ordered, func() {
	It("OLM v0: serves the catalog image from a registry pod, installs 0.2.0 with a manually approved Subscription, upgrades to the current version while two MyApps serve every request, and uninstalls and reinstalls without restarting their pods", func() {
		kube := olmv1env.Env{K8s: k8s, Kubeconfig: kubeconfig, LogDir: logDir}
		sub := olmv0env.Subscription{K8s: k8s, Namespace: olmNS, Name: pkg}
		By("starting OLM v0's olm and catalog operators, out of cluster, with images built here for unpacking bundles")
		crds, err := filepath.Glob(filepath.Join(env["E2E_OLM_CRDS"], "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(crds).NotTo(BeEmpty())
		for _, f := range crds {
			kube.ApplyFile(f, nil)
		}
		Eventually(func(g Gomega) {
			list := &apiextensionsv1.CustomResourceDefinitionList{}
			g.Expect(k8s.List(ctx, list)).To(Succeed())
			for _, crd := range list.Items {
				g.Expect(crd.Status.Conditions).To(ContainElement(And(
					HaveField("Type", apiextensionsv1.Established), HaveField("Status", apiextensionsv1.ConditionTrue))), crd.Name)
			}
		}).Should(Succeed())
		kube.ApplyYAML("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + catalogNS + "\n")
		run("olm", filepath.Join(env["E2E_OLM_BIN"], "olm"), "--namespace="+catalogNS, "--writeStatusName=",
			"--writePackageServerStatusName=")
		// The catalog operator dials the registry pod by its Service's cluster DNS name, which
		// only a process in the cluster resolves: out of cluster, it runs with a hosts file of
		// its own (bound over /etc/hosts in a mount namespace) that names the Service's cluster
		// IP once OLM has made the Service.
		hosts := filepath.Join(GinkgoT().TempDir(), "hosts")
		Expect(os.WriteFile(hosts, []byte("127.0.0.1 localhost\n::1 localhost\n"), 0o644)).To(Succeed())
		run("catalog", "unshare", "--mount", "--propagation", "private", "sh", "-c", `mount --bind "$0" /etc/hosts && exec "$@"`,
			hosts, filepath.Join(env["E2E_OLM_BIN"], "catalog"), "--namespace="+catalogNS, "--writeStatusName=",
			"--kubeconfig="+kubeconfig, "--util-image="+env["E2E_OLM_UTIL_IMAGE"], "--opmImage="+env["E2E_OPM_IMAGE"])

		By("applying config/olm/catalogsource.yaml: its registry pod serves the catalog image on the real node")
		started := time.Now()
		kube.ApplyFile(filepath.Join(olmSamples, "catalogsource.yaml"), nil)
		keepHostsFile(hosts, catalogNS, catalogName)
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8s.List(ctx, pods, client.InNamespace(catalogNS), client.MatchingLabels{"olm.catalogSource": catalogName})).To(Succeed())
			g.Expect(pods.Items).NotTo(BeEmpty())
			for _, p := range pods.Items {
				g.Expect(p.Spec.NodeName).To(Equal(realNodeName))
				g.Expect(p.Spec.Containers[0].Image).To(Equal("example.com/myapp-operator-catalog:latest"))
				g.Expect(isReady(p)).To(BeTrue(), "registry pod %s: %v", p.Name, p.Status.ContainerStatuses)
			}
			cs := &operatorsv1alpha1.CatalogSource{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: catalogNS, Name: catalogName}, cs)).To(Succeed())
			g.Expect(cs.Status.GRPCConnectionState).NotTo(BeNil())
			g.Expect(cs.Status.GRPCConnectionState.LastObservedState).To(Equal("READY"))
		}).Should(Succeed())
		AddReportEntry("OLM v0 CatalogSource serving", since(started))

		By("applying config/olm's OperatorGroup and its Subscription, starting at 0.2.0 with manual approval")
		kube.ApplyFile(filepath.Join(olmSamples, "operatorgroup.yaml"), nil)
		subscribe := func(startingCSV string) {
			kube.ApplyFile(filepath.Join(olmSamples, "subscription.yaml"), func(u *unstructured.Unstructured) {
				Expect(unstructured.SetNestedField(u.Object, string(operatorsv1alpha1.ApprovalManual), "spec", "installPlanApproval")).To(Succeed())
				if startingCSV != "" {
					Expect(unstructured.SetNestedField(u.Object, startingCSV, "spec", "startingCSV")).To(Succeed())
				}
			})
		}
		started = time.Now()
		subscribe(csv020)
		sub.ApproveAndComplete(csv020)
		sub.ExpectSucceeded(csv020)
		expectManagerPod(olmNS, "0.2.0")
		AddReportEntry("OLM v0 install of 0.2.0 from the catalog", since(started))

		By("checking that OLM unpacked the bundle images with its Job on the real node")
		jobs := &batchv1.JobList{}
		Expect(k8s.List(ctx, jobs, client.InNamespace(catalogNS))).To(Succeed())
		Expect(slices.ContainsFunc(jobs.Items, func(j batchv1.Job) bool { return j.Status.Succeeded > 0 })).To(BeTrue(),
			"no unpack Job succeeded in %s", catalogNS)

		By("running two MyApps on 0.2.0 and sending each a steady stream of requests")
		createApps(olmNS)
		urls := expectAppsServing(olmNS)
		streams := startAppTraffic(urls)
		started = time.Now()

		By("approving the upgrade to the current version: OLM replaces the operator, which migrates the apps' selector")
		sub.ApproveAndComplete(currentCSV)
		sub.ExpectSucceeded(currentCSV)
		sub.ExpectCSVGone(csv020)
		expectManagerPod(olmNS, current)
		AddReportEntry("OLM v0 upgrade from 0.2.0 (approval to the new manager running)", since(started))
		expectMigrated(olmNS)
		AddReportEntry("OLM v0 upgrade from 0.2.0 (approval to both MyApps migrated)", since(started))
		stopAppTraffic("OLM v0 upgrade", streams, started)

		By("uninstalling as the OLM docs say, deleting the Subscription and the CSV: the apps keep serving")
		before := podRestarts(Default, olmNS)
		streams = startAppTraffic(urls)
		started = time.Now()
		deleteAndWait(&operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: olmNS, Name: pkg}})
		deleteAndWait(&operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: olmNS, Name: currentCSV}})
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: olmNS, Name: operatorName}, &appsv1.Deployment{}))
		}).Should(BeTrue(), "the operator's Deployment should go with its CSV")
		Consistently(func(g Gomega) {
			g.Expect(podRestarts(g, olmNS)).To(Equal(before))
		}).WithTimeout(10 * time.Second).WithPolling(time.Second).Should(Succeed())
		deleteStaleLease(olmNS)

		By("reinstalling from the catalog: the current operator adopts the apps without restarting a pod")
		subscribe("")
		sub.ApproveAndComplete(currentCSV)
		sub.ExpectSucceeded(currentCSV)
		expectManagerPod(olmNS, current)
		requestReconcile(olmNS)
		Expect(podRestarts(Default, olmNS)).To(Equal(before), "no pod may be replaced or restarted")
		stopAppTraffic("OLM v0 uninstall and reinstall", streams, started)

		By("uninstalling again and removing what OLM v0 leaves, the CRD and the bundle's ClusterRoles, for the OLM v1 story")
		deleteAndWait(&operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: olmNS, Name: pkg}})
		deleteAndWait(&operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: olmNS, Name: currentCSV}})
		deleteAndWait(&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}})
		// OLM v1 refuses to install over objects it did not create, and OLM v0 keeps the
		// bundle's cluster-scoped objects, labelled with the CSV that installed them.
		left := &rbacv1.ClusterRoleList{}
		Expect(k8s.List(ctx, left, client.MatchingLabels{"olm.managed": "true", "olm.owner": currentCSV})).To(Succeed())
		names := make([]string, 0, len(left.Items))
		for _, r := range left.Items {
			names = append(names, r.Name)
		}
		Expect(names).To(ConsistOf(pkg+"-metrics-reader", pkg+"-myapp-admin-role", pkg+"-myapp-editor-role", pkg+"-myapp-viewer-role"),
			"the bundle's ClusterRoles OLM v0 keeps, as docs/operations/install.md lists them")
		for i := range left.Items {
			deleteAndWait(&left.Items[i])
		}
		deleteAndWait(&operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: catalogNS, Name: catalogName}})
	})

	It("OLM v1, disconnected: installs the current version from a mirror that holds only the images the pinned bundle names, by digest, with no tag to fall back on, and runs MyApps with it", func() {
		work, err := os.MkdirTemp("", "catalog-test-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, work)
		olm := olmv1env.Env{K8s: k8s, Kubeconfig: kubeconfig, LogDir: logDir, Work: work}
		mirrorCatalog := env["E2E_MIRROR_CATALOG"]
		Expect(mirrorCatalog).To(HavePrefix(mirrorRepo + "/myapp-operator-catalog@sha256:"))
		By("checking the mirror: the catalog, bundle and manager repositories hold no tag")
		for _, repo := range []string{"myapp-operator-catalog", "myapp-operator-bundle", "myapp-operator"} {
			Expect(registryTags(mirrorRepo+"/"+repo)).To(BeEmpty(), "tags in %s/%s", mirrorRepo, repo)
		}

		By("starting catalogd and operator-controller out of cluster; they pull example.com/ from the cluster's registry")
		olm.Start(env["E2E_OLMV1_BIN"], env["E2E_OLMV1_CRDS"], env["E2E_REGISTRY"])
		// Registered after olm.Start, so it runs first, while OLM v1's controllers still run
		// and can release their finalizers: the next story starts with none of this spec's
		// objects, however this one ends.
		ext := &unstructured.Unstructured{}
		ext.SetGroupVersionKind(olmv1env.GVK("ClusterExtension"))
		ext.SetName(olmv1env.Extension)
		cat := &unstructured.Unstructured{}
		cat.SetGroupVersionKind(olmv1env.GVK("ClusterCatalog"))
		cat.SetName(mirrorCatalogName)
		DeferCleanup(func() {
			deleteAndWait(ext)
			Eventually(func() bool {
				return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Name: crdName}, &apiextensionsv1.CustomResourceDefinition{}))
			}).Should(BeTrue(), "the CRD goes with the ClusterExtension")
			deleteAndWait(cat)
			deleteAndWait(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mirrorAppNS}})
			deleteStaleLease(olmv1NS)
		})
		olm.ApplyFile(filepath.Join(olmv1Samples, "namespace.yaml"), nil)
		olm.ApplyFile(filepath.Join(olmv1Samples, "installer-rbac.yaml"), nil)

		By("a ClusterCatalog of the mirror's catalog image, by digest")
		started := time.Now()
		olm.ApplyFile(filepath.Join(olmv1Samples, "clustercatalog.yaml"), func(u *unstructured.Unstructured) {
			u.SetName(mirrorCatalogName)
			// The label catalogd's mutating webhook puts on every ClusterCatalog, which a
			// ClusterExtension selects catalogs by; catalogd runs out of cluster here, where the
			// API server does not call its webhook.
			u.SetLabels(map[string]string{"olm.operatorframework.io/metadata.name": mirrorCatalogName})
			Expect(unstructured.SetNestedField(u.Object, mirrorCatalog, "spec", "source", "image", "ref")).To(Succeed())
			// An image named by digest never changes: OLM v1 refuses a poll interval for it.
			unstructured.RemoveNestedField(u.Object, "spec", "source", "image", "pollIntervalMinutes")
		})
		Eventually(func(g Gomega) {
			cat := olm.Get(g, "ClusterCatalog", mirrorCatalogName)
			g.Expect(olmv1env.Condition(cat, "Serving")).To(HaveField("Status", metav1.ConditionTrue), "%v", olmv1env.Conditions(cat))
		}).Should(Succeed())

		By("the sample ClusterExtension, resolving from the mirror's catalog only")
		olm.ApplyFile(filepath.Join(olmv1Samples, "clusterextension.yaml"), func(u *unstructured.Unstructured) {
			Expect(unstructured.SetNestedField(u.Object, current, "spec", "source", "catalog", "version")).To(Succeed())
			Expect(unstructured.SetNestedStringMap(u.Object, map[string]string{"olm.operatorframework.io/metadata.name": mirrorCatalogName},
				"spec", "source", "catalog", "selector", "matchLabels")).To(Succeed())
		})
		olm.ExpectInstalled(current)
		var manager string
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8s.List(ctx, pods, client.InNamespace(olmv1NS), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(1))
			p := pods.Items[0]
			g.Expect(p.Spec.NodeName).To(Equal(realNodeName))
			manager = p.Spec.Containers[0].Image
			g.Expect(manager).To(HavePrefix(mirrorRepo + "/myapp-operator@sha256:"))
			g.Expect(isReady(p)).To(BeTrue(), "%v", p.Status.ContainerStatuses)
			g.Expect(p.Status.ContainerStatuses[0].ImageID).To(HaveSuffix(manager[strings.Index(manager, "@"):]))
		}).Should(Succeed())
		AddReportEntry("OLM v1 install from the digest-only mirror", since(started))

		By("running two MyApps with the operator installed from the mirror")
		olm.ApplyYAML("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + mirrorAppNS + "\n")
		createApps(mirrorAppNS)
		expectAppsServing(mirrorAppNS)

		By("uninstalling (when the spec ends): OLM v1 removes the operator, its CRD and with it the MyApps; the mirror's catalog and the apps' namespace go too")
	})

	It("OLM v1: a ClusterCatalog pulls the catalog image, a ClusterExtension installs 0.2.0 and upgrades to the current version with the documented preflight step while two MyApps serve every request", func() {
		work, err := os.MkdirTemp("", "catalog-test-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, work)
		olm := olmv1env.Env{K8s: k8s, Kubeconfig: kubeconfig, LogDir: logDir, Work: work}
		By("starting catalogd and operator-controller out of cluster; they pull example.com/ from the cluster's registry")
		olm.Start(env["E2E_OLMV1_BIN"], env["E2E_OLMV1_CRDS"], env["E2E_REGISTRY"])

		By("applying config/olmv1 as a user would: the ClusterCatalog and the installer account")
		started := time.Now()
		olm.ApplyFile(filepath.Join(olmv1Samples, "namespace.yaml"), nil)
		olm.ApplyFile(filepath.Join(olmv1Samples, "installer-rbac.yaml"), nil)
		olm.ApplyFile(filepath.Join(olmv1Samples, "clustercatalog.yaml"), nil)
		Eventually(func(g Gomega) {
			cat := olm.Get(g, "ClusterCatalog", catalogName)
			g.Expect(olmv1env.Condition(cat, "Serving")).To(HaveField("Status", metav1.ConditionTrue), "%v", olmv1env.Conditions(cat))
		}).Should(Succeed())
		AddReportEntry("OLM v1 ClusterCatalog serving", since(started))

		By("installing 0.2.0: the sample ClusterExtension, pinned to 0.2.0")
		started = time.Now()
		olm.ApplyFile(filepath.Join(olmv1Samples, "clusterextension.yaml"), func(u *unstructured.Unstructured) {
			Expect(unstructured.SetNestedField(u.Object, "0.2.0", "spec", "source", "catalog", "version")).To(Succeed())
		})
		olm.ExpectInstalled("0.2.0")
		expectManagerPod(olmv1NS, "0.2.0")
		AddReportEntry("OLM v1 install of 0.2.0 from the catalog", since(started))

		By("running two MyApps on 0.2.0 and sending each a steady stream of requests")
		olm.ApplyYAML("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + olmv1AppNS + "\n")
		createApps(olmv1AppNS)
		urls := expectAppsServing(olmv1AppNS)
		streams := startAppTraffic(urls)
		started = time.Now()

		By("upgrading to the current version with the documented preflight step: OLM v1 replaces the operator, which migrates the apps")
		olm.PatchExtension(`{"spec":{"source":{"catalog":{"version":"` + current + `"}},` +
			`"install":{"preflight":{"crdUpgradeSafety":{"enforcement":"None"}}}}}`)
		olm.ExpectInstalled(current)
		expectManagerPod(olmv1NS, current)
		AddReportEntry("OLM v1 upgrade from 0.2.0 (patch to the new manager running)", since(started))
		expectMigrated(olmv1AppNS)
		AddReportEntry("OLM v1 upgrade from 0.2.0 (patch to both MyApps migrated)", since(started))
		stopAppTraffic("OLM v1 upgrade", streams, started)

		By("setting the preflight back to its default, as the upgrade docs say once the upgrade is done")
		olm.PatchExtension(`{"spec":{"install":null}}`)
		olm.ExpectInstalled(current)
		requestReconcile(olmv1AppNS)
	})
})

// expectManagerPod waits until the operator's only pod in ns runs that version's image on the
// real node and is ready.
func expectManagerPod(ns, version string) {
	Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
		var live []corev1.Pod
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil {
				live = append(live, p)
			}
		}
		g.Expect(live).To(HaveLen(1))
		p := live[0]
		g.Expect(p.Spec.NodeName).To(Equal(realNodeName))
		g.Expect(p.Spec.Containers[0].Image).To(Equal(managerImage + version))
		g.Expect(isReady(p)).To(BeTrue(), "%v", p.Status.ContainerStatuses)
	}).Should(Succeed())
}

func isReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func since(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() }

// run starts a process that lives until the spec ends, logging to the cluster's log folder.
func run(name, bin string, args ...string) {
	p, err := testutil.StartProcess(name, filepath.Join(logDir, "catalog-test-"+name+".log"), bin,
		[]string{"KUBECONFIG=" + kubeconfig}, args...)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		p.Signal(os.Kill)
		<-p.Exited()
	})
}

// keepHostsFile writes the cluster IP of the Service ns/name under its cluster DNS name into
// hosts until the spec ends, in place (the bind mount keeps the file's inode), whenever OLM
// (re)creates the Service.
func keepHostsFile(hosts, ns, name string) {
	stop := make(chan struct{})
	DeferCleanup(func() { close(stop) })
	go func() {
		defer GinkgoRecover()
		written := ""
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			svc := &corev1.Service{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, svc); err == nil &&
				svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != written {
				content := fmt.Sprintf("127.0.0.1 localhost\n::1 localhost\n%s %s.%s.svc\n", svc.Spec.ClusterIP, name, ns)
				if err := os.WriteFile(hosts, []byte(content), 0o644); err == nil {
					written = svc.Spec.ClusterIP
				}
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
}

// registryTags lists the tags of a repository of the cluster's registry, where example.com/...
// is served as it is named. A repository holding images by digest only has none.
func registryTags(repo string) []string {
	resp, err := http.Get("http://" + env["E2E_REGISTRY"] + "/v2/" + repo + "/tags/list")
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	Expect(resp.StatusCode).To(Equal(http.StatusOK), "GET the tags of %s", repo)
	var list struct {
		Tags []string `json:"tags"`
	}
	Expect(json.NewDecoder(resp.Body).Decode(&list)).To(Succeed())
	return list.Tags
}
