package bundle

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestManagerRBACIsLeast reads the manager's generated RBAC, as kustomize deploys it and as the
// CSV grants it, and fails on a wildcard, on any access to Secrets, on a grant of the
// admission policy kinds beyond the operator's own objects, and on verbs beyond the ones the
// code uses.
func TestManagerRBACIsLeast(t *testing.T) {
	// What the reconciler, leader election and the metrics filter call, by group/resource.
	allowed := map[string][]string{
		"example.com/myapps":                        {"get", "list", "watch"},
		"example.com/myapps/status":                 {"patch"},
		"example.com/myapps/finalizers":             {"update"}, // blockOwnerDeletion on children
		"apps/deployments":                          {"get", "list", "watch", "create", "patch", "delete"},
		"apps/replicasets":                          {"get", "list", "watch", "patch", "delete"}, // list and watch: the pod cache's ReplicaSet metadata; get: the template a failed rollout returns to (rollback.go); patch and delete: the 0.2.0 selector migration
		"apps/controllerrevisions":                  {"get", "list", "create", "delete"},         // the intents of the templates that were Ready (revisions.go)
		"/services":                                 {"get", "list", "watch", "create", "patch"},
		"/configmaps":                               {"get", "list", "watch", "create", "patch", "delete"}, // the files ConfigMaps (files.go); leader election uses a Lease
		"/pods":                                     {"list", "watch"},                                     // the kubelet's reasons a pod cannot start (pods.go)
		"discovery.k8s.io/endpointslices":           {"list", "watch"},                                     // the pods a canary's Services list (endpoints.go)
		"/persistentvolumeclaims":                   {"get"},                                               // whether a claim a volume of a new template takes exists (rollback.go)
		"autoscaling/horizontalpodautoscalers":      {"get", "list", "watch", "create", "patch", "delete"},
		"policy/poddisruptionbudgets":               {"get", "list", "watch", "create", "patch", "delete"},
		"networking.k8s.io/ingresses":               {"get", "list", "watch", "create", "patch", "delete"}, // spec.expose (expose.go)
		"networking.k8s.io/networkpolicies":         {"get", "list", "watch", "create", "patch", "delete"}, // spec.accessPolicy
		"gateway.networking.k8s.io/httproutes":      {"get", "list", "watch", "create", "patch", "delete"}, // spec.expose through a Gateway, once the Gateway API is served
		"monitoring.coreos.com/podmonitors":         {"get", "list", "watch", "create", "patch", "delete"}, // spec.metrics, once the Prometheus Operator's CRDs are served (podmonitors.go)
		"cert-manager.io/certificates":              {"get", "list", "watch", "create", "patch", "delete"}, // spec.expose.tls.issuerRef, once cert-manager's CRDs are served (certificates.go)
		"/events":                                   {"create", "patch"},
		"coordination.k8s.io/leases":                {"get", "create", "update"},
		"authentication.k8s.io/tokenreviews":        {"create"},
		"authorization.k8s.io/subjectaccessreviews": {"create"},
		// The admission policy and its binding the operator applies at start (admission_policy.go),
		// by name only (ownPolicyOnly).
		"admissionregistration.k8s.io/validatingadmissionpolicies":       {"get", "list", "watch", "create", "patch", "delete"},
		"admissionregistration.k8s.io/validatingadmissionpolicybindings": {"get", "list", "watch", "create", "patch", "delete"},
		// What serves the exposure (expose_reads.go): read only.
		"networking.k8s.io/ingressclasses":         {"get", "list", "watch"},
		"gateway.networking.k8s.io/gateways":       {"get", "list", "watch"},
		"gateway.networking.k8s.io/gatewayclasses": {"get", "list", "watch"},
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
					if ownPolicyOnly[key] && !slices.Equal(r.ResourceNames, []string{"myapps.example.com"}) {
						t.Errorf("%s: %s granted beyond the operator's own (resourceNames %v)", where, key, r.ResourceNames)
					}
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

// ownPolicyOnly are the kinds the manager may reach only by the name of its own objects.
var ownPolicyOnly = map[string]bool{
	"admissionregistration.k8s.io/validatingadmissionpolicies":       true,
	"admissionregistration.k8s.io/validatingadmissionpolicybindings": true,
}

// clusterScoped are the only resources the manager needs cluster-wide in every install mode:
// the metrics endpoint's authentication and authorization filter creates the reviews, the
// manager applies its admission policy and binding, which are cluster-scoped kinds, and it
// reads what serves the exposure: IngressClasses and GatewayClasses, cluster-scoped, and
// Gateways, namespaced but read only and usually in another namespace than the routes
// attached to them (expose_reads.go).
var clusterScoped = map[string]bool{
	"networking.k8s.io/ingressclasses":                               true,
	"gateway.networking.k8s.io/gateways":                             true,
	"gateway.networking.k8s.io/gatewayclasses":                       true,
	"authentication.k8s.io/tokenreviews":                             true,
	"authorization.k8s.io/subjectaccessreviews":                      true,
	"admissionregistration.k8s.io/validatingadmissionpolicies":       true,
	"admissionregistration.k8s.io/validatingadmissionpolicybindings": true,
}

// TestCSVPermissionsFollowInstallMode checks the split that makes each install mode least
// privilege: OLM binds `clusterPermissions` cluster-wide whatever the OperatorGroup, and
// `permissions` only in the operator's and the target namespaces (cluster-wide only for
// AllNamespaces). So every namespaced rule must be under `permissions`, and
// `clusterPermissions` must hold the cluster-scoped reviews and nothing else. `make deploy`
// (config/rbac) keeps binding the manager's rules cluster-wide.
func TestCSVPermissionsFollowInstallMode(t *testing.T) {
	bundle, err := manifests.GetBundleFromDir(bundleDir)
	if err != nil {
		t.Fatal(err)
	}
	spec := bundle.CSV.Spec.InstallStrategy.StrategySpec
	resources := func(perms []v1alpha1.StrategyDeploymentPermissions) map[string]bool {
		out := map[string]bool{}
		for _, p := range perms {
			for _, r := range p.Rules {
				for _, g := range r.APIGroups {
					for _, res := range r.Resources {
						out[g+"/"+res] = true
					}
				}
			}
		}
		return out
	}
	cluster, namespaced := resources(spec.ClusterPermissions), resources(spec.Permissions)
	for res := range cluster {
		if !clusterScoped[res] {
			t.Errorf("clusterPermissions grant %s, a namespaced resource the manager needs in its target namespaces only: OLM would grant it in every namespace", res)
		}
	}
	for res := range clusterScoped {
		if !cluster[res] {
			t.Errorf("clusterPermissions lack %s, which the manager needs cluster-wide", res)
		}
		if namespaced[res] {
			t.Errorf("permissions grant %s, a cluster-scoped resource", res)
		}
	}
	for _, res := range []string{"example.com/myapps", "example.com/myapps/status", "apps/deployments",
		"/services", "autoscaling/horizontalpodautoscalers", "policy/poddisruptionbudgets", "/events",
		"coordination.k8s.io/leases"} {
		if !namespaced[res] {
			t.Errorf("permissions lack %s, which the manager needs in its target namespaces", res)
		}
	}

	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "role_binding.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var binding rbacv1.ClusterRoleBinding
	if err := yaml.Unmarshal(raw, &binding); err != nil {
		t.Fatal(err)
	}
	if binding.Kind != "ClusterRoleBinding" || binding.RoleRef.Kind != "ClusterRole" || binding.RoleRef.Name != "manager-role" {
		t.Errorf("config/rbac/role_binding.yaml: make deploy should bind manager-role cluster-wide, got a %s of %s %s",
			binding.Kind, binding.RoleRef.Kind, binding.RoleRef.Name)
	}
}

// TestSecretTrackingRoleIsOptIn: the ClusterRole that lets the operator track Secrets grants
// only what the metadata watch and its reads need (get, list, watch on Secrets), and no
// default install includes it: an administrator applies and binds it.
func TestSecretTrackingRoleIsOptIn(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "secret-tracking", "cluster_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(raw, &role); err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}}}
	if !reflect.DeepEqual(role.Rules, want) {
		t.Errorf("the Secret tracking role grants %+v, want %+v", role.Rules, want)
	}
	for _, dir := range []string{"rbac", "default", "manifests"} {
		k, err := os.ReadFile(filepath.Join("..", "..", "config", dir, "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(k), "secret-tracking") {
			t.Errorf("config/%s/kustomization.yaml includes the Secret tracking role: it must stay opt-in", dir)
		}
	}
}
