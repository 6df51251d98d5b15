package controller

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

// secretReads records, of a client's requests about Secrets, which did not ask for metadata
// only: the Secret's data would have entered the operator with their answer. It counts too,
// per namespace, the watches of Secrets whose answer is still open.
type secretReads struct {
	mu             sync.Mutex
	seen, withData []string
	watching       map[string]int
}

// secretsPath is the path of a namespace's Secrets, the namespace captured.
var secretsPath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/secrets$`)

func (s *secretReads) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if !strings.Contains(req.URL.Path, "/secrets") {
			return rt.RoundTrip(req)
		}
		s.mu.Lock()
		s.seen = append(s.seen, req.Method+" "+req.URL.String())
		if !strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadata") {
			s.withData = append(s.withData, req.Method+" "+req.URL.String())
		}
		s.mu.Unlock()
		resp, err := rt.RoundTrip(req)
		m := secretsPath.FindStringSubmatch(req.URL.Path)
		if err != nil || m == nil || req.URL.Query().Get("watch") != "true" || resp.StatusCode != http.StatusOK {
			return resp, err
		}
		// A watch is open until its answer's body is closed, which is how an informer that
		// stops ends it.
		namespace := m[1]
		s.mu.Lock()
		if s.watching == nil {
			s.watching = map[string]int{}
		}
		s.watching[namespace]++
		s.mu.Unlock()
		var once sync.Once
		resp.Body = closeNotifier{ReadCloser: resp.Body, closed: func() {
			once.Do(func() {
				s.mu.Lock()
				s.watching[namespace]--
				s.mu.Unlock()
			})
		}}
		return resp, nil
	})
}

// watches is the number of watches of the namespace's Secrets open.
func (s *secretReads) watches(namespace string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watching[namespace]
}

// closeNotifier calls closed when the body is closed.
type closeNotifier struct {
	io.ReadCloser
	closed func()
}

func (c closeNotifier) Close() error {
	c.closed()
	return c.ReadCloser.Close()
}

func (s *secretReads) get() (seen, withData []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...), append([]string(nil), s.withData...)
}

// readRBAC reads a ClusterRole the project ships.
func readRBAC(path string) *rbacv1.ClusterRole {
	b, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.ClusterRole{}
	Expect(yaml.UnmarshalStrict(b, role)).To(Succeed())
	return role
}

// secretTrackingOperator is a manager run as a user that holds the manager's ClusterRole only,
// as installed, and what a namespace needs to opt in.
type secretTrackingOperator struct {
	// user is who the manager runs as, and trackingRole the ClusterRole an administrator
	// binds in a namespace to opt it in (config/rbac/secret-tracking).
	user, trackingRole string
	// reads are the manager's requests about Secrets.
	reads *secretReads
}

// startSecretTrackingOperator runs, until the story ends, a manager as a user of its own with
// the manager's ClusterRole, that sees the MyApps labelled unwatchedLabel=label.
func startSecretTrackingOperator(ns, label string) *secretTrackingOperator {
	op := &secretTrackingOperator{user: "secret-story-" + ns, reads: &secretReads{}}
	operator, err := testEnv.ControlPlane.AddUser(envtest.User{Name: op.user}, nil)
	Expect(err).NotTo(HaveOccurred())
	managerRole := readRBAC(filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	managerRole.Name = op.user
	Expect(k8s.Create(suiteCtx, managerRole)).To(Succeed())
	Expect(k8s.Create(suiteCtx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: op.user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: op.user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: op.user}},
	})).To(Succeed())
	tracking := readRBAC(filepath.Join("..", "..", "config", "rbac", "secret-tracking", "cluster_role.yaml"))
	Expect(k8s.Create(suiteCtx, tracking)).To(Or(Succeed(), WithTransform(func(err error) bool { return err != nil && strings.Contains(err.Error(), "already exists") }, BeTrue())))
	op.trackingRole = tracking.Name

	config := operator.Config()
	config.Wrap(op.reads.wrap)
	sel, err := labels.Parse(unwatchedLabel + "=" + label)
	Expect(err).NotTo(HaveOccurred())
	startManager(managerOptions{myApps: sel, syncPeriod: 10 * time.Hour, config: config})
	return op
}

// optIn binds the shipped role to the operator in the namespace, as an administrator opts it in.
func (op *secretTrackingOperator) optIn(ns string) {
	Expect(k8s.Create(suiteCtx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "myapp-operator-secrets"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: op.trackingRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: op.user}},
	})).To(Succeed())
}

var _ = Describe("Rolling out on Secret changes", func() {
	It("tracks a namespace's Secrets once an administrator binds the shipped role there, from their metadata only", func() {
		ns := newNamespace()
		By("running the operator as a user with the manager's ClusterRole only, as installed")
		op := startSecretTrackingOperator(ns, "secrets")
		reads := op.reads

		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, StringData: map[string]string{"PASSWORD": "one"}}
		Expect(k8s.Create(suiteCtx, secret)).To(Succeed())
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			a.Labels = map[string]string{unwatchedLabel: "secrets"}
			a.Spec.RolloutOnConfigChange = ptrTo(true)
			a.Spec.EnvFrom = []examplev1.EnvFromSource{{SecretRef: &examplev1.EnvFromReference{Name: "db"}}}
		})
		secretHash := func(g Gomega) string {
			return getDeployment(ns, "web")(g).Spec.Template.Annotations[desired.AnnotationSecretHash]
		}

		By("without the grant, the Secret is not tracked: a change of it rolls nothing")
		Eventually(func(g Gomega) {
			g.Expect(getMyApp(ns, "web")(g).Status.ObservedGeneration).To(Equal(app.Generation))
			g.Expect(secretHash(g)).To(BeEmpty())
		}).Should(Succeed())
		secret.StringData = map[string]string{"PASSWORD": "two"}
		Expect(k8s.Update(suiteCtx, secret)).To(Succeed())
		requestReconcile := func(value string) {
			updateMyApp(app, func(a *examplev1.MyApp) {
				a.Annotations = map[string]string{examplev1.ReconcileRequestAnnotation: value}
			})
			Eventually(func(g Gomega) {
				g.Expect(getMyApp(ns, "web")(g).Status.LastHandledReconcileAt).To(Equal(value))
			}).Should(Succeed())
		}
		requestReconcile("1")
		Expect(secretHash(Default)).To(BeEmpty())

		By("binding the shipped role in the namespace; a requested reconcile asks about the grant at once")
		op.optIn(ns)
		requestReconcile("2")
		var first string
		Eventually(func(g Gomega) {
			first = secretHash(g)
			g.Expect(first).To(HaveLen(16))
		}).Should(Succeed())

		By("a change of the Secret rolls the pods, with no request to the MyApp")
		secret.StringData = map[string]string{"PASSWORD": "three"}
		Expect(k8s.Update(suiteCtx, secret)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(secretHash(g)).To(And(HaveLen(16), Not(Equal(first))))
		}).Should(Succeed())
		changed := secretHash(Default)

		By("the grant withdrawn, the template keeps its hash: nothing restarts")
		Expect(k8s.Delete(suiteCtx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "myapp-operator-secrets"}})).To(Succeed())
		requestReconcile("3")
		Expect(secretHash(Default)).To(Equal(changed))

		By("without the grant, a new spec keeps the hash the spec had: the Deployment carries it beside its template")
		Expect(getDeployment(ns, "web")(Default).Annotations).To(HaveKeyWithValue(desired.AnnotationSecretHash, changed))
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web")(g)
			g.Expect(container(g, d).Image).To(Equal("nginx:1.28"))
			g.Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue(desired.AnnotationSecretHash, changed))
		}).Should(Succeed())

		seen, withData := reads.get()
		Expect(seen).NotTo(BeEmpty(), "the operator never asked about Secrets: the story measured nothing")
		Expect(withData).To(BeEmpty(), "requests about Secrets whose answer carries their data")
	})

	It("watches a namespace's Secrets only while a MyApp there tracks them", func() {
		ns := newNamespace()
		op := startSecretTrackingOperator(ns, "secrets-released")
		op.optIn(ns)
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, StringData: map[string]string{"PASSWORD": "one"}}
		Expect(k8s.Create(suiteCtx, secret)).To(Succeed())
		tracking := func(a *examplev1.MyApp) {
			a.Labels = map[string]string{unwatchedLabel: "secrets-released"}
			a.Spec.RolloutOnConfigChange = ptrTo(true)
			a.Spec.EnvFrom = []examplev1.EnvFromSource{{SecretRef: &examplev1.EnvFromReference{Name: "db"}}}
		}
		web := createMyApp(ns, "web", tracking)
		api := createMyApp(ns, "api", tracking)
		secretHash := func(g Gomega) string {
			return getDeployment(ns, "web")(g).Spec.Template.Annotations[desired.AnnotationSecretHash]
		}
		watches := func() int { return op.reads.watches(ns) }
		Eventually(secretHash).Should(HaveLen(16))
		Eventually(watches).Should(Equal(1))

		By("one of the two MyApps that track the Secrets deleted: the watch stays")
		Expect(k8s.Delete(suiteCtx, api)).To(Succeed())
		Consistently(watches, 2*time.Second, 100*time.Millisecond).Should(Equal(1))

		By("the last one no longer tracking them: the watch of the namespace's Secrets stops")
		updateMyApp(web, func(a *examplev1.MyApp) { a.Spec.RolloutOnConfigChange = nil })
		Eventually(watches).Should(BeZero())
		Consistently(watches, 2*time.Second, 100*time.Millisecond).Should(BeZero())
		Eventually(secretHash).Should(BeEmpty())

		By("tracking them again: the namespace is watched again, and a change of the Secret rolls the pods")
		updateMyApp(web, func(a *examplev1.MyApp) { a.Spec.RolloutOnConfigChange = ptrTo(true) })
		Eventually(watches).Should(Equal(1))
		var first string
		Eventually(func(g Gomega) {
			first = secretHash(g)
			g.Expect(first).To(HaveLen(16))
		}).Should(Succeed())
		secret.StringData = map[string]string{"PASSWORD": "two"}
		Expect(k8s.Update(suiteCtx, secret)).To(Succeed())
		Eventually(secretHash).Should(And(HaveLen(16), Not(Equal(first))))

		By("the last MyApp that tracks them deleted: the watch stops")
		Expect(k8s.Delete(suiteCtx, web)).To(Succeed())
		Eventually(watches).Should(BeZero())
		Consistently(watches, 2*time.Second, 100*time.Millisecond).Should(BeZero())
	})
})
