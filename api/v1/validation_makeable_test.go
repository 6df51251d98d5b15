package v1_test

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/admission"
	"github.com/example/myapp-operator/internal/testutil"
)

// refusal is a MyApp that admission must refuse, with the field and the words its error
// must carry.
type refusal struct {
	name, spec string
	field      string // must appear in the error
	message    string // and this too, when set
}

func expectRefused(t *testing.T, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := create(t, tc.name, tc.spec)
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				t.Fatalf("want the MyApp refused as invalid, got %v", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error does not name %s: %v", tc.field, err)
			}
			if tc.message != "" && !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error does not say %q: %v", tc.message, err)
			}
		})
	}
}

// TestAdmissionRefusesUndecodableIntegers: an integer no Go field of the operator can hold is
// refused where the API server does not check the format itself.
func TestAdmissionRefusesUndecodableIntegers(t *testing.T) {
	expectRefused(t, []refusal{
		{"surge-past-int32", `{"image":"nginx","rollingUpdate":{"maxSurge":2147483648}}`, "spec.rollingUpdate.maxSurge", "number from 0 to 2147483647"},
		{"surge-percentage-past-int32", `{"image":"nginx","rollingUpdate":{"maxSurge":"2147483648%"}}`, "spec.rollingUpdate.maxSurge", "percentage"},
		{"surge-percentage-of-many-digits", `{"image":"nginx","rollingUpdate":{"maxSurge":"99999999999999999999%"}}`, "spec.rollingUpdate.maxSurge", "percentage"},
		{"unavailable-past-int32", `{"image":"nginx","rollingUpdate":{"maxUnavailable":2147483648}}`, "spec.rollingUpdate.maxUnavailable", "number from 0 to 2147483647"},
		{"unavailable-percentage-of-many-digits", `{"image":"nginx","rollingUpdate":{"maxUnavailable":"99999999999999999999%"}}`, "spec.rollingUpdate.maxUnavailable", "percentage from 0% to 100%"},
		{"pdb-min-past-int32", `{"image":"nginx","podDisruptionBudget":{"minAvailable":2147483648}}`, "spec.podDisruptionBudget.minAvailable", "number from 0 to 2147483647"},
		{"pdb-max-past-int64", `{"image":"nginx","podDisruptionBudget":{"maxUnavailable":100000000000000000000}}`, "spec.podDisruptionBudget.maxUnavailable", ""},
		{"replicas-past-int32", `{"image":"nginx","replicas":2147483648}`, "spec.replicas", "2147483647"},
		{"probe-period-past-int32", `{"image":"nginx","readinessProbe":{"tcpSocket":{},"periodSeconds":2147483648}}`, "spec.readinessProbe.periodSeconds", "2147483647"},
		{"autoscaling-max-past-int32", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":2147483648}}`, "spec.autoScaling.maxReplicas", "2147483647"},
	})
}

// TestAdmissionRefusesWhatKubernetesRefusesInChildren: the embedded core types carry
// schemas without Kubernetes' semantic validation, so the MyApp's rules mirror it; each case
// here was accepted before and made a child the API server refused.
func TestAdmissionRefusesWhatKubernetesRefusesInChildren(t *testing.T) {
	annotation := strings.Repeat("a", 131072)
	expectRefused(t, []refusal{
		// Extended resources and hugepages are not overcommitted: a request needs an equal limit.
		{"gpu-request-without-limit", `{"image":"nginx","resources":{"requests":{"nvidia.com/gpu":1}}}`, "spec.resources.requests", "must have a limit, equal to the request"},
		{"gpu-request-below-limit", `{"image":"nginx","resources":{"requests":{"nvidia.com/gpu":1},"limits":{"nvidia.com/gpu":2}}}`, "spec.resources.requests", "equal to the request"},
		{"hugepages-request-without-limit", `{"image":"nginx","resources":{"requests":{"hugepages-2Mi":"64Mi","memory":"1Gi"}}}`, "spec.resources.requests", "hugepages must have a limit"},
		{"gpu-limit-fraction", `{"image":"nginx","resources":{"limits":{"nvidia.com/gpu":"0.5"}}}`, "spec.resources.limits", "whole number"},
		{"gpu-request-millis", `{"image":"nginx","resources":{"requests":{"example.com/dongle":"1500m"},"limits":{"example.com/dongle":"1500m"}}}`, "spec.resources", "whole number"},
		{"hugepages-alone", `{"image":"nginx","resources":{"limits":{"hugepages-2Mi":"64Mi"},"requests":{"hugepages-2Mi":"64Mi"}}}`, "spec.resources", "hugepages require a cpu or memory request or limit"},
		// Probe headers: Kubernetes accepts letters, digits and '-' only.
		{"probe-header-underscore", `{"image":"nginx","readinessProbe":{"httpGet":{"httpHeaders":[{"name":"X_Probe","value":"1"}]}}}`, "spec.readinessProbe.httpGet.httpHeaders[0].name", "valid HTTP header name"},
		{"probe-header-dot", `{"image":"nginx","livenessProbe":{"httpGet":{"httpHeaders":[{"name":"X.Probe","value":"1"}]}}}`, "spec.livenessProbe.httpGet.httpHeaders[0].name", "valid HTTP header name"},
		// Tolerations.
		{"toleration-exists-with-value", `{"image":"nginx","tolerations":[{"key":"k","operator":"Exists","value":"v"}]}`, "spec.tolerations", "value must be empty when operator is Exists"},
		{"toleration-seconds-without-no-execute", `{"image":"nginx","tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule","tolerationSeconds":30}]}`, "spec.tolerations", "effect must be NoExecute when tolerationSeconds is set"},
		{"toleration-seconds-without-effect", `{"image":"nginx","tolerations":[{"key":"k","tolerationSeconds":30}]}`, "spec.tolerations", "effect must be NoExecute"},
		{"toleration-empty-key-equal", `{"image":"nginx","tolerations":[{"operator":"Equal","value":"v"}]}`, "spec.tolerations", "operator must be Exists when key is empty"},
		{"toleration-bad-operator", `{"image":"nginx","tolerations":[{"key":"k","operator":"In"}]}`, "spec.tolerations", "operator must be Equal or Exists"},
		{"toleration-bad-effect", `{"image":"nginx","tolerations":[{"key":"k","effect":"Never"}]}`, "spec.tolerations", "effect must be NoSchedule, PreferNoSchedule or NoExecute"},
		// Topology spread constraints.
		{"spread-max-skew-zero", `{"image":"nginx","topologySpreadConstraints":[{"maxSkew":0,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]}`, "spec.topologySpreadConstraints", "maxSkew must be from 1"},
		{"spread-when-never", `{"image":"nginx","topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"Never"}]}`, "spec.topologySpreadConstraints", "whenUnsatisfiable must be DoNotSchedule or ScheduleAnyway"},
		{"spread-same-key-twice", `{"image":"nginx","topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"},{"maxSkew":2,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}]}`, "spec.topologySpreadConstraints[1]", "Duplicate value"},
		{"spread-empty-key", `{"image":"nginx","topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"","whenUnsatisfiable":"DoNotSchedule"}]}`, "spec.topologySpreadConstraints", "topologyKey must not be empty"},
		{"spread-min-domains-schedule-anyway", `{"image":"nginx","topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway","minDomains":2}]}`, "spec.topologySpreadConstraints", "only with whenUnsatisfiable DoNotSchedule"},
		{"spread-min-domains-zero", `{"image":"nginx","topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","minDomains":0}]}`, "spec.topologySpreadConstraints", "minDomains must be from 1"},
		{"spread-bad-policy", `{"image":"nginx","topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","nodeTaintsPolicy":"Always"}]}`, "spec.topologySpreadConstraints", "must be Honor or Ignore"},
		// Affinity.
		{"node-affinity-weight-zero", `{"image":"nginx","affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":0,"preference":{}}]}}}`, "spec.affinity", "nodeAffinity: the weight of a preferred term must be from 1 to 100"},
		{"pod-anti-affinity-weight-101", `{"image":"nginx","affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":101,"podAffinityTerm":{"topologyKey":"zone"}}]}}}`, "spec.affinity", "podAntiAffinity: the weight"},
		{"pod-affinity-weight-negative", `{"image":"nginx","affinity":{"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":-1,"podAffinityTerm":{"topologyKey":"zone"}}]}}}`, "spec.affinity", "podAffinity: the weight"},
		{"pod-affinity-empty-topology-key", `{"image":"nginx","affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":""}]}}}`, "spec.affinity", "podAffinity: every term must have a topologyKey"},
		// User and group ids, and seccomp and AppArmor profiles.
		{"run-as-user-negative", `{"image":"nginx","securityContext":{"runAsUser":-1}}`, "spec.securityContext.runAsUser", "from 0 to 2147483647"},
		{"run-as-user-past-int32", `{"image":"nginx","securityContext":{"runAsUser":2147483648}}`, "spec.securityContext.runAsUser", "from 0 to 2147483647"},
		{"run-as-group-negative", `{"image":"nginx","securityContext":{"runAsGroup":-1}}`, "spec.securityContext.runAsGroup", "from 0 to 2147483647"},
		{"pod-run-as-user-negative", `{"image":"nginx","podSecurityContext":{"runAsUser":-1}}`, "spec.podSecurityContext.runAsUser", "from 0 to 2147483647"},
		{"pod-fs-group-negative", `{"image":"nginx","podSecurityContext":{"fsGroup":-5}}`, "spec.podSecurityContext.fsGroup", "from 0 to 2147483647"},
		{"pod-supplemental-group-negative", `{"image":"nginx","podSecurityContext":{"supplementalGroups":[1000,-1]}}`, "spec.podSecurityContext.supplementalGroups", "from 0 to 2147483647"},
		{"pod-fs-group-change-policy", `{"image":"nginx","podSecurityContext":{"fsGroupChangePolicy":"Never"}}`, "spec.podSecurityContext.fsGroupChangePolicy", "OnRootMismatch or Always"},
		{"seccomp-localhost-without-profile", `{"image":"nginx","podSecurityContext":{"seccompProfile":{"type":"Localhost"}}}`, "spec.podSecurityContext.seccompProfile", "localhostProfile must be set when, and only when, type is Localhost"},
		{"seccomp-profile-without-localhost", `{"image":"nginx","securityContext":{"seccompProfile":{"type":"RuntimeDefault","localhostProfile":"p.json"}}}`, "spec.securityContext.seccompProfile", "only when, type is Localhost"},
		{"seccomp-bad-type", `{"image":"nginx","securityContext":{"seccompProfile":{"type":"Default"}}}`, "spec.securityContext.seccompProfile.type", "RuntimeDefault, Unconfined or Localhost"},
		{"seccomp-absolute-profile", `{"image":"nginx","podSecurityContext":{"seccompProfile":{"type":"Localhost","localhostProfile":"/etc/p.json"}}}`, "spec.podSecurityContext.seccompProfile.localhostProfile", "relative path without '..'"},
		{"seccomp-escaping-profile", `{"image":"nginx","podSecurityContext":{"seccompProfile":{"type":"Localhost","localhostProfile":"profiles/../../p.json"}}}`, "spec.podSecurityContext.seccompProfile.localhostProfile", "relative path without '..'"},
		{"apparmor-localhost-without-profile", `{"image":"nginx","securityContext":{"appArmorProfile":{"type":"Localhost"}}}`, "spec.securityContext.appArmorProfile", "localhostProfile must be set"},
		// Pod security context values Kubernetes lists.
		{"se-linux-change-policy", `{"image":"nginx","podSecurityContext":{"seLinuxChangePolicy":"Never"}}`, "spec.podSecurityContext.seLinuxChangePolicy", "must be Recursive"},
		{"se-linux-change-policy-mount-option", `{"image":"nginx","podSecurityContext":{"seLinuxChangePolicy":"MountOption"}}`, "spec.podSecurityContext.seLinuxChangePolicy", "SELinuxMount feature gate"},
		{"supplemental-groups-policy", `{"image":"nginx","podSecurityContext":{"supplementalGroupsPolicy":"Loose"}}`, "spec.podSecurityContext.supplementalGroupsPolicy", "Merge or Strict"},
		{"proc-mount-unmasked", `{"image":"nginx","securityContext":{"procMount":"Unmasked"}}`, "spec.securityContext.procMount", "must be Default"},
		{"proc-mount-unknown", `{"image":"nginx","securityContext":{"procMount":"Masked"}}`, "spec.securityContext.procMount", "must be Default"},
		// Windows options, in the container's and the pod's security context.
		{"host-process", `{"image":"nginx","securityContext":{"windowsOptions":{"hostProcess":true}}}`, "spec.securityContext.windowsOptions.hostProcess", "needs hostNetwork"},
		{"pod-host-process", `{"image":"nginx","podSecurityContext":{"windowsOptions":{"hostProcess":true}}}`, "spec.podSecurityContext.windowsOptions.hostProcess", "needs hostNetwork"},
		{"gmsa-spec-name", `{"image":"nginx","securityContext":{"windowsOptions":{"gmsaCredentialSpecName":"Web_App"}}}`, "spec.securityContext.windowsOptions.gmsaCredentialSpecName", "valid object name"},
		{"gmsa-spec-empty", `{"image":"nginx","podSecurityContext":{"windowsOptions":{"gmsaCredentialSpec":""}}}`, "spec.podSecurityContext.windowsOptions.gmsaCredentialSpec", "must not be empty"},
		{"gmsa-spec-too-long", `{"image":"nginx","podSecurityContext":{"windowsOptions":{"gmsaCredentialSpec":"` + strings.Repeat("é", 32769) + `"}}}`, "spec.podSecurityContext.windowsOptions.gmsaCredentialSpec", "at most 64 KiB"},
		{"run-as-user-name-empty", `{"image":"nginx","securityContext":{"windowsOptions":{"runAsUserName":""}}}`, "spec.securityContext.windowsOptions.runAsUserName", "must not be empty"},
		{"run-as-user-name-control", `{"image":"nginx","securityContext":{"windowsOptions":{"runAsUserName":"app\u0007"}}}`, "spec.securityContext.windowsOptions.runAsUserName", "control characters"},
		{"run-as-user-name-two-backslashes", `{"image":"nginx","podSecurityContext":{"windowsOptions":{"runAsUserName":"a\\b\\c"}}}`, "spec.podSecurityContext.windowsOptions.runAsUserName", "more than one backslash"},
		{"run-as-user-name-bad-domain", `{"image":"nginx","podSecurityContext":{"windowsOptions":{"runAsUserName":"bad:domain\\app"}}}`, "spec.podSecurityContext.windowsOptions.runAsUserName", "NetBIOS or a DNS name"},
		{"run-as-user-name-non-ascii-dns", `{"image":"nginx","securityContext":{"windowsOptions":{"runAsUserName":"ſſſſſſſſſſſſſſſſ\\app"}}}`, "spec.securityContext.windowsOptions.runAsUserName", "NetBIOS or a DNS name"},
		{"run-as-user-name-long-netbios", `{"image":"nginx","securityContext":{"windowsOptions":{"runAsUserName":"a_domain_of_16ch\\app"}}}`, "spec.securityContext.windowsOptions.runAsUserName", "NetBIOS or a DNS name"},
		{"run-as-user-name-no-user", `{"image":"nginx","securityContext":{"windowsOptions":{"runAsUserName":"CORP\\"}}}`, "spec.securityContext.windowsOptions.runAsUserName", "1 to 104 bytes"},
		{"run-as-user-name-dots", `{"image":"nginx","securityContext":{"windowsOptions":{"runAsUserName":". ."}}}`, "spec.securityContext.windowsOptions.runAsUserName", "not only periods or spaces"},
		{"run-as-user-name-at", `{"image":"nginx","securityContext":{"windowsOptions":{"runAsUserName":"app@corp"}}}`, "spec.securityContext.windowsOptions.runAsUserName", "none of"},
		{"run-as-user-name-long", `{"image":"nginx","securityContext":{"windowsOptions":{"runAsUserName":"` + strings.Repeat("u", 105) + `"}}}`, "spec.securityContext.windowsOptions.runAsUserName", "1 to 104 bytes"},
		// Hugepages come in whole pages of the size the resource names.
		{"hugepages-partial-page", `{"image":"nginx","resources":{"limits":{"hugepages-2Mi":"3Mi","memory":"1Gi"}}}`, "spec.resources.limits", "whole multiple of its page size"},
		{"hugepages-bad-page-size", `{"image":"nginx","resources":{"requests":{"hugepages-huge":"2Mi","memory":"1Gi"},"limits":{"hugepages-huge":"2Mi"}}}`, "spec.resources.requests", "whole multiple of its page size"},
		{"hugepages-zero-page-size", `{"image":"nginx","resources":{"limits":{"hugepages-0":"2Mi","memory":"1Gi"}}}`, "spec.resources.limits", "whole multiple of its page size"},
		// Comparison operators of tolerations are alpha and off by default.
		{"toleration-lt", `{"image":"nginx","tolerations":[{"key":"k","operator":"Lt","value":"5"}]}`, "spec.tolerations", "operator must be Equal or Exists"},
		// A toleration's key is a qualified name, and with operator Equal its value is a label
		// value.
		{"toleration-key-space", `{"image":"nginx","tolerations":[{"key":"bad key","operator":"Exists"}]}`, "spec.tolerations", "key must be a qualified name"},
		{"toleration-key-long-prefix", `{"image":"nginx","tolerations":[{"key":"` + prefix254 + `/a","operator":"Exists"}]}`, "spec.tolerations", "key must be a qualified name"},
		{"toleration-key-long-name", `{"image":"nginx","tolerations":[{"key":"example.com/` + strings.Repeat("k", 64) + `","operator":"Exists"}]}`, "spec.tolerations", "key must be a qualified name"},
		{"toleration-key-past-317", `{"image":"nginx","tolerations":[{"key":"` + strings.Repeat("k", 318) + `","operator":"Exists"}]}`, "spec.tolerations[0].key", "317"},
		{"toleration-value-space", `{"image":"nginx","tolerations":[{"key":"k","value":"a b"}]}`, "spec.tolerations", "value must be a label value"},
		{"toleration-value-trailing-dash", `{"image":"nginx","tolerations":[{"key":"k","operator":"Equal","value":"a-"}]}`, "spec.tolerations", "value must be a label value"},
		{"toleration-value-past-63", `{"image":"nginx","tolerations":[{"key":"k","value":"` + strings.Repeat("v", 64) + `"}]}`, "spec.tolerations[0].value", "63"},
		{"run-as-user-name-past-360", `{"image":"nginx","podSecurityContext":{"windowsOptions":{"runAsUserName":"` + strings.Repeat("u", 361) + `"}}}`, "spec.podSecurityContext.windowsOptions.runAsUserName", "360"},
		// A key's prefix is a DNS subdomain: at most 253 characters.
		{"label-key-long-prefix", `{"image":"nginx","podLabels":{"` + prefix254 + `/a":"x"}}`, "spec.podLabels", "prefix of at most 253 characters"},
		{"annotation-key-long-prefix", `{"image":"nginx","serviceAnnotations":{"` + prefix254 + `/a":"x"}}`, "spec.serviceAnnotations", "prefix of at most 253 characters"},
		{"node-selector-key-long-prefix", `{"image":"nginx","nodeSelector":{"` + prefix254 + `/a":"x"}}`, "spec.nodeSelector", "prefix of at most 253 characters"},
		// Annotations: 256 KiB in all, keys and values.
		{"pod-annotations-over-256KiB", `{"image":"nginx","podAnnotations":{"a":"` + annotation + `","b":"` + annotation + `"}}`, "spec.podAnnotations", "256 KiB"},
		{"service-annotations-over-the-operators-share", `{"image":"nginx","serviceAnnotations":{"b":"` + strings.Repeat("b", 256*1024-64) + `"}}`, "spec.serviceAnnotations", "64 bytes in UTF-8, which the operator keeps"},
		{"service-annotations-over-256KiB", `{"image":"nginx","serviceAnnotations":{"a":"` + annotation + `","b":"` + annotation + `"}}`, "spec.serviceAnnotations", "256 KiB"},
		// The limit counts bytes: a value of two-byte characters reaches it at half the
		// characters.
		{"pod-annotations-multibyte", `{"image":"nginx","podAnnotations":{"a":"` + strings.Repeat("é", 131072) + `"}}`, "spec.podAnnotations", "256 KiB in UTF-8"},
		{"service-annotations-multibyte", `{"image":"nginx","serviceAnnotations":{"a":"` + strings.Repeat("é", 131040) + `"}}`, "spec.serviceAnnotations", "256 KiB less 64 bytes"},
	})
}

// prefix254 is a DNS subdomain of 254 characters, one more than a key's prefix may have.
var prefix254 = strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 62)

