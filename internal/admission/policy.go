// Package admission builds the ValidatingAdmissionPolicy that refuses, when a MyApp is
// created or changed, what Kubernetes would refuse in the pods the MyApp makes and the CRD's
// own rules cannot check: label selectors, label keys, namespaces and node selector terms
// inside affinity terms and topology spread constraints, sysctl names, and the paths of a
// projected volume's items, which must differ across its sources. Those are strings in lists
// (of embedded core types that Kubernetes bounds neither in number nor in length, or nested
// three deep), so a CEL rule in the CRD over them exceeds the API server's cost budget for a
// CRD, which prices every list at the largest a request could hold. A policy is priced per
// request, on the object it is given, within the API server's runtime budget.
//
// Each expression mirrors a function of Kubernetes' pod validation (k8s.io/kubernetes
// pkg/apis/core/validation, 1.36): validateAffinity, ValidateNodeSelector,
// validatePodAffinityTerm, validateTopologySpreadConstraints, validateSysctls,
// validateProjectionSources and ValidateLabelSelector. Where a pod made from the template is
// checked more strictly than the template (the keys of matchLabelKeys, merged into the pod's
// selector at its creation), the policy follows the pod: a Deployment whose pods are refused
// cannot run either.
package admission

import (
	"maps"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionregistrationv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

// Name names both the policy and its binding.
const Name = "myapps.example.com"

// Regular expressions of Kubernetes' name formats (k8s.io/apimachinery/pkg/util/validation).
const (
	qualifiedNameRE = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	labelValueRE    = `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	dnsLabelRE      = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	dnsSubdomainRE  = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// validation.SysctlContainSlashFmt: segments of lower-case letters, digits, '-' and '_',
	// separated by '.' or '/'.
	sysctlNameRE = `^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`
)

// Each function below returns a CEL expression that holds when its argument, itself a CEL
// expression, is valid. The arguments are names bound by a macro (all, exists), so that
// repeating them costs nothing.

// qualifiedName: IsQualifiedName, a label key: an optional DNS subdomain prefix of at most
// 253 characters and '/', then at most 63 letters, digits, '-', '_' and '.'.
func qualifiedName(x string) string {
	return "(" + x + ".matches('" + qualifiedNameRE + "') && " + x + ".indexOf('/') <= 253 && size(" +
		x + ".substring(" + x + ".lastIndexOf('/') + 1)) <= 63)"
}

// labelValue: IsValidLabelValue.
func labelValue(x string) string {
	return "(size(" + x + ") <= 63 && " + x + ".matches('" + labelValueRE + "'))"
}

// dnsLabel: IsDNS1123Label, a namespace name.
func dnsLabel(x string) string {
	return "(size(" + x + ") <= 63 && " + x + ".matches('" + dnsLabelRE + "'))"
}

// dnsSubdomain: IsDNS1123Subdomain, a node name.
func dnsSubdomain(x string) string {
	return "(size(" + x + ") <= 253 && " + x + ".matches('" + dnsSubdomainRE + "'))"
}

// labelSelector: ValidateLabelSelector with invalid label values refused, for a selector s
// that is set.
func labelSelector(s string) string {
	return "((!has(" + s + ".matchLabels) || " + s + ".matchLabels.all(k, " + qualifiedName("k") + " && " +
		labelValue(s+".matchLabels[k]") + ")) && (!has(" + s + ".matchExpressions) || " + s +
		".matchExpressions.all(e, " + qualifiedName("e.key") +
		" && (e.operator in ['In', 'NotIn'] ? (has(e.values) && size(e.values) > 0) : " +
		"(e.operator in ['Exists', 'DoesNotExist'] && (!has(e.values) || size(e.values) == 0)))" +
		" && (!has(e.values) || e.values.all(v, " + labelValue("v") + ")))))"
}

// projectionPaths: the paths of the items of projection s, a source of a projected volume.
func projectionPaths(s string) string {
	return "(" + s + ".?configMap.?items.orValue([]).map(i, i.path) + " + s + ".?secret.?items.orValue([]).map(i, i.path) + " +
		s + ".?downwardAPI.?items.orValue([]).map(i, i.path))"
}

// celKeySet writes the keys of a label map the desired package builds as a CEL map, for `in`.
func celKeySet(labels map[string]string) string {
	quoted := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		quoted = append(quoted, "'"+k+"': ''")
	}
	return "{" + strings.Join(quoted, ", ") + "}"
}

// podLabelKeys are the keys of the labels the operator puts on every pod, and the
// Deployment's pod-template-hash.
var podLabelKeys = func() string {
	labels := desired.Labels(&examplev1.MyApp{})
	labels[appsv1.DefaultDeploymentUniqueLabelKey] = ""
	return celKeySet(labels)
}()

// podHasLabel holds when the MyApp's pods carry label key k: the operator's labels, the
// user's podLabels, and the Deployment's pod-template-hash.
func podHasLabel(k string) string {
	return "(" + k + " in " + podLabelKeys + " || (has(object.spec.podLabels) && " + k + " in object.spec.podLabels))"
}

// matchLabelKeysClash holds when key k of the list keys refuses the pods: ValidateMatchLabelKeysAndMismatchLabelKeys
// refuses a selector in which a key of matchLabelKeys appears in matchExpressions after it
// already appeared (in matchLabels, or an earlier expression), and the API server appends to
// a pod's selector an expression for each key of matchLabelKeys the pod carries, before it
// validates the pod. matchLabels is a map of the selector's matchLabels, expressions the list
// of its matchExpressions.
func matchLabelKeysClash(keys, k, matchLabels, expressions string) string {
	count := "(size(" + expressions + ".filter(e, e.key == " + k + ")) + (" + podHasLabel(k) + " ? size(" + keys +
		".filter(x, x == " + k + ")) : 0))"
	return "(" + count + " >= 1 && (" + k + " in " + matchLabels + " || " + count + " >= 2))"
}

// nodeSelectorTerm: ValidateNodeSelectorTerm for term t. required says whether the term is
// required: only then must values be label values.
func nodeSelectorTerm(t string, required bool) string {
	values := ""
	if required {
		values = " && (!has(r.values) || r.values.all(v, " + labelValue("v") + "))"
	}
	return "((!has(" + t + ".matchExpressions) || " + t + ".matchExpressions.all(r, " + qualifiedName("r.key") +
		" && (r.operator in ['In', 'NotIn'] ? (has(r.values) && size(r.values) > 0) : " +
		"r.operator in ['Exists', 'DoesNotExist'] ? (!has(r.values) || size(r.values) == 0) : " +
		"(r.operator in ['Gt', 'Lt'] && has(r.values) && size(r.values) == 1))" + values + ")) && " +
		"(!has(" + t + ".matchFields) || " + t + ".matchFields.all(f, f.key == 'metadata.name' && " +
		"f.operator in ['In', 'NotIn'] && has(f.values) && size(f.values) == 1 && f.values.all(v, " +
		dnsSubdomain("v") + "))))"
}

// unchanged holds on an update that leaves the fields at paths (below object) as they were: a
// MyApp stored before the policy existed can still be changed elsewhere, as the API server
// ratchets the CRD's own rules.
func unchanged(paths []string) string {
	out := "oldObject != null"
	for _, path := range paths {
		out += " && has(oldObject." + path + ") == has(object." + path + ") && (!has(object." +
			path + ") || oldObject." + path + " == object." + path + ")"
	}
	return "(" + out + ")"
}

// podAffinityTerms gathers the pod affinity and anti-affinity terms of a MyApp, required and
// preferred.
const podAffinityTerms = "object.spec.?affinity.?podAffinity.?requiredDuringSchedulingIgnoredDuringExecution.orValue([]) + " +
	"object.spec.?affinity.?podAffinity.?preferredDuringSchedulingIgnoredDuringExecution.orValue([]).map(w, w.podAffinityTerm) + " +
	"object.spec.?affinity.?podAntiAffinity.?requiredDuringSchedulingIgnoredDuringExecution.orValue([]) + " +
	"object.spec.?affinity.?podAntiAffinity.?preferredDuringSchedulingIgnoredDuringExecution.orValue([]).map(w, w.podAffinityTerm)"

// ownSelectorKeys are the keys of the selector the operator gives a spread constraint that has
// none: the MyApp's own pod selector.
var ownSelectorKeys = celKeySet(desired.SelectorLabels(&examplev1.MyApp{}))

// validation is one rule of the policy: what must hold, which parts of the MyApp it reads
// (it is skipped on an update that leaves them unchanged), and what the user is told.
type validation struct {
	paths         []string
	rule, message string
}

var validations = []validation{
	{
		paths: []string{"spec.affinity"},
		rule: "!has(object.spec.affinity) || !has(object.spec.affinity.nodeAffinity) || " +
			"!has(object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution) || " +
			"(has(object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms) && " +
			"size(object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms) > 0 && " +
			"object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.all(t, " +
			nodeSelectorTerm("t", true) + "))",
		message: "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution: Invalid value: " +
			"there must be at least one node selector term, and in each: a matchExpressions key must be a qualified name " +
			"such as example.com/zone; operator In or NotIn needs values, Exists or DoesNotExist takes none, Gt or Lt " +
			"exactly one; every value must be a label value (at most 63 letters, digits, '-', '_' and '.'); matchFields " +
			"take key metadata.name, operator In or NotIn and exactly one node name",
	},
	{
		paths: []string{"spec.affinity"},
		rule: "!has(object.spec.affinity) || !has(object.spec.affinity.nodeAffinity) || " +
			"!has(object.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution) || " +
			"object.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.all(p, " +
			nodeSelectorTerm("p.preference", false) + ")",
		message: "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution: Invalid value: " +
			"in each preference, a matchExpressions key must be a qualified name such as example.com/zone; operator In " +
			"or NotIn needs values, Exists or DoesNotExist takes none, Gt or Lt exactly one; matchFields take key " +
			"metadata.name, operator In or NotIn and exactly one node name",
	},
	{
		paths: []string{"spec.affinity"},
		rule: "variables.podAffinityTerms.all(t, (!has(t.labelSelector) || " + labelSelector("t.labelSelector") +
			") && (!has(t.namespaceSelector) || " + labelSelector("t.namespaceSelector") + "))",
		message: "spec.affinity: Invalid value: in every pod affinity and anti-affinity term, labelSelector and " +
			"namespaceSelector must be valid label selectors: keys that are qualified names such as app or " +
			"example.com/team, values that are label values (at most 63 letters, digits, '-', '_' and '.'), operator " +
			"In or NotIn with values, Exists or DoesNotExist without",
	},
	{
		paths: []string{"spec.affinity"},
		rule: "variables.podAffinityTerms.all(t, (!has(t.namespaces) || t.namespaces.all(n, " + dnsLabel("n") +
			")) && " + qualifiedName("t.topologyKey") + ")",
		message: "spec.affinity: Invalid value: in every pod affinity and anti-affinity term, namespaces must be " +
			"namespace names (at most 63 lower-case letters, digits and '-') and topologyKey a qualified name such as " +
			"topology.kubernetes.io/zone",
	},
	{
		paths: []string{"spec.affinity", "spec.podLabels"},
		rule: "variables.podAffinityTerms.all(t, " +
			"(has(t.labelSelector) || ((!has(t.matchLabelKeys) || size(t.matchLabelKeys) == 0) && " +
			"(!has(t.mismatchLabelKeys) || size(t.mismatchLabelKeys) == 0))) && " +
			"(!has(t.matchLabelKeys) || t.matchLabelKeys.all(k, " + qualifiedName("k") +
			" && !(has(t.mismatchLabelKeys) && k in t.mismatchLabelKeys) && !" +
			matchLabelKeysClash("t.matchLabelKeys", "k", "t.?labelSelector.?matchLabels.orValue({})",
				"t.?labelSelector.?matchExpressions.orValue([])") + ")) && " +
			"(!has(t.mismatchLabelKeys) || t.mismatchLabelKeys.all(k, " + qualifiedName("k") + ")))",
		message: "spec.affinity: Invalid value: in every pod affinity and anti-affinity term, matchLabelKeys and " +
			"mismatchLabelKeys need a labelSelector, must be qualified names such as app or example.com/team, and must " +
			"not share a key; a key of matchLabelKeys that the pods carry (the operator's labels, podLabels, " +
			"pod-template-hash) must appear in neither the labelSelector nor matchLabelKeys again, and no key of " +
			"matchLabelKeys may appear twice in the labelSelector",
	},
	{
		paths: []string{"spec.topologySpreadConstraints"},
		rule: "!has(object.spec.topologySpreadConstraints) || object.spec.topologySpreadConstraints.all(c, " +
			"!has(c.labelSelector) || " + labelSelector("c.labelSelector") + ")",
		message: "spec.topologySpreadConstraints: Invalid value: every labelSelector must be a valid label selector: " +
			"keys that are qualified names such as app or example.com/team, values that are label values (at most 63 " +
			"letters, digits, '-', '_' and '.'), operator In or NotIn with values, Exists or DoesNotExist without",
	},
	{
		paths: []string{"spec.topologySpreadConstraints", "spec.podLabels"},
		// Without a labelSelector, the operator gives the constraint the MyApp's own pod selector.
		rule: "!has(object.spec.topologySpreadConstraints) || object.spec.topologySpreadConstraints.all(c, " +
			"!has(c.matchLabelKeys) || c.matchLabelKeys.all(k, " + qualifiedName("k") + " && !" +
			matchLabelKeysClash("c.matchLabelKeys", "k",
				"(has(c.labelSelector) ? c.labelSelector.?matchLabels.orValue({}) : "+ownSelectorKeys+")",
				"c.?labelSelector.?matchExpressions.orValue([])") + "))",
		message: "spec.topologySpreadConstraints: Invalid value: matchLabelKeys must be qualified names such as " +
			"app or example.com/team; a key the pods carry (the operator's labels, podLabels, pod-template-hash) must " +
			"appear in neither the labelSelector (without one, the MyApp's own selector, " + desired.LabelSelector +
			") nor matchLabelKeys again, and no key of matchLabelKeys may appear twice in the labelSelector",
	},
	{
		// validateProjectionSources: the items of a projected volume's sources share one
		// directory, and two on one path are refused.
		// The paths are gathered once per volume, a list per source, and each path counted
		// across them.
		paths: []string{"spec.volumes"},
		rule: "object.spec.?volumes.orValue([]).map(v, v.?projected.?sources.orValue([]).map(s, " + projectionPaths("s") + ")).all(p, " +
			"p.all(a, a.all(x, p.map(b, b.filter(y, y == x).size()).sum() == 1)))",
		message: "spec.volumes: Invalid value: in a projected volume, two items of its sources (configMap, secret and " +
			"downwardAPI items) must not share a path",
	},
	{
		paths: []string{"spec.podSecurityContext"},
		rule: "!has(object.spec.podSecurityContext) || !has(object.spec.podSecurityContext.sysctls) || " +
			"object.spec.podSecurityContext.sysctls.all(s, s.name.matches('" + sysctlNameRE + "'))",
		message: "spec.podSecurityContext.sysctls: Invalid value: every name must be a sysctl name such as " +
			"net.core.somaxconn or kernel/shm_rmid_forced: lower-case letters, digits, '-' and '_' in segments " +
			"separated by '.' or '/'",
	},
	{
		paths: []string{"spec.podSecurityContext"},
		rule: "!has(object.spec.podSecurityContext) || !has(object.spec.podSecurityContext.sysctls) || " +
			"object.spec.podSecurityContext.sysctls.all(s, object.spec.podSecurityContext.sysctls.exists_one(o, o.name == s.name))",
		message: "spec.podSecurityContext.sysctls: Duplicate value: each sysctl name may appear once",
	},
}

// Policy is the policy as the operator applies it. It fails closed: a MyApp the policy
// cannot evaluate (one past the runtime cost budget) is refused, not let through.
func Policy() *admissionregistrationv1ac.ValidatingAdmissionPolicyApplyConfiguration {
	spec := admissionregistrationv1ac.ValidatingAdmissionPolicySpec().
		WithFailurePolicy(admissionregistrationv1.Fail).
		// matchConstraints is atomic: the API server's defaults are written out, or what the
		// operator owns would never read as what it applies.
		WithMatchConstraints(admissionregistrationv1ac.MatchResources().
			WithNamespaceSelector(metav1ac.LabelSelector()).
			WithObjectSelector(metav1ac.LabelSelector()).
			WithMatchPolicy(admissionregistrationv1.Equivalent).
			WithResourceRules(admissionregistrationv1ac.NamedRuleWithOperations().
				WithOperations(admissionregistrationv1.Create, admissionregistrationv1.Update).
				WithAPIGroups("example.com").WithAPIVersions("v1").WithResources("myapps").
				WithScope(admissionregistrationv1.AllScopes))).
		WithVariables(admissionregistrationv1ac.Variable().WithName("podAffinityTerms").WithExpression(podAffinityTerms))
	for _, v := range validations {
		spec.WithValidations(admissionregistrationv1ac.Validation().
			WithExpression(unchanged(v.paths) + " || " + v.rule).
			WithMessage(v.message).
			// 422 Invalid, as the CRD's own rules answer, rather than the default 403.
			WithReason(metav1.StatusReasonInvalid))
	}
	return admissionregistrationv1ac.ValidatingAdmissionPolicy(Name).
		WithLabels(map[string]string{desired.LabelManagedBy: desired.ManagedBy}).
		WithSpec(spec)
}

// Binding puts the policy in force in every namespace.
func Binding() *admissionregistrationv1ac.ValidatingAdmissionPolicyBindingApplyConfiguration {
	return admissionregistrationv1ac.ValidatingAdmissionPolicyBinding(Name).
		WithLabels(map[string]string{desired.LabelManagedBy: desired.ManagedBy}).
		WithSpec(admissionregistrationv1ac.ValidatingAdmissionPolicyBindingSpec().
			WithPolicyName(Name).
			WithValidationActions(admissionregistrationv1.Deny))
}
