package health_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/health"
)

// TestCacheSyncedFollowsTheInformers: against a real API server, /readyz's cache check fails
// while an informer cannot list its kind (here MyApps, which the operator's account may not
// list yet) and passes once every informer has synced.
func TestCacheSyncedFollowsTheInformers(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
	}
	g := NewWithT(t)
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	admin, err := client.New(cfg, client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	operator, err := env.ControlPlane.AddUser(envtest.User{Name: "operator"}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "operator"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}},
	}}
	g.Expect(admin.Create(ctx, role)).To(Succeed())
	g.Expect(admin.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "operator"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "operator"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "operator"}},
	})).To(Succeed())

	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	g.Expect(examplev1.AddToScheme(scheme)).To(Succeed())
	c, err := cache.New(operator.Config(), cache.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	check := health.CacheSynced(c, 100*time.Millisecond)
	probe := func() error { return check(httptest.NewRequest("GET", "/readyz", nil)) }

	// Not started: not ready.
	g.Expect(probe()).To(MatchError(health.ErrCacheNotSynced))

	_, err = c.GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = c.GetInformer(ctx, &examplev1.MyApp{}, cache.BlockUntilSynced(false))
	g.Expect(err).NotTo(HaveOccurred())
	go func() { _ = c.Start(ctx) }()

	// The ConfigMaps sync; the MyApps' list keeps failing.
	g.Consistently(probe).WithTimeout(3 * time.Second).WithPolling(200 * time.Millisecond).Should(MatchError(health.ErrCacheNotSynced))

	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{examplev1.GroupVersion.Group}, Resources: []string{"myapps"}, Verbs: []string{"list", "watch"}})
	g.Expect(admin.Update(ctx, role)).To(Succeed())
	g.Eventually(probe).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}