// TestAdmissionPolicyRefusesWhatKubernetesRefusesInPods: what the CRD's rules cannot check
// within the API server's cost budget, the operator's admission policy (internal/admission)
// refuses, naming the field; TestMain installs it as the operator does.
func TestAdmissionPolicyRefusesWhatKubernetesRefusesInPods(t *testing.T) {
	const (
		node = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
		pref = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
	)
	podTerm := func(term string) string {
		return `{"image":"nginx","affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[` + term + `]}}}`
	}
	weighted := func(term string) string {
		return `{"image":"nginx","affinity":{"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":10,"podAffinityTerm":` + term + `}]}}}`
	}
	spread := func(c string) string {
		return `{"image":"nginx","topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",` + c + `}]}`
	}
	projected := func(sources string) string {
		return `{"image":"nginx","volumes":[{"name":"v","projected":{"sources":[` + sources + `]}}]}`
	}
	expectRefused(t, []refusal{
		// Node affinity.
		// A projected volume's items share one directory.
		{"projected-configmap-and-secret-on-one-path", projected(`{"configMap":{"name":"c","items":[{"key":"a","path":"conf/app"}]}},{"secret":{"name":"s","items":[{"key":"b","path":"conf/app"}]}}`), "spec.volumes", "must not share a path"},
		{"projected-downward-and-configmap-on-one-path", projected(`{"downwardAPI":{"items":[{"path":"name","fieldRef":{"fieldPath":"metadata.name"}}]}},{"configMap":{"name":"c","items":[{"key":"n","path":"name"}]}}`), "spec.volumes", "must not share a path"},
		{"projected-one-source-twice-on-one-path", projected(`{"configMap":{"name":"c","items":[{"key":"a","path":"x"},{"key":"b","path":"x"}]}}`), "spec.volumes", "must not share a path"},
		{"node-affinity-no-terms", `{"image":"nginx","affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[]}}}}`, node, "at least one node selector term"},
		{"node-affinity-bad-key", `{"image":"nginx","affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"bad key","operator":"Exists"}]}]}}}}`, node, "qualified name"},
		{"node-affinity-in-without-values", `{"image":"nginx","affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In"}]}]}}}}`, node, "In or NotIn needs values"},
		{"node-affinity-gt-two-values", `{"image":"nginx","affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"cores","operator":"Gt","values":["1","2"]}]}]}}}}`, node, "Gt or Lt exactly one"},
		{"node-affinity-bad-value", `{"image":"nginx","affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a b"]}]}]}}}}`, node, "label value"},
		{"node-affinity-field-not-name", `{"image":"nginx","affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.uid","operator":"In","values":["x"]}]}]}}}}`, node, "metadata.name"},
		{"node-affinity-field-two-names", `{"image":"nginx","affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["a","b"]}]}]}}}}`, node, "exactly one node name"},
		{"node-preference-exists-with-values", `{"image":"nginx","affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"preference":{"matchExpressions":[{"key":"zone","operator":"Exists","values":["a"]}]}}]}}}`, pref, "Exists or DoesNotExist takes none"},
		// Pod affinity and anti-affinity terms, required and preferred.
		{"pod-affinity-selector-bad-key", podTerm(`{"topologyKey":"zone","labelSelector":{"matchLabels":{"bad key":"x"}}}`), "spec.affinity", "valid label selectors"},
		{"pod-affinity-selector-bad-value", weighted(`{"topologyKey":"zone","labelSelector":{"matchExpressions":[{"key":"app","operator":"In","values":["-x"]}]}}`), "spec.affinity", "valid label selectors"},
		{"pod-affinity-selector-bad-operator", podTerm(`{"topologyKey":"zone","labelSelector":{"matchExpressions":[{"key":"app","operator":"Gt","values":["1"]}]}}`), "spec.affinity", "valid label selectors"},
		{"pod-affinity-namespace-selector-no-values", podTerm(`{"topologyKey":"zone","namespaceSelector":{"matchExpressions":[{"key":"team","operator":"NotIn"}]}}`), "spec.affinity", "namespaceSelector"},
		{"pod-affinity-bad-namespace", weighted(`{"topologyKey":"zone","namespaces":["Prod"]}`), "spec.affinity", "namespace names"},
		{"pod-affinity-bad-topology-key", podTerm(`{"topologyKey":"a/b/c"}`), "spec.affinity", "topologyKey a qualified name"},
		{"pod-affinity-match-label-keys-without-selector", podTerm(`{"topologyKey":"zone","matchLabelKeys":["pod-template-hash"]}`), "spec.affinity", "need a labelSelector"},
		{"pod-affinity-match-and-mismatch-key", podTerm(`{"topologyKey":"zone","labelSelector":{},"matchLabelKeys":["team"],"mismatchLabelKeys":["team"]}`), "spec.affinity", "must not share a key"},
		// The API server adds a key of matchLabelKeys that a pod carries to the pod's selector:
		// then it must not be there already, nor added twice.
		{"pod-affinity-match-label-key-in-selector", `{"image":"nginx","podLabels":{"team":"a"},"affinity":{"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":10,"podAffinityTerm":{"topologyKey":"zone","labelSelector":{"matchLabels":{"team":"a"}},"matchLabelKeys":["team"]}}]}}}`, "spec.affinity", "must appear in neither the labelSelector"},
		{"pod-affinity-match-label-key-twice", podTerm(`{"topologyKey":"zone","labelSelector":{},"matchLabelKeys":["pod-template-hash","pod-template-hash"]}`), "spec.affinity", "nor matchLabelKeys again"},
		{"pod-affinity-match-label-key-twice-in-selector", podTerm(`{"topologyKey":"zone","labelSelector":{"matchLabels":{"x":"a"},"matchExpressions":[{"key":"x","operator":"Exists"}]},"matchLabelKeys":["x"]}`), "spec.affinity", "twice in the labelSelector"},
		{"pod-affinity-bad-mismatch-key", podTerm(`{"topologyKey":"zone","labelSelector":{},"mismatchLabelKeys":["-team"]}`), "spec.affinity", "qualified names"},
		// Topology spread constraints.
		{"spread-selector-bad-key", spread(`"labelSelector":{"matchLabels":{"a/b/c":"x"}}`), "spec.topologySpreadConstraints", "valid label selector"},
		{"spread-selector-exists-with-values", spread(`"labelSelector":{"matchExpressions":[{"key":"app","operator":"DoesNotExist","values":["x"]}]}`), "spec.topologySpreadConstraints", "valid label selector"},
		{"spread-match-label-key-in-selector", `{"image":"nginx","podLabels":{"app":"web"},"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchExpressions":[{"key":"app","operator":"Exists"}]},"matchLabelKeys":["app"]}]}`, "spec.topologySpreadConstraints", "must appear in neither"},
		{"spread-match-label-key-in-default-selector", spread(`"matchLabelKeys":["myapp.example.com/name"]`), "spec.topologySpreadConstraints", "must appear in neither"},
		{"spread-match-label-key-twice", spread(`"matchLabelKeys":["pod-template-hash","pod-template-hash"]`), "spec.topologySpreadConstraints", "nor matchLabelKeys again"},
		{"spread-bad-match-label-key", spread(`"labelSelector":{},"matchLabelKeys":["bad key"]`), "spec.topologySpreadConstraints", "qualified names"},
		// Sysctls.
		{"sysctl-upper-case", `{"image":"nginx","podSecurityContext":{"sysctls":[{"name":"Net.Core.Somaxconn","value":"1024"}]}}`, "spec.podSecurityContext.sysctls", "sysctl name"},
		{"sysctl-empty-segment", `{"image":"nginx","podSecurityContext":{"sysctls":[{"name":"net..core","value":"1"}]}}`, "spec.podSecurityContext.sysctls", "sysctl name"},
		{"sysctl-duplicate", `{"image":"nginx","podSecurityContext":{"sysctls":[{"name":"net.core.somaxconn","value":"1"},{"name":"net.core.somaxconn","value":"2"}]}}`, "spec.podSecurityContext.sysctls", "Duplicate value"},
	})
}

