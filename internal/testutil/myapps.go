package testutil

import (
	"fmt"
	"strings"
)

// ValidMyApp is a MyApp spec, as JSON, that the API server must accept.
type ValidMyApp struct{ Name, Spec string }

// ValidMyApps are the edge cases of the MyApp API that must be accepted and reconcile: the
// admission test (api/v1) creates them, and an envtest story (internal/controller) has the
// operator reconcile each one. Each exposed one has hosts of its own, under valid.test: a host
// belongs to the first MyApp that claims it, and the story asks every one to serve its hosts.
var ValidMyApps = []ValidMyApp{
	{"minimal", `{"image":"nginx"}`},
	// Every field of the first API, as its users wrote them, stays valid.
	{"every-field-of-the-first-api", `{"image":"registry.example.com:5000/team/app:1.2.3","replicas":3,"port":9000,"serviceType":"NodePort",
			"resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"1000m","memory":"512Mi"}},
			"env":[{"name":"A","value":"1"},{"name":"B"},{"name":"my.var-x","valueFrom":{"configMapKeyRef":{"name":"cfg","key":"k.1"}}}],
			"autoScaling":{"enabled":true,"minReplicas":2,"maxReplicas":2,"targetCPUUtilizationPercentage":50}}`},
	{"digest", `{"image":"ghcr.io/org/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}`},
	{"digest-sha512", `{"image":"ghcr.io/org/app:1.0@sha512:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}`},
	{"autoscaling-off-without-max", `{"image":"nginx","autoScaling":{"enabled":false}}`},
	{"named-ports", `{"image":"nginx","port":8080,"ports":[{"name":"metrics","port":9090,"appProtocol":"http"},{"name":"grpc","port":9000,"appProtocol":"kubernetes.io/h2c"},
			{"name":"dns","port":53,"protocol":"UDP"},{"name":"dns-tcp","port":53},{"name":"sctp-1","port":8080,"protocol":"SCTP"}],
			"readinessProbe":{"httpGet":{"port":"metrics","path":"/ready"}},"livenessProbe":{"tcpSocket":{"port":"grpc"}},"startupProbe":{"httpGet":{"port":"http"}},
			"lifecycle":{"preStop":{"httpGet":{"port":"metrics","path":"/drain"}}},"serviceType":"NodePort",
			"expose":{"hosts":["grpc.named-ports.valid.test"],"portName":"grpc"}}`},
	{"named-ports-longest-app-protocol", `{"image":"nginx","ports":[{"name":"a","port":9000,"appProtocol":"` + strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61) + "/" + strings.Repeat("e", 63) + `"}]}`},
	{"autoscaling-memory-above-request", `{"image":"nginx","resources":{"requests":{"memory":"64Mi"},"limits":{"memory":"256Mi"}},"autoScaling":{"enabled":true,"maxReplicas":4,"targetMemoryUtilizationPercentage":150}}`},
	{"metrics-default", `{"image":"nginx","metrics":{}}`},
	{"metrics-named-port", `{"image":"nginx","ports":[{"name":"admin","port":9000}],"metrics":{"portName":"admin","path":"/admin/metrics","interval":"1m30s"}}`},
	{"named-ports-exposed-by-http", `{"image":"nginx","ports":[{"name":"admin","port":9000}],"expose":{"hosts":["http.named-ports.valid.test"],"portName":"http"}}`},
	{"named-ports-sixteen", `{"image":"nginx","serviceType":"LoadBalancer","ports":[` + sixteenPorts + `]}`},
	{"access-policy-both-ways", `{"image":"nginx","accessPolicy":{"inbound":{"ownNamespace":true,"namespaces":["traefik","monitoring"],
			"apps":[{"name":"front"},{"namespace":"shop","name":"checkout"}]},"outbound":{"apps":[{"name":"db"}],"namespaces":["kube-system"]}}}`},
	{"access-policy-deny-all", `{"image":"nginx","accessPolicy":{"inbound":{},"outbound":{}}}`},
	{"access-policy-empty", `{"image":"nginx","accessPolicy":{}}`},
	{"autoscaling-on-memory-alone", `{"image":"nginx","resources":{"requests":{"memory":"64Mi"}},
			"autoScaling":{"enabled":true,"maxReplicas":4,"targetCPUUtilizationPercentage":0,"targetMemoryUtilizationPercentage":75}}`},
	{"autoscaling-on-cpu-and-memory-with-behavior", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":4,
			"targetMemoryUtilizationPercentage":1,"behavior":{
			"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Min","policies":[{"type":"Pods","value":1,"periodSeconds":1},{"type":"Percent","value":2147483647,"periodSeconds":1800}]},
			"scaleDown":{"stabilizationWindowSeconds":3600,"selectPolicy":"Disabled"}}}}`},
	{"autoscaling-behavior-empty-directions", `{"image":"nginx","autoScaling":{"enabled":true,"maxReplicas":4,"behavior":{"scaleUp":{},"scaleDown":{}}}}`},
	// Scale to zero, no replica cap, int quantities, any resource name.
	{"scale-to-zero", `{"image":"nginx","replicas":0}`},
	{"many-replicas", `{"image":"nginx","replicas":5000,"autoScaling":{"enabled":false,"maxReplicas":10000}}`},
	{"int-quantities", `{"image":"nginx","resources":{"limits":{"cpu":1,"memory":1073741824,"ephemeral-storage":"2Gi","nvidia.com/gpu":1,"hugepages-2Mi":"64Mi"},
			"requests":{"cpu":"0.5","memory":"512Mi","nvidia.com/gpu":1}}}`},
	{"large-int-memory", `{"image":"nginx","resources":{"limits":{"memory":68719476736}}}`},
	{"unicode-and-100-env", `{"image":"nginx","env":[` + ManyEnv(99) + `,{"name":"GREETING","value":"grüße, 世界 🚀"}]}`},
	{"every-new-field", `{"image":"nginxinc/nginx-unprivileged:1.27","port":8080,"command":["/bin/server"],"args":["--port","8080"],
			"readinessProbe":{"httpGet":{"path":"/ready","port":"http","scheme":"HTTP","httpHeaders":[{"name":"X-Probe","value":"1"}]},"periodSeconds":5,"failureThreshold":2},
			"livenessProbe":{"tcpSocket":{"port":8080},"initialDelaySeconds":10,"successThreshold":1},
			"startupProbe":{"exec":{"command":["cat","/tmp/started"]},"failureThreshold":30},
			"securityContext":{"runAsUser":1000,"readOnlyRootFilesystem":true},
			"podSecurityContext":{"fsGroup":2000,"seccompProfile":{"type":"RuntimeDefault"}},
			"serviceAccountName":"web","imagePullSecrets":[{"name":"regcred"}],
			"podLabels":{"team":"shop","example.com/tier":"front"},"podAnnotations":{"prometheus.io/scrape":"true"},
			"serviceAnnotations":{"service.beta.kubernetes.io/aws-load-balancer-internal":"true"},
			"nodeSelector":{"kubernetes.io/os":"linux"},
			"tolerations":[{"key":"dedicated","operator":"Equal","value":"web","effect":"NoSchedule"}],
			"affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,"podAffinityTerm":{"topologyKey":"kubernetes.io/hostname","labelSelector":{"matchLabels":{"myapp.example.com/name":"every-new-field"}}}}]}},
			"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"ScheduleAnyway"}],
			"rollingUpdate":{"maxSurge":"50%","maxUnavailable":0},
			"podDisruptionBudget":{"minAvailable":"50%"}}`},
	{"grpc-probe", `{"image":"nginx","readinessProbe":{"grpc":{"port":9090,"service":"health"}}}`},
	// Privilege, probe ports and surges: what admission accepts, the API server accepts as children too.
	{"privileged", `{"image":"nginx","securityContext":{"privileged":true}}`},
	{"sys-admin", `{"image":"nginx","securityContext":{"capabilities":{"add":["CAP_SYS_ADMIN"]}}}`},
	{"privileged-escalating", `{"image":"nginx","securityContext":{"privileged":true,"allowPrivilegeEscalation":true}}`},
	{"probes-by-number-and-name", `{"image":"nginx","port":9000,"readinessProbe":{"httpGet":{"port":"http"}},"livenessProbe":{"tcpSocket":{"port":9001}}}`},
	{"no-surge-some-unavailable", `{"image":"nginx","rollingUpdate":{"maxSurge":"0%","maxUnavailable":"10%"}}`},
	{"fraction-as-string", `{"image":"nginx","resources":{"requests":{"cpu":"0.5"},"limits":{"cpu":"1.5"}}}`},
	{"boundaries", `{"image":"nginx","port":65535,"replicas":0,"rollingUpdate":{"maxSurge":0,"maxUnavailable":"100%"},"podDisruptionBudget":{"maxUnavailable":0},
			"autoScaling":{"enabled":true,"minReplicas":1,"maxReplicas":1,"targetCPUUtilizationPercentage":100}}`},
	// The largest integers admission accepts: each fits the Go types and the children.
	{"largest-integers", `{"image":"nginx","rollingUpdate":{"maxSurge":2147483647,"maxUnavailable":"0100%"},"podDisruptionBudget":{"maxUnavailable":2147483647},
			"readinessProbe":{"tcpSocket":{},"initialDelaySeconds":2147483647,"periodSeconds":2147483647,"timeoutSeconds":2147483647,"successThreshold":2147483647,"failureThreshold":2147483647},
			"autoScaling":{"enabled":true,"minReplicas":2147483647,"maxReplicas":2147483647}}`},
	// What Kubernetes accepts at the edges of the rules that mirror its validation.
	{"extended-resources-whole", `{"image":"nginx","resources":{"limits":{"nvidia.com/gpu":2,"example.com/dongle":"3","hugepages-2Mi":"64Mi","memory":"128Mi","cpu":"500m"},
			"requests":{"nvidia.com/gpu":"2000m","hugepages-2Mi":"64Mi","cpu":"250m"}}}`},
	{"hugepages-with-cpu-request", `{"image":"nginx","resources":{"requests":{"cpu":"100m","hugepages-1Gi":"1Gi"},"limits":{"hugepages-1Gi":"1Gi"}}}`},
	{"tolerations-edges", `{"image":"nginx","tolerations":[{"operator":"Exists"},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":30},
			{"key":"dedicated","value":"web"},{"key":"gpu","operator":"Equal","value":"","effect":"PreferNoSchedule"},{"key":"spot","operator":"Exists","value":""}]}`},
	{"spread-edges", `{"image":"nginx","topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","minDomains":3,"nodeAffinityPolicy":"Honor","nodeTaintsPolicy":"Ignore"},
			{"maxSkew":2147483647,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway"}]}`},
	{"affinity-weight-edges", `{"image":"nginx","affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"preference":{"matchExpressions":[{"key":"disk","operator":"In","values":["ssd"]}]}}]},
			"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,"podAffinityTerm":{"topologyKey":"zone"}}]},
			"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"kubernetes.io/hostname"}]}}}`},
	{"security-id-edges", `{"image":"nginx","securityContext":{"runAsUser":0,"runAsGroup":2147483647,"runAsNonRoot":false,"seccompProfile":{"type":"Unconfined"},"appArmorProfile":{"type":"Localhost","localhostProfile":"k8s-apparmor-example"}},
			"podSecurityContext":{"runAsNonRoot":false,"fsGroup":0,"supplementalGroups":[0,2147483647],"fsGroupChangePolicy":"OnRootMismatch","seccompProfile":{"type":"Localhost","localhostProfile":"profiles/a..b/app.json"}}}`},
	{"windows-and-policy-edges", `{"image":"nginx","securityContext":{"procMount":"Default","windowsOptions":{"hostProcess":false,"gmsaCredentialSpecName":"webapp1","gmsaCredentialSpec":"{}","runAsUserName":"NT AUTHORITY\\NETWORK SERVICE"}},
			"podSecurityContext":{"seLinuxChangePolicy":"Recursive","supplementalGroupsPolicy":"Strict","windowsOptions":{"runAsUserName":"corp.example.com\\svc-app"}}}`},
	// Kubernetes rounds a hugepages fraction up to whole bytes, and checks annotation keys in lower case.
	{"hugepages-fraction-annotation-case", `{"image":"nginx","resources":{"limits":{"hugepages-2Mi":"2097151500m","memory":"1Gi"}},
			"podAnnotations":{"Example.com/Team":"a"},"serviceAnnotations":{"Example.COM/x":"b"}}`},
	{"key-prefix-253", `{"image":"nginx","podLabels":{"` + prefix253 + `/a":"x"},"podAnnotations":{"` + prefix253 + `/b":"y"},
			"serviceAnnotations":{"` + prefix253 + `/c":"z"},"nodeSelector":{"` + prefix253 + `/d":"w"},"resources":{"limits":{"hugepages-2Mi":"4Mi","memory":"1Gi"}}}`},
	{"env-name-dots", `{"image":"nginx","env":[{"name":".A","value":"1"},{"name":"a..b","value":"2"},{"name":"-x.y_z","value":"3"}]}`},
	{"env-name-relaxed", `{"image":"nginx","env":[{"name":"1ABC","value":"1"},{"name":".","value":"2"},{"name":"..A","value":"3"},{"name":"MY VAR:x","value":"4"},{"name":"~!@#$%^&*()","value":"5"}]}`},
	// What the admission policy checks, at its edges: a preference may hold values that are
	// not label values (Kubernetes lets them through), a mismatch key may also be a selector
	// key, and so may a key of matchLabelKeys that the pods do not carry, which may also repeat;
	// a spread constraint without a selector gets the MyApp's own; sysctl names may use '/'.
	{"selectors-at-their-edges", `{"image":"nginx","affinity":{
			"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
				{"matchExpressions":[{"key":"example.com/cores","operator":"Gt","values":["4"]},{"key":"zone","operator":"NotIn","values":["a","b"]},{"key":"gpu","operator":"DoesNotExist"}]},
				{"matchFields":[{"key":"metadata.name","operator":"In","values":["node-1.example.com"]}]}]},
			"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,"preference":{"matchExpressions":[{"key":"disk","operator":"In","values":["not a label value!"]}]}}]},
			"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"podAffinityTerm":{"topologyKey":"topology.kubernetes.io/zone",
				"labelSelector":{"matchLabels":{"app.kubernetes.io/name":"cache"},"matchExpressions":[{"key":"tier","operator":"In","values":["","a.b_c-d"]}]},
				"namespaceSelector":{"matchExpressions":[{"key":"team","operator":"Exists"}]},"namespaces":["prod","a-1"],
				"matchLabelKeys":["pod-template-hash"],"mismatchLabelKeys":["tier"]}}]},
			"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"kubernetes.io/hostname","labelSelector":{}},
				{"topologyKey":"zone","labelSelector":{"matchLabels":{"team":"a"}},"matchLabelKeys":["team","y","y"]}]}},
		"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app":"web"}},"matchLabelKeys":["pod-template-hash"]},
			{"maxSkew":1,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"ScheduleAnyway","matchLabelKeys":["pod-template-hash"]},
			{"maxSkew":2,"topologyKey":"rack","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchExpressions":[{"key":"app","operator":"Exists"}]},"matchLabelKeys":["app","x","x"]}],
		"podSecurityContext":{"sysctls":[{"name":"net.ipv4.ip_local_port_range","value":"1024 65535"},{"name":"kernel/shm_rmid_forced","value":"1"},{"name":"net.core.somaxconn","value":"1024"}]}}`},
	// 0.4.0: a web app's env sources, the downward API, shutdown and rollout timing, at their edges.
	{"web-app-env-and-timing", `{"image":"nginx","port":8080,
			"env":[{"name":"POD_NAME","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},{"name":"POD_IPS","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"status.podIPs"}}},
				{"name":"APP","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['app.kubernetes.io/name']"}}},
				{"name":"TEAM","valueFrom":{"fieldRef":{"fieldPath":"metadata.annotations['Example.COM/Team_Name']"}}},
				{"name":"MEMORY_MIB","valueFrom":{"resourceFieldRef":{"resource":"limits.memory","divisor":"1Mi"}}},
				{"name":"CPU_MILLIS","valueFrom":{"resourceFieldRef":{"resource":"requests.cpu","divisor":"1m"}}},
				{"name":"HUGEPAGES","valueFrom":{"resourceFieldRef":{"resource":"limits.hugepages-2Mi","divisor":1}}},
				{"name":"NODE","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}}],
			"envFrom":[{"configMapRef":{"name":"web-config"}},{"prefix":"DB_","secretRef":{"name":"db","optional":true}},{"prefix":"1 odd:prefix.","configMapRef":{"name":"x","optional":false}}],
			"resources":{"limits":{"memory":"256Mi","hugepages-2Mi":"4Mi"},"requests":{"cpu":"100m"}},
			"automountServiceAccountToken":false,"terminationGracePeriodSeconds":45,"lifecycle":{"preStop":{"sleep":{"seconds":45}}},
			"minReadySeconds":5,"progressDeadlineSeconds":6}`},
	// Divisors in every spelling of a value Kubernetes accepts as a divisor, those Kubernetes
	// itself refuses in a pod included (1e-3, 1048576, 1e3): the builders send them as
	// Kubernetes spells them.
	{"divisors-by-value", `{"image":"nginx",
			"env":[{"name":"CPU","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"1000m"}}},
				{"name":"CPU_MILLIS","valueFrom":{"resourceFieldRef":{"resource":"requests.cpu","divisor":"1e-3"}}},
				{"name":"CPU_UNIT","valueFrom":{"resourceFieldRef":{"resource":"requests.cpu","divisor":"0"}}},
				{"name":"MEMORY_MIB","valueFrom":{"resourceFieldRef":{"resource":"limits.memory","divisor":1048576}}},
				{"name":"MEMORY_KB","valueFrom":{"resourceFieldRef":{"resource":"requests.memory","divisor":"1e3"}}},
				{"name":"HUGEPAGES_MIB","valueFrom":{"resourceFieldRef":{"resource":"limits.hugepages-2Mi","divisor":"1024Ki"}}}],
			"resources":{"limits":{"cpu":"1","memory":"256Mi","hugepages-2Mi":"4Mi"},"requests":{"cpu":"100m","memory":"128Mi"}},
			"volumes":[{"name":"pod-info","downwardAPI":{"items":[{"path":"memory","resourceFieldRef":{"resource":"limits.memory","divisor":"1024"}},
				{"path":"storage","resourceFieldRef":{"resource":"requests.ephemeral-storage","divisor":"0.001k"}}]}},
				{"name":"bundle","projected":{"sources":[{"downwardAPI":{"items":[{"path":"cpu","resourceFieldRef":{"resource":"limits.cpu","divisor":"0.001"}}]}}]}}],
			"volumeMounts":[{"name":"pod-info","mountPath":"/etc/podinfo"},{"name":"bundle","mountPath":"/etc/bundle"}]}`},
	// A web app's files and scratch space on a read-only root, and every volume source at its edges.
	{"volumes-read-only-root", `{"image":"nginx","securityContext":{"readOnlyRootFilesystem":true},
			"volumes":[{"name":"tmp","emptyDir":{"sizeLimit":"64Mi"}},{"name":"cache","emptyDir":{"medium":"Memory"}},
				{"name":"config","configMap":{"name":"web-config","items":[{"key":"config.yaml","path":"config.yaml","mode":288},{"key":"a.b","path":"sub/dir/a.b..c"}],"defaultMode":420,"optional":false}},
				{"name":"tls","secret":{"secretName":"web-tls","defaultMode":256,"optional":true}},
				{"name":"data","persistentVolumeClaim":{"claimName":"shared-data","readOnly":true}},
				{"name":"` + strings.Repeat("v", 63) + `","secret":{"secretName":"s","items":[{"key":"k","path":"x"},{"key":"l","path":"d/` + strings.Repeat("f", 255) + `"}],"defaultMode":0}},
				{"name":"kube-api-access","emptyDir":{}},
				{"name":"pod-info","downwardAPI":{"defaultMode":292,"items":[{"path":"name","fieldRef":{"fieldPath":"metadata.name"}},
					{"path":"labels","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.labels"}},
					{"path":"team","fieldRef":{"fieldPath":"metadata.annotations['Example.COM/Team_Name']"}},
					{"path":"tier","fieldRef":{"fieldPath":"metadata.labels['example.com/tier']"}},
					{"path":"limits/memory","resourceFieldRef":{"resource":"limits.memory","divisor":"1Mi"},"mode":256},
					{"path":"limits/cpu","resourceFieldRef":{"resource":"requests.cpu","divisor":"1m"}},
					{"path":"x..y/` + strings.Repeat("f", 255) + `","fieldRef":{"fieldPath":"metadata.uid"}}]}},
				{"name":"bundle","projected":{"defaultMode":288,"sources":[
					{"configMap":{"name":"web-config","items":[{"key":"config.yaml","path":"config/app.yaml"},{"key":"config.yaml","path":"config/copy.yaml","mode":256}],"optional":true}},
					{"secret":{"name":"web-tls","items":[{"key":"tls.crt","path":"tls/tls.crt"},{"key":"tls.key","path":"tls/tls.key","mode":256}]}},
					{"downwardAPI":{"items":[{"path":"pod/name","fieldRef":{"fieldPath":"metadata.name"}},{"path":"pod/cpu","resourceFieldRef":{"resource":"limits.cpu","divisor":"1m"}}]}},
					{"serviceAccountToken":{"audience":"vault","expirationSeconds":600,"path":"token"}}]}},
				{"name":"whole","projected":{"sources":[{"configMap":{"name":"a"}},{"secret":{"name":"b","optional":false}},{"serviceAccountToken":{"path":"t","expirationSeconds":4294967296}}]}}],
			"volumeMounts":[{"name":"tmp","mountPath":"/tmp"},{"name":"config","mountPath":"/etc/app","readOnly":true},
				{"name":"pod-info","mountPath":"/etc/podinfo","readOnly":true},{"name":"bundle","mountPath":"/etc/bundle"},{"name":"whole","mountPath":"/etc/whole"},
				{"name":"tls","mountPath":"/etc/tls","readOnly":true},{"name":"data","mountPath":"/data","subPath":"web/..x"},
				{"name":"tmp","mountPath":"/var/cache/nginx","subPath":"nginx"},{"name":"cache","mountPath":"/cache"}]}`},
	// Files at the limits: 32 files, of 1000 KiB together (multi-byte text), paths whose keys
	// collide or start with "..", beside a mount whose path shares a prefix.
	{"files-at-the-limits", `{"image":"nginx","securityContext":{"readOnlyRootFilesystem":true},
			"volumes":[{"name":"tmp","emptyDir":{}}],"volumeMounts":[{"name":"tmp","mountPath":"/etc/app"}],
			"files":[{"path":"/etc/app.yaml","content":"` + strings.Repeat("é", 256000) + `","mode":256},
				{"path":"/etc/app-2/b","content":"` + strings.Repeat("€", 170000) + `"},
				{"path":"/x/y","content":""},{"path":"/x_y","content":"\u0000\n"},{"path":"/..hidden","content":"a"},
				{"path":"/...","content":"b"},{"path":"/` + strings.Repeat("f", 239) + `","content":"c","mode":0},
				{"path":"/d/` + strings.Repeat("g", 237) + `","content":"d"}` + manyFiles(24) + `]}`},
	// The example of docs/spec/v1/myapps.md, as written there.
	{"spec-page-example", `{"image":"nginxinc/nginx-unprivileged:1.27","replicas":2,"port":8080,"ports":[{"name":"metrics","port":9090}],
			"resources":{"requests":{"cpu":"100m","memory":"64Mi"},"limits":{"cpu":"500m","memory":"128Mi"}},
			"autoScaling":{"enabled":true,"minReplicas":2,"maxReplicas":6,"targetMemoryUtilizationPercentage":80,"behavior":{"scaleDown":{"stabilizationWindowSeconds":600}}},
			"readinessProbe":{"httpGet":{"path":"/"}},
			"envFrom":[{"configMapRef":{"name":"web-settings"}}],
			"env":[{"name":"DB_PASSWORD","valueFrom":{"secretKeyRef":{"name":"web-db","key":"password"}}},{"name":"POD_NAME","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
			"securityContext":{"readOnlyRootFilesystem":true},
			"volumes":[{"name":"tmp","emptyDir":{"sizeLimit":"64Mi"}},{"name":"config","configMap":{"name":"web-config"}}],
			"volumeMounts":[{"name":"tmp","mountPath":"/tmp"},{"name":"config","mountPath":"/etc/nginx/conf.d","readOnly":true}],
			"files":[{"path":"/etc/app/config.yaml","content":"greeting: hello\nlevel: info\n"}],
			"lifecycle":{"preStop":{"sleep":{"seconds":5}}},"automountServiceAccountToken":false,"podDisruptionBudget":{"maxUnavailable":1},
			"accessPolicy":{"inbound":{"ownNamespace":true,"namespaces":["monitoring"]}},
			"initContainers":[{"name":"migrate","image":"registry.example.com/shop/migrate:1.4","envFrom":[{"secretRef":{"name":"web-db"}}]},
				{"name":"proxy","image":"registry.example.com/shop/auth-proxy:2.0","restartPolicy":"Always",
					"readinessProbe":{"httpGet":{"path":"/healthz","port":4180}},"resources":{"requests":{"cpu":"20m","memory":"32Mi"}}}],
			"metrics":{"portName":"metrics"},
			"expose":{"hosts":["web.shop.example.net"],"tls":{"secretName":"web-tls","issuerRef":{"name":"letsencrypt","kind":"ClusterIssuer"}}}}`},
	// 0.4.0: exposure, through an Ingress and through a Gateway, at the edges of hosts and path.
	{"expose-at-the-edges", `{"image":"nginx","port":65535,"expose":{"hosts":["edges.valid.test","*.edges.valid.test","shop","x-1.y-2.z",
			"` + prefix253 + `",
			"a.b.c.d.e.f.g.h","i.j","k.l","m.n","o.p","q.r","s.t","u.v","w.x","y.z","ab.cd"],
			"path":"/a.b/..c/.d/.../~!$&'()*+,;=:@-_/","tls":{"secretName":"shop-tls"},"ingressClassName":"` + prefix253 + `"}}`},
	{"expose-gateway", `{"image":"nginx","expose":{"hosts":["gateway.valid.test"],"tls":{},
			"gateway":{"namespace":"` + strings.Repeat("n", 63) + `","name":"` + prefix253 + `","sectionName":"https.` + strings.Repeat("s", 200) + `"}}}`},
	{"expose-defaults", `{"image":"nginx","expose":{"hosts":["*.defaults.valid.test"],"path":"/"}}`},
	// 0.5.0: a certificate from cert-manager, at the edges of the issuer's reference.
	{"certificate-at-the-edges", `{"image":"nginx","expose":{"hosts":["certificate.valid.test","*.certificate.valid.test","` + strings.Replace(prefix253, "a", "c", 1) + `"],
			"tls":{"secretName":"` + prefix253 + `","issuerRef":{"name":"` + prefix253 + `","kind":"` + "A" + strings.Repeat("z", 62) + `","group":"` + prefix253 + `"}}}}`},
	{"certificate-from-an-issuer", `{"image":"nginx","expose":{"hosts":["certificate-issuer.valid.test"],"tls":{"secretName":"web-tls","issuerRef":{"name":"ca"}}}}`},
	{"canary-through-a-gateway", `{"image":"nginx","replicas":4,"expose":{"hosts":["canary.valid.test"],"gateway":{"name":"public"}},
			"canary":{"steps":[{"setWeight":5},{"pause":{"duration":"2m"}},{"setWeight":25},{"pause":{}},{"setWeight":100}],
			"analysis":{"availableWithin":"5m","metrics":[
				{"name":"success-rate","query":"sum(rate(traefik_service_requests_total{service=~\"{{namespace}}-{{canary}}.*\",code!~\"5..\"}[1m])) / sum(rate(traefik_service_requests_total{service=~\"{{namespace}}-{{canary}}.*\"}[1m]))",
					"condition":{"operator":">=","value":"0.99"},"interval":"30s","failureLimit":1,"onError":"Abort"},
				{"name":"p99","query":"histogram_quantile(0.99, sum(rate(traefik_service_request_duration_seconds_bucket[1m])) by (le))",
					"condition":{"operator":"<=","value":"0.5"}}]}}}`},
	{"canary-at-the-edges-" + strings.Repeat("c", 30), `{"image":"nginx","minReadySeconds":3599,"progressDeadlineSeconds":3600,"canary":{"steps":[` + canarySteps + `],
			"analysis":{"availableWithin":"1h","metrics":[` + canaryMetrics + `]}}}`},
	{"pre-stop-sleep-default-grace", `{"image":"nginx","lifecycle":{"preStop":{"sleep":{"seconds":30}}},"minReadySeconds":599}`},
	{"pre-stop-sleep-zero", `{"image":"nginx","terminationGracePeriodSeconds":0,"lifecycle":{"preStop":{"sleep":{"seconds":0}}},"progressDeadlineSeconds":1,"automountServiceAccountToken":true}`},
	{"pre-stop-http-largest-timings", `{"image":"nginx","lifecycle":{"preStop":{"httpGet":{}}},"terminationGracePeriodSeconds":2147483647,"minReadySeconds":2147483646,"progressDeadlineSeconds":2147483647}`},
	{"pre-stop-exec", `{"image":"nginx","lifecycle":{"preStop":{"exec":{"command":["/bin/drain","--wait"]}}}}`},
	{"probe-header-dashes", `{"image":"nginx","readinessProbe":{"httpGet":{"httpHeaders":[{"name":"X-Probe-1","value":"a_b"}]}}}`},
	{"annotations-256kib", `{"image":"nginx","podAnnotations":{"example.com/a":"` + strings.Repeat("a", 256*1024-len("example.com/a")) + `"},
			"serviceAnnotations":{"b":"` + strings.Repeat("b", 256*1024-64-1) + `"}}`},
	// Init containers and sidecars: every field, each probe handler, and the most of them.
	{"init-containers-and-sidecars", `{"image":"nginx","volumes":[{"name":"data","emptyDir":{}}],"initContainers":[
			{"name":"migrate","image":"registry.example.com/team/migrate:1.2","command":["/migrate"],"args":["up"],
				"env":[{"name":"DB","valueFrom":{"secretKeyRef":{"name":"db","key":"url"}}},{"name":"POD","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},
					{"name":"CPU","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"1m"}}}],
				"envFrom":[{"configMapRef":{"name":"settings","optional":true}}],"volumeMounts":[{"name":"data","mountPath":"/data"}],
				"resources":{"limits":{"cpu":"500m","memory":"128Mi"},"requests":{"cpu":"100m","memory":"64Mi"}}},
			{"name":"proxy","image":"envoyproxy/envoy:v1.31.0","restartPolicy":"Always",
				"readinessProbe":{"httpGet":{"port":9901,"path":"/ready","scheme":"HTTP","httpHeaders":[{"name":"X-Probe","value":"1"}]},"periodSeconds":5},
				"livenessProbe":{"tcpSocket":{"port":9901},"successThreshold":1,"failureThreshold":6},
				"startupProbe":{"grpc":{"port":9000,"service":"envoy"},"initialDelaySeconds":1,"timeoutSeconds":2}},
			{"name":"agent","image":"busybox:1.36","restartPolicy":"Always","readinessProbe":{"exec":{"command":["cat","/tmp/ready"]}},"volumeMounts":[{"name":"data","mountPath":"/data","readOnly":true}]},
			{"name":"i4","image":"busybox"},{"name":"i5","image":"busybox"},{"name":"i6","image":"busybox"},{"name":"i7","image":"busybox"},{"name":"i8","image":"busybox"}],
			"podSecurityContext":{"supplementalGroups":[0,2147483647]}}`},
	{"supplemental-groups-empty", `{"image":"nginx","podSecurityContext":{"supplementalGroups":[]}}`},
	// The longest toleration key and value, and annotations at their limit in UTF-8 bytes.
	{"tolerations-and-annotations-at-their-bounds", `{"image":"nginx","tolerations":[{"key":"` + prefix253 + "/" + strings.Repeat("k", 63) + `","value":"` + strings.Repeat("v", 63) + `"}],
			"podAnnotations":{"a":"` + strings.Repeat("é", 131071) + `a"},"serviceAnnotations":{"b":"` + strings.Repeat("é", 131039) + `b"}}`},
}

