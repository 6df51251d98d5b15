package realnode

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

// The names config/default gives the operator's namespace and Deployment.
const (
	operatorNamespace  = "myapp-operator-system"
	operatorDeployment = "myapp-operator-controller-manager"
	realNodeName       = "real-node"
	appPort            = 8080
)

var _ = Describe("The operator on a real node", Ordered, Label("realnode"), func() {
	BeforeAll(func() {
		By("deploying config/default with kustomize, the manager image from the cluster's registry")
		deployOperator()
	})

	It("runs the manager as a pod under the restricted Pod Security level", func() {
		ns := &corev1.Namespace{}
		Expect(k8s.Get(ctx, types.NamespacedName{Name: operatorNamespace}, ns)).To(Succeed())
		Expect(ns.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"))

		By("waiting until the manager's pod runs on the real node and passes its readiness probe")
		var running corev1.Pod
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: operatorNamespace, Name: operatorDeployment}, d)).To(Succeed())
			g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(1))
			pods := podsOf(g, d)
			g.Expect(pods).To(HaveLen(1))
			pod := pods[0]
			g.Expect(pod.Spec.NodeName).To(Equal(realNodeName))
			g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
			cs := pod.Status.ContainerStatuses[0]
			g.Expect(cs.Image).To(Equal(managerImage))
			g.Expect(cs.Ready).To(BeTrue())
			g.Expect(cs.State.Running).NotTo(BeNil())
			running = pod
		}).Should(Succeed())

		By("checking that it runs with a read-only root filesystem, and config/default's NetworkPolicies are there")
		expectReadOnlyRoot(running)
		policies := &networkingv1.NetworkPolicyList{}
		Expect(k8s.List(ctx, policies, client.InNamespace(operatorNamespace))).To(Succeed())
		Expect(policies.Items).NotTo(BeEmpty())

		By("checking that the namespace really enforces the level: a privileged pod is refused")
		privileged := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "privileged"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "c", Image: managerImage,
				SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
			}}},
		}
		err := k8s.Create(ctx, privileged, client.DryRunAll)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "creating a privileged pod: %v", err)
		Expect(err.Error()).To(ContainSubstring("violates PodSecurity"))
	})

	It("makes a MyApp Ready once its pods answer, runs its init container before them and its sidecar beside them, routes its Service and its second port, and rolls its pods to a new image", func() {
		ns := newNamespace()
		v1, v2 := appImage+":"+appVersions[0], appImage+":"+appVersions[1]
		// A second, named port beside the app's: the pods are ready only once it answers (the
		// readiness probe names it), and the Service forwards its own port of that name to it.
		const adminPort = 9090
		app := &examplev1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: examplev1.MyAppSpec{Image: v1, Replicas: ptr.To[int32](2), Port: ptr.To[int32](appPort),
				Ports:          []examplev1.ContainerPort{{Name: "admin", Port: adminPort}},
				Env:            []examplev1.EnvVar{{Name: "ADMIN_PORT", Value: ptr.To(strconv.Itoa(adminPort))}},
				ReadinessProbe: &examplev1.Probe{HTTPGet: &examplev1.HTTPGetProbe{Port: ptr.To(intstr.FromString("admin"))}}},
		}
		// An init container that writes a file into a volume the app mounts, and must have
		// exited before the app starts; a sidecar on a port of its own, whose readiness the
		// pod's waits for.
		const sidecarPort = 9091
		shared := []examplev1.VolumeMount{{Name: "shared", MountPath: "/shared"}}
		app.Spec.Volumes = []examplev1.Volume{{Name: "shared", EmptyDir: &examplev1.EmptyDirVolumeSource{}}}
		app.Spec.VolumeMounts = shared
		app.Spec.InitContainers = []examplev1.InitContainer{
			{Name: "prepare", Image: v1, Env: []examplev1.EnvVar{{Name: "WRITE_FILE", Value: ptr.To("/shared/prepared")}}, VolumeMounts: shared},
			{Name: "side", Image: v1, RestartPolicy: ptr.To(examplev1.ContainerRestartPolicyAlways),
				Env:            []examplev1.EnvVar{{Name: "PORT", Value: ptr.To(strconv.Itoa(sidecarPort))}},
				ReadinessProbe: &examplev1.SidecarProbe{HTTPGet: &examplev1.SidecarHTTPGet{SidecarPort: examplev1.SidecarPort{Port: sidecarPort}, Path: "/readyz"}}},
		}
		Expect(k8s.Create(ctx, app)).To(Succeed())

		By("waiting until the MyApp is Ready, then asking each of its pods directly")
		before := expectReadyAndAnswering(ns, app.Name, appVersions[0], 2)

		By("reading what the init container wrote, and asking the sidecar, in each pod")
		for _, p := range before {
			Expect(httpGet(fmt.Sprintf("http://%s:%d/file?path=/shared/prepared", p.Status.PodIP, appPort))).
				To(Equal("written by myapp test app " + appVersions[0] + "\n"))
			Expect(httpGet(fmt.Sprintf("http://%s:%d/", p.Status.PodIP, sidecarPort))).
				To(Equal(fmt.Sprintf("myapp test app %s on %s\n", appVersions[0], p.Name)))
			Expect(p.Status.InitContainerStatuses).To(HaveLen(2))
			Expect(p.Status.InitContainerStatuses[0].State.Terminated).NotTo(BeNil(), "the init container has run to completion")
			Expect(p.Status.InitContainerStatuses[0].State.Terminated.ExitCode).To(BeZero())
			Expect(p.Status.InitContainerStatuses[1].Ready).To(BeTrue(), "the sidecar is ready")
		}

		By("asking through the Service's cluster IP, as a client in the cluster would, on both ports")
		service := serviceURL(ns, app.Name)
		Eventually(httpGet).WithArguments(service).Should(ContainSubstring("myapp test app " + appVersions[0]))
		admin := strings.Replace(service, fmt.Sprintf(":%d/", appPort), fmt.Sprintf(":%d/", adminPort), 1)
		Expect(admin).NotTo(Equal(service))
		Eventually(httpGet).WithArguments(admin).Should(ContainSubstring(fmt.Sprintf("myapp test app %s admin port %d", appVersions[0], adminPort)))

		By("changing the image to the app's next version")
		setImage(app, v2)
		after := expectReadyAndAnswering(ns, app.Name, appVersions[1], 2)
		for uid := range after {
			Expect(before).NotTo(HaveKey(uid), "pod %s was not replaced", uid)
		}

		// The old pods stop at once on SIGTERM (this app has no preStop sleep), so until they
		// are gone a request may still meet one that no longer answers.
		expectOnlyPods(ns, len(after))

		By("asking through the Service again: every answer now comes from the new version")
		Eventually(httpGet).WithArguments(service).Should(ContainSubstring("myapp test app " + appVersions[1]))
		// Ten answers in a row, none from the old version. A request kube-proxy still sends to
		// an old pod's address, gone, gets no answer: that one is asked again, on a busy node a
		// moment after the pods went.
		Eventually(func(g Gomega) {
			for range 10 {
				body, err := httpGet(service)
				g.Expect(err).NotTo(HaveOccurred())
				if !strings.Contains(body, "myapp test app "+appVersions[1]) {
					StopTrying("an answer through the Service that is not from the new version: " + body).Now()
				}
			}
		}).Should(Succeed())
	})

	It("makes a PodMonitor once the Prometheus Operator's CRDs are installed, and a Prometheus scraping the port and path it names reads the app's own metrics", Label("metrics"), scrapesAppMetrics)

	// Last, as it removes the kustomize deployment: OLM then owns the CRD and runs the only
	// manager, installed from the bundle image as `operator-sdk run bundle` does on any cluster.
	It("installs the operator through OLM, keeps it running for a minute, and cleans it up", func() {
		env := map[string]string{}
		for _, k := range []string{"E2E_OPERATOR_SDK", "E2E_OLM_BIN", "E2E_OLM_CRDS", "E2E_REGISTRY_CA", "E2E_BUNDLE_IMAGE",
			"E2E_INDEX_IMAGE", "E2E_DECOMPRESSION_IMAGE", "E2E_OLM_UTIL_IMAGE"} {
			env[k] = os.Getenv(k)
			Expect(env[k]).NotTo(BeEmpty(), "%s is not set", k)
		}

		By("removing the kustomize deployment, so that OLM owns the CRD and runs the only manager")
		if deployedManifests != nil {
			kubectl(deployedManifests, "delete", "--ignore-not-found", "--wait", "-f", "-")
		}

		By("starting OLM's olm and catalog operators, out of cluster, with images built here for unpacking bundles")
		kubectl(nil, "apply", "--server-side", "-f", env["E2E_OLM_CRDS"])
		// kubectl wait fails at once on a CRD whose status has no conditions yet: ask again.
		Eventually(func() ([]byte, error) {
			return exec.Command(kubectlPath(), "--kubeconfig", kubeconfig, "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s").CombinedOutput()
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Not(BeEmpty()))
		olmNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "olm"}}
		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, olmNS))).To(Succeed())
		runBackground("olm", filepath.Join(env["E2E_OLM_BIN"], "olm"), "--namespace=olm", "--writeStatusName=",
			"--writePackageServerStatusName=")
		runBackground("catalog", filepath.Join(env["E2E_OLM_BIN"], "catalog"), "--namespace=olm", "--writeStatusName=",
			"--kubeconfig="+kubeconfig, "--util-image="+env["E2E_OLM_UTIL_IMAGE"], "--opmImage="+env["E2E_INDEX_IMAGE"])

		ns := newNamespace()
		By("running operator-sdk run bundle " + env["E2E_BUNDLE_IMAGE"])
		runBundle := exec.Command(env["E2E_OPERATOR_SDK"], "run", "bundle", env["E2E_BUNDLE_IMAGE"],
			"--index-image", env["E2E_INDEX_IMAGE"], "--decompression-image", env["E2E_DECOMPRESSION_IMAGE"],
			"--namespace", ns, "--kubeconfig", kubeconfig, "--timeout", "5m")
		// The registry's HTTPS listener has a certificate of the cluster's CA.
		runBundle.Env = append(os.Environ(), "SSL_CERT_FILE="+env["E2E_REGISTRY_CA"])
		// It waits on the cluster for minutes: it dies with the suite.
		var out bytes.Buffer
		runBundle.Stdout, runBundle.Stderr = &out, &out
		Expect(testutil.RunWithParent(runBundle)).To(Succeed(), "operator-sdk run bundle: %s", out.String())

		csvs := &operatorsv1alpha1.ClusterServiceVersionList{}
		Expect(k8s.List(ctx, csvs, client.InNamespace(ns))).To(Succeed())
		Expect(csvs.Items).To(HaveLen(1))
		Expect(csvs.Items[0].Status.Phase).To(Equal(operatorsv1alpha1.CSVPhaseSucceeded))

		By("checking that the operator pod stays Running and Ready for 60 s, as the community pipeline does")
		managerPod := func(g Gomega) corev1.Pod {
			pods := &corev1.PodList{}
			g.Expect(k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(1))
			return pods.Items[0]
		}
		var uid types.UID
		Eventually(func(g Gomega) {
			p := managerPod(g)
			g.Expect(p.Spec.NodeName).To(Equal(realNodeName))
			g.Expect(isReady(p)).To(BeTrue())
			uid = p.UID
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			p := managerPod(g)
			g.Expect(p.UID).To(Equal(uid))
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			g.Expect(p.Status.ContainerStatuses[0].RestartCount).To(BeZero())
		}).WithTimeout(60 * time.Second).WithPolling(time.Second).Should(Succeed())

		By("operator-sdk cleanup myapp-operator")
		cleanup := exec.Command(env["E2E_OPERATOR_SDK"], "cleanup", "myapp-operator", "--namespace", ns,
			"--kubeconfig", kubeconfig, "--timeout", "2m")
		out.Reset()
		cleanup.Stdout, cleanup.Stderr = &out, &out
		Expect(testutil.RunWithParent(cleanup)).To(Succeed(), "operator-sdk cleanup: %s", out.String())
		Eventually(func(g Gomega) {
			g.Expect(k8s.List(ctx, csvs, client.InNamespace(ns))).To(Succeed())
			g.Expect(csvs.Items).To(BeEmpty())
			pods := &corev1.PodList{}
			g.Expect(k8s.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
		}).Should(Succeed())
	})
})

