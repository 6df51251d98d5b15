package bundle

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestManagerRBACIsLeast reads the manager's generated RBAC, as kustomize deploys it and as the
// CSV grants it, and fails on a wildcard, on any access to Secrets, on ConfigMap access (leader
// election needs a Lease only), and on verbs beyond the ones the code uses.
func TestManagerRBACIsLeast(t *testing.T) {
	// What the reconciler, leader election and the metrics filter call, by group/resource.
	allowed := map[string][]string{
		"example.com/myapps":                        {"get", "list", "watch"},
		"example.com/myapps/status":                 {"get", "update", "patch"},
		"example.com/myapps/finalizers":             {"update"}, // blockOwnerDeletion on children
		"apps/deployments":                          {"get", "list", "watch", "create", "patch", "delete"},
		"apps/replicasets":                          {"list", "delete"}, // the 0.2.0 selector migration only
		"/services":                                 {"get", "list", "watch", "create", "patch"},
		"autoscaling/horizontalpodautoscalers":      {"get", "list", "watch", "create", "patch", "delete"},
		"policy/poddisruptionbudgets":               {"get", "list", "watch", "create", "patch", "delete"},
		"/events":                                   {"create", "patch"},
		"coordination.k8s.io/leases":                {"get", "create", "update"},
		"authentication.k8s.io/tokenreviews":        {"create"},
		"authorization.k8s.io/subjectaccessreviews": {"create"},
	}
	check := func(t *testing.T, where string, rules []rbacv1.PolicyRule) {
		if len(rules) == 0 {
			t.Fatalf("%s: no rules read", where)
		}
		for _, r := range rules {
			if len(r.NonResourceURLs) > 0 {
				continue
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					key := g + "/" + res
					want, ok := allowed[key]
					if !ok {
						t.Errorf("%s: access to %s, which the manager does not use", where, key)
						continue
					}
					for _, v := range r.Verbs {
						if !slices.Contains(want, v) {
							t.Errorf("%s: verb %q on %s, which the manager does not use", where, v, key)
						}
					}
				}
			}
		}
	}

	t.Run("config/rbac", func(t *testing.T) {
		for _, f := range []string{"role.yaml", "leader_election_role.yaml", "metrics_auth_role.yaml"} {
			raw, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", f))
			if err != nil {
				t.Fatal(err)
			}
			var role rbacv1.ClusterRole // a Role has the same rules
			if err := yaml.Unmarshal(raw, &role); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			check(t, f, role.Rules)
		}
	})
	t.Run("CSV", func(t *testing.T) {
		bundle, err := manifests.GetBundleFromDir(bundleDir)
		if err != nil {
			t.Fatal(err)
		}
		spec := bundle.CSV.Spec.InstallStrategy.StrategySpec
		for _, p := range spec.Permissions {
			check(t, "permissions of "+p.ServiceAccountName, p.Rules)
		}
		for _, p := range spec.ClusterPermissions {
			check(t, "clusterPermissions of "+p.ServiceAccountName, p.Rules)
		}
	})
}