// ManyEnv is n distinct environment variables as JSON list items.
func ManyEnv(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"name":"VAR_%d","value":"%d"}`, i, i)
	}
	return strings.Join(items, ",")
}

// prefix253 is a DNS subdomain of 253 characters, the longest prefix a label or annotation
// key may have.
var prefix253 = strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61)

// manyFiles is n small files, each after a comma, for a files list at its limit.
func manyFiles(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `,{"path":"/srv/www/%d.html","content":"<p>%d</p>"}`, i, i)
	}
	return b.String()
}

// sixteenPorts are the most ports a MyApp may have, of every protocol.
var sixteenPorts = func() string {
	var ports []string
	for i := range 16 {
		ports = append(ports, fmt.Sprintf(`{"name":"p%d","port":%d,"protocol":"%s"}`, i, 9000+i/3, []string{"TCP", "UDP", "SCTP"}[i%3]))
	}
	return strings.Join(ports, ",")
}()

// canarySteps are the 20 steps spec.canary takes at most, at the edges of their values: weights
// from 1 to 100 (equal ones too), pauses from 1s to 24h and without a duration.
var canarySteps = func() string {
	steps := []string{`{"setWeight":1}`, `{"pause":{"duration":"1s"}}`, `{"setWeight":1}`, `{"pause":{"duration":"24h"}}`,
		`{"pause":{"duration":"23h59m60s"}}`, `{"pause":{}}`}
	for w := 2; len(steps) < 19; w += 7 {
		steps = append(steps, fmt.Sprintf(`{"setWeight":%d}`, w))
	}
	return strings.Join(append(steps, `{"setWeight":100}`), ",")
}()

// canaryMetrics are the 10 metric checks spec.canary takes at most, at the edges of their
// values.
var canaryMetrics = func() string {
	var m []string
	for i, c := range []string{`{"operator":"<","value":"-1e-99"}`, `{"operator":"<=","value":"0"}`, `{"operator":">","value":"12345678901234567890.5"}`,
		`{"operator":">=","value":"1E+99"}`} {
		m = append(m, fmt.Sprintf(`{"name":"check-%d","query":"up","condition":%s,"interval":"5s","failureLimit":0,"onError":"Pause"}`, i, c))
	}
	for i := len(m); i < 9; i++ {
		m = append(m, fmt.Sprintf(`{"name":"c%d","query":"vector(1)","condition":{"operator":">","value":"0"},"interval":"1h","failureLimit":100}`, i))
	}
	return strings.Join(append(m, `{"name":"`+strings.Repeat("q", 63)+`","query":"`+strings.Repeat("x", 4096)+`","condition":{"operator":">","value":"0"}}`), ",")
}()
