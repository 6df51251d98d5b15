// Package admission builds the ValidatingAdmissionPolicy that refuses, when a MyApp is
// created or changed, what Kubernetes would refuse in the pods the MyApp makes and the CRD's
// own rules cannot check: label selectors, label keys, namespaces and node selector terms
// inside affinity terms and topology spread constraints, and sysctl names. Those are strings
// in lists of embedded core types that Kubernetes bounds neither in number nor in length, so
// a CEL rule in the CRD over them exceeds the API server's cost budget for a CRD, which
// prices every list at the largest a request could hold. A policy is priced per request, on
// the object it is given, within the API server's runtime budget.
//
// Each expression mirrors a function of Kubernetes' pod validation (k8s.io/kubernetes
// pkg/apis/core/validation, 1.36): validateAffinity, ValidateNodeSelector,
// validatePodAffinityTerm, validateTopologySpreadConstraints, validateSysctls and
// ValidateLabelSelector. Where a pod made from the template is checked more strictly than the
// template (the keys of matchLabelKeys, merged into the pod's selector at its creation), the
// policy follows the pod: a Deployment whose pods are refused cannot run either.
package admission

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionregistrationv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

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

// selectorHasKey holds when key k is one of selector s's keys, in matchLabels or
// matchExpressions.
func selectorHasKey(s, k string) string {
	return "((has(" + s + ".matchLabels) && " + k + " in " + s + ".matchLabels) || (has(" + s +
		".matchExpressions) && " + s + ".matchExpressions.exists(e, e.key == " + k + ")))"
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

// unchanged holds on an update that leaves the field at path (below object) as it was: a
// MyApp stored before the policy existed can still be changed elsewhere, as the API server
// ratchets the CRD's own rules.
func unchanged(path string) string {
	return "(oldObject != null && has(oldObject." + path + ") == has(object." + path + ") && (!has(object." +
		path + ") || oldObject." + path + " == object." + path + "))"
}

// podAffinityTerms gathers the pod affinity and anti-affinity terms of a MyApp, required and
// preferred.
const podAffinityTerms = "object.spec.?affinity.?podAffinity.?requiredDuringSchedulingIgnoredDuringExecution.orValue([]) + " +
	"object.spec.?affinity.?podAffinity.?preferredDuringSchedulingIgnoredDuringExecution.orValue([]).map(w, w.podAffinityTerm) + " +
	"object.spec.?affinity.?podAntiAffinity.?requiredDuringSchedulingIgnoredDuringExecution.orValue([]) + " +
	"object.spec.?affinity.?podAntiAffinity.?preferredDuringSchedulingIgnoredDuringExecution.orValue([]).map(w, w.podAffinityTerm)"

// validation is one rule of the policy: what must hold, which part of the MyApp it guards
// (it is skipped on an update that leaves that part unchanged), and what the user is told.
type validation struct {
	path, rule, message string
}

var validations = []validation{
	{
		path: "spec.affinity",
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
		path: "spec.affinity",
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
		path: "spec.affinity",
		rule: "variables.podAffinityTerms.all(t, (!has(t.labelSelector) || " + labelSelector("t.labelSelector") +
			") && (!has(t.namespaceSelector) || " + labelSelector("t.namespaceSelector") + "))",
		message: "spec.affinity: Invalid value: in every pod affinity and anti-affinity term, labelSelector and " +
			"namespaceSelector must be valid label selectors: keys that are qualified names such as app or " +
			"example.com/team, values that are label values (at most 63 letters, digits, '-', '_' and '.'), operator " +
			"In or NotIn with values, Exists or DoesNotExist without",
	},
	{
		path: "spec.affinity",
		rule: "variables.podAffinityTerms.all(t, (!has(t.namespaces) || t.namespaces.all(n, " + dnsLabel("n") +
			")) && " + qualifiedName("t.topologyKey") + ")",
		message: "spec.affinity: Invalid value: in every pod affinity and anti-affinity term, namespaces must be " +
			"namespace names (at most 63 lower-case letters, digits and '-') and topologyKey a qualified name such as " +
			"topology.kubernetes.io/zone",
	},
	{
		path: "spec.affinity",
		rule: "variables.podAffinityTerms.all(t, " +
			"(has(t.labelSelector) || ((!has(t.matchLabelKeys) || size(t.matchLabelKeys) == 0) && " +
			"(!has(t.mismatchLabelKeys) || size(t.mismatchLabelKeys) == 0))) && " +
			"(!has(t.matchLabelKeys) || t.matchLabelKeys.all(k, " + qualifiedName("k") +
			" && !(has(t.mismatchLabelKeys) && k in t.mismatchLabelKeys) && !(has(t.labelSelector) && " +
			selectorHasKey("t.labelSelector", "k") + "))) && " +
			"(!has(t.mismatchLabelKeys) || t.mismatchLabelKeys.all(k, " + qualifiedName("k") + ")))",
		message: "spec.affinity: Invalid value: in every pod affinity and anti-affinity term, matchLabelKeys and " +
			"mismatchLabelKeys need a labelSelector, must be qualified names such as app or example.com/team, must not " +
			"share a key, and a key of matchLabelKeys must not also be a key of the labelSelector",
	},
	{
		path: "spec.topologySpreadConstraints",
		rule: "!has(object.spec.topologySpreadConstraints) || object.spec.topologySpreadConstraints.all(c, " +
			"!has(c.labelSelector) || " + labelSelector("c.labelSelector") + ")",
		message: "spec.topologySpreadConstraints: Invalid value: every labelSelector must be a valid label selector: " +
			"keys that are qualified names such as app or example.com/team, values that are label values (at most 63 " +
			"letters, digits, '-', '_' and '.'), operator In or NotIn with values, Exists or DoesNotExist without",
	},
	{
		path: "spec.topologySpreadConstraints",
		rule: "!has(object.spec.topologySpreadConstraints) || object.spec.topologySpreadConstraints.all(c, " +
			"!has(c.matchLabelKeys) || size(c.matchLabelKeys) == 0 || (has(c.labelSelector) && c.matchLabelKeys.all(k, " +
			qualifiedName("k") + " && !" + selectorHasKey("c.labelSelector", "k") + ")))",
		message: "spec.topologySpreadConstraints: Invalid value: matchLabelKeys need a labelSelector, must be " +
			"qualified names such as app or example.com/team, and must not also be keys of the labelSelector",
	},
	{
		path: "spec.podSecurityContext",
		rule: "!has(object.spec.podSecurityContext) || !has(object.spec.podSecurityContext.sysctls) || " +
			"object.spec.podSecurityContext.sysctls.all(s, s.name.matches('" + sysctlNameRE + "'))",
		message: "spec.podSecurityContext.sysctls: Invalid value: every name must be a sysctl name such as " +
			"net.core.somaxconn or kernel/shm_rmid_forced: lower-case letters, digits, '-' and '_' in segments " +
			"separated by '.' or '/'",
	},
	{
		path: "spec.podSecurityContext",
		rule: "!has(object.spec.podSecurityContext) || !has(object.spec.podSecurityContext.sysctls) || " +
			"object.spec.podSecurityContext.sysctls.all(s, size(object.spec.podSecurityContext.sysctls.filter(o, o.name == s.name)) == 1)",
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
			WithExpression(unchanged(v.path) + " || " + v.rule).
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