// runBackground starts a process that lives until the spec ends, logging to the cluster's
// log folder.
func runBackground(name, bin string, args ...string) {
	logDir := filepath.Join(filepath.Dir(kubeconfig), "logs")
	p, err := testutil.StartProcess(name, filepath.Join(logDir, "realnode-test-"+name+".log"), bin,
		[]string{"KUBECONFIG=" + kubeconfig}, args...)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		p.Signal(os.Kill)
		<-p.Exited()
	})
}

// kubectl runs the cluster's kubectl with stdin, failing the spec if it fails.
func kubectl(stdin []byte, args ...string) {
	cmd := exec.Command(kubectlPath(), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "kubectl %s: %s", strings.Join(args, " "), out)
}

// deployedManifests are what deployOperator applied, for the run-bundle spec to remove.
var deployedManifests []byte

// storyGrace is the manager's --rollout-failure-grace in these stories: each rollback, and a
// canary's abort by the operator's own judge, waits that long after the pods' problem was
// first seen. The default (30 s) is a setting like any other; the Helm suite runs with 5 s and
// the envtest stories with 1 s.
const storyGrace = "--rollout-failure-grace=10s"

// deployOperator applies config/default through a kustomization of its own that sets the
// manager image and labels the operator's namespace to enforce the restricted level, as an
// operator author deploying to a hardened cluster would; storyGrace and managerArgs are added
// to the manager's command line.
func deployOperator(managerArgs ...string) {
	managerArgs = append([]string{storyGrace}, managerArgs...)
	configDefault, err := filepath.Abs(filepath.Join("..", "..", "config", "default"))
	Expect(err).NotTo(HaveOccurred())
	repo, tag, _ := strings.Cut(managerImage[strings.LastIndex(managerImage, "/")+1:], ":")
	newName := managerImage[:strings.LastIndex(managerImage, "/")+1] + repo
	dir := GinkgoT().TempDir()
	// kustomize takes a base only by a relative path.
	base, err := filepath.Rel(dir, configDefault)
	Expect(err).NotTo(HaveOccurred())
	kustomization := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- %s
images:
- name: example.com/myapp-operator
  newName: %s
  newTag: %s
patches:
- target:
    kind: Namespace
    name: %s
  patch: |-
    - op: add
      path: /metadata/labels/pod-security.kubernetes.io~1enforce
      value: restricted
`, base, newName, tag, operatorNamespace)
	if len(managerArgs) > 0 {
		// config/default holds one Deployment, the manager's.
		kustomization += `- target:
    kind: Deployment
  patch: |-
`
		for _, arg := range managerArgs {
			kustomization += fmt.Sprintf("    - {op: add, path: /spec/template/spec/containers/0/args/-, value: %q}\n", arg)
		}
	}
	Expect(os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o644)).To(Succeed())
	var stderr bytes.Buffer
	build := exec.Command(kustomizeBin, "build", dir)
	build.Stderr = &stderr
	manifests, err := build.Output()
	Expect(err).NotTo(HaveOccurred(), "kustomize build: %s", stderr.String())
	Expect(string(manifests)).To(ContainSubstring("image: " + managerImage))
	for _, arg := range managerArgs {
		Expect(string(manifests)).To(ContainSubstring(arg))
	}

	kubectl(manifests, "apply", "--server-side", "-f", "-")
	deployedManifests = manifests
	// A CRD made again (after the OLM story removed it) serves MyApps only once it is
	// established and the client's mapping finds the kind: a story's first create would
	// otherwise meet "no matches for kind MyApp".
	kubectl(nil, "wait", "--for=condition=Established", "--timeout=60s", "crd/myapps.example.com")
	Eventually(func() error {
		_, err := k8s.RESTMapper().RESTMapping(schema.GroupKind{Group: examplev1.GroupVersion.Group, Kind: "MyApp"},
			examplev1.GroupVersion.Version)
		return err
	}).Should(Succeed(), "the client maps MyApp")
}

// deployOperatorAgain deploys config/default for a container that may run after the OLM story.
// Applying it again is harmless when the operator's container has done it, and needed when
// this one runs after it (Ginkgo shuffles top-level containers), which removes the kustomize
// deployment, CRD included, for OLM: it waits until the CRD is gone rather than apply over one
// being deleted.
func deployOperatorAgain(managerArgs ...string) {
	Eventually(func(g Gomega) {
		crd := &metav1.PartialObjectMetadata{}
		crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
		err := k8s.Get(ctx, types.NamespacedName{Name: "myapps.example.com"}, crd)
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		g.Expect(err == nil && crd.DeletionTimestamp != nil).To(BeFalse(), "the MyApp CRD is being deleted")
	}).Should(Succeed())
	deployOperator(managerArgs...)
}

// kubectlPath is the kubectl built for the cluster, E2E_KUBECTL.
func kubectlPath() string {
	p := os.Getenv("E2E_KUBECTL")
	Expect(p).NotTo(BeEmpty(), "E2E_KUBECTL is not set")
	return p
}

// newNamespace makes a namespace for a story and deletes it afterwards.
func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "realnode-"}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(ctx, ns) })
	return ns.Name
}

// expectReadyAndAnswering waits until the MyApp is Ready for its current generation with want
// ready replicas, all of the given version and none terminating, then asks each pod on its own
// address, once: a Ready MyApp must have pods that answer. It returns the pods by UID.
func expectReadyAndAnswering(ns, name, version string, want int) map[types.UID]corev1.Pod {
	var pods []corev1.Pod
	Eventually(func(g Gomega) {
		app := &examplev1.MyApp{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, app)).To(Succeed())
		ready := meta.FindStatusCondition(app.Status.Conditions, examplev1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "Ready: %s: %s", ready.Reason, ready.Message)
		g.Expect(ready.ObservedGeneration).To(Equal(app.Generation))
		g.Expect(app.Status.ReadyReplicas).To(BeEquivalentTo(want))

		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, d)).To(Succeed())
		pods = podsOf(g, d)
		g.Expect(pods).To(HaveLen(want))
		for _, p := range pods {
			g.Expect(p.DeletionTimestamp).To(BeNil())
			g.Expect(p.Spec.NodeName).To(Equal(realNodeName))
			g.Expect(p.Spec.Containers[0].Image).To(HaveSuffix(":" + version))
			g.Expect(isReady(p)).To(BeTrue(), "pod %s is not ready", p.Name)
		}
	}).Should(Succeed())

	byUID := map[types.UID]corev1.Pod{}
	for _, p := range pods {
		Expect(p.Status.PodIP).NotTo(BeEmpty())
		base := fmt.Sprintf("http://%s:%d", p.Status.PodIP, appPort)
		Expect(httpGet(base + "/readyz")).To(Equal("ok\n"))
		Expect(httpGet(base + "/")).To(Equal(fmt.Sprintf("myapp test app %s on %s\n", version, p.Name)))
		byUID[p.UID] = p
	}
	return byUID
}

// expectOnlyPods waits until the namespace holds n pods, none of them terminating: the pods
// a rollout replaced are gone.
func expectOnlyPods(ns string, n int) {
	Eventually(func(g Gomega) {
		list := &corev1.PodList{}
		g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n), "old pods still terminating")
	}).Should(Succeed())
}

// setImage changes the MyApp's image, as a user's edit would.
func setImage(app *examplev1.MyApp, image string) {
	updateSpec(app, func(s *examplev1.MyAppSpec) { s.Image = image })
}

// updateSpec changes the MyApp's spec, as a user's edit would, retrying on a conflict.
func updateSpec(app *examplev1.MyApp, mutate func(*examplev1.MyAppSpec)) {
	Eventually(func(g Gomega) {
		latest := &examplev1.MyApp{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(app), latest)).To(Succeed())
		mutate(&latest.Spec)
		g.Expect(k8s.Update(ctx, latest)).To(Succeed())
	}).Should(Succeed())
}

// podsOf lists the pods a Deployment selects, terminating ones included.
func podsOf(g Gomega, d *appsv1.Deployment) []corev1.Pod {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	g.Expect(err).NotTo(HaveOccurred())
	list := &corev1.PodList{}
	g.Expect(k8s.List(ctx, list, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: sel})).To(Succeed())
	return list.Items
}

func isReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