// TestAdmissionPolicyLetsStoredMyAppsChange: a MyApp stored before the policy existed, with a
// field the policy refuses, can still be changed elsewhere (its owner can fix it step by step,
// and remove a finalizer), as the API server ratchets the CRD's own rules.
func TestAdmissionPolicyLetsStoredMyAppsChange(t *testing.T) {
	ctx := context.Background()
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: admission.Name}}
	// Without the binding, the policy is not in force: the MyApp is stored as before 0.3.2.
	if err := k8s.Delete(ctx, binding); err != nil {
		t.Fatal(err)
	}
	stored := `{"image":"nginx","podSecurityContext":{"sysctls":[{"name":"Net.Core.Somaxconn","value":"1024"}]}}`
	var err error
	deadline := time.Now().Add(time.Minute)
	for err = create(t, "stored-before-policy", stored); err != nil && time.Now().Before(deadline); err = create(t, "stored-before-policy", stored) {
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("the MyApp is not stored without the policy's binding: %v", err)
	}
	if err := testutil.InstallAdmissionPolicy(ctx, k8s); err != nil {
		t.Fatal(err)
	}

	app := &examplev1.MyApp{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "stored-before-policy"}, app); err != nil {
		t.Fatal(err)
	}
	app.Spec.Image = "nginx:1.27"
	if err := k8s.Update(ctx, app); err != nil {
		t.Errorf("changing the image of a MyApp stored with a sysctl the policy refuses: %v", err)
	}
	app.Spec.PodSecurityContext.Sysctls[0].Value = "2048"
	if err := k8s.Update(ctx, app); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "sysctl name") {
		t.Errorf("changing the sysctls and keeping the invalid name: want the policy's refusal, got %v", err)
	}
}
