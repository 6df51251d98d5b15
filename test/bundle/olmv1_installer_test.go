package bundle

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
	"sigs.k8s.io/yaml"
)

const (
	installerRBAC    = "../../config/olmv1/installer-rbac.yaml"
	clusterExtension = "myapp-operator"
	olmv1InstallNS   = "myapp-operator-system"
)

// bundleResources maps the kinds a bundle holds, or OLM v1 makes from its CSV, to their
// resources and whether they are namespaced. A kind missing here fails the test: whoever adds
// one to the bundle must also decide what the installer needs for it.
var bundleResources = map[string]struct {
	group, resource string
	namespaced      bool
}{
	"CustomResourceDefinition": {"apiextensions.k8s.io", "customresourcedefinitions", false},
	"ClusterRole":              {"rbac.authorization.k8s.io", "clusterroles", false},
	"ClusterRoleBinding":       {"rbac.authorization.k8s.io", "clusterrolebindings", false},
	"Role":                     {"rbac.authorization.k8s.io", "roles", true},
	"RoleBinding":              {"rbac.authorization.k8s.io", "rolebindings", true},
	"Service":                  {"", "services", true},
	"ServiceAccount":           {"", "serviceaccounts", true},
	"Deployment":               {"apps", "deployments", true},
	"ConfigMap":                {"", "configmaps", true},
}

// installerNeeds derives from a bundle what OLM v1's installer service account must hold to
// install it for all namespaces, following operator-controller v1.2.0's
// docs/howto/derive-service-account.md and what its registry+v1 conversion
// (internal/operator-controller/rukpak/convert/registryv1.go) makes: cluster-wide rules, and
// rules needed only in the install namespace.
func installerNeeds(t *testing.T, dir string) (cluster, namespaced []rbacv1.PolicyRule) {
	t.Helper()
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		t.Fatalf("reading %s: %v", dir, err)
	}
	manage := func(kind, name string) {
		r, ok := bundleResources[kind]
		if !ok {
			t.Fatalf("%s: kind %s: add it to bundleResources and decide what the installer needs", dir, kind)
		}
		// create, list and watch cannot be limited by name; OLM v1 watches what it installed
		// in every namespace.
		cluster = append(cluster, rbacv1.PolicyRule{APIGroups: []string{r.group}, Resources: []string{r.resource}, Verbs: []string{"list", "watch"}})
		byName := rbacv1.PolicyRule{APIGroups: []string{r.group}, Resources: []string{r.resource}, Verbs: []string{"get", "update", "patch", "delete"}}
		if name != "" {
			byName.ResourceNames = []string{name}
		}
		create := rbacv1.PolicyRule{APIGroups: []string{r.group}, Resources: []string{r.resource}, Verbs: []string{"create"}}
		if r.namespaced {
			namespaced = append(namespaced, create, byName)
		} else {
			cluster = append(cluster, create, byName)
		}
	}
	for _, obj := range b.Objects {
		if obj.GetKind() == "ClusterServiceVersion" {
			continue
		}
		manage(obj.GetKind(), obj.GetName())
		if obj.GetKind() == "ClusterRole" {
			// The installer can only create a role granting what it holds itself.
			var role rbacv1.ClusterRole
			if err := runtimeConvert(obj, &role); err != nil {
				t.Fatal(err)
			}
			cluster = append(cluster, role.Rules...)
		}
	}
	spec := b.CSV.Spec.InstallStrategy.StrategySpec
	for _, d := range spec.DeploymentSpecs {
		manage("Deployment", d.Name)
	}
	// OLM v1 names the ServiceAccount, roles and bindings it makes itself (a hash for the
	// roles), so no name is assumed. In AllNamespaces mode, permissions become cluster-wide.
	for _, p := range append(spec.Permissions, spec.ClusterPermissions...) {
		manage("ServiceAccount", p.ServiceAccountName)
		manage("ClusterRole", "")
		manage("ClusterRoleBinding", "")
		manage("Role", "")
		manage("RoleBinding", "")
		cluster = append(cluster, p.Rules...)
	}
	cluster = append(cluster, rbacv1.PolicyRule{APIGroups: []string{"olm.operatorframework.io"},
		Resources: []string{"clusterextensions/finalizers"}, ResourceNames: []string{clusterExtension}, Verbs: []string{"update"}})
	return cluster, namespaced
}

func runtimeConvert(obj *unstructured.Unstructured, into any) error {
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	return yaml.Unmarshal(data, into)
}

// readInstallerRBAC returns the rules config/olmv1 binds to the installer cluster-wide and in
// the install namespace.
func readInstallerRBAC(t *testing.T) (cluster, namespaced []rbacv1.PolicyRule) {
	t.Helper()
	data, err := os.ReadFile(installerRBAC)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		switch obj.GetKind() {
		case "ClusterRole":
			var r rbacv1.ClusterRole
			if err := runtimeConvert(&obj, &r); err != nil {
				t.Fatal(err)
			}
			cluster = append(cluster, r.Rules...)
		case "Role":
			if obj.GetNamespace() != olmv1InstallNS {
				t.Fatalf("Role %s is in %q, want the install namespace %s", obj.GetName(), obj.GetNamespace(), olmv1InstallNS)
			}
			var r rbacv1.Role
			if err := runtimeConvert(&obj, &r); err != nil {
				t.Fatal(err)
			}
			namespaced = append(namespaced, r.Rules...)
		}
	}
	return cluster, namespaced
}

// TestOLMv1InstallerRBACCoversEveryBundle checks the derivation of config/olmv1's installer
// RBAC: for every bundle the catalog offers an upgrade through, it holds everything OLM v1
// needs to install it, with the API server's own rule-coverage logic (escalation check).
func TestOLMv1InstallerRBACCoversEveryBundle(t *testing.T) {
	haveCluster, haveNamespaced := readInstallerRBAC(t)
	if len(haveCluster) == 0 || len(haveNamespaced) == 0 {
		t.Fatalf("%s: want a ClusterRole and a Role", installerRBAC)
	}
	for _, dir := range []string{"../../releases/0.2.0", bundleDir} {
		needCluster, needNamespaced := installerNeeds(t, dir)
		if ok, missing := rbacvalidation.Covers(haveCluster, needCluster); !ok {
			t.Errorf("%s: the installer ClusterRole lacks %v", dir, missing)
		}
		if ok, missing := rbacvalidation.Covers(append(haveCluster, haveNamespaced...), needNamespaced); !ok {
			t.Errorf("%s: the installer lacks, in the install namespace, %v", dir, missing)
		}
	}
}
