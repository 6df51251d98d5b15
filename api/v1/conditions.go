package v1

// The conditions a MyApp reports and their reasons are API: users, kubectl wait, kstatus
// (Flux), Argo CD's health check and alerts match on them. A reason is never renamed; a new
// one is added to the list of its condition in docs/spec/v1/myapps.md.

// Condition types a MyApp reports. All five are present from the first status the operator
// writes. Ready, Reconciling and Stalled follow the kstatus convention that Flux, kpt and
// cli-utils read; Progressing and Degraded follow the OpenShift one. One decision computes
// them all, so they never disagree.
const (
	// ConditionReady is True when the Deployment is Available and runs the current pod
	// template everywhere. A scale with enough pods available keeps it True; a new pod template
	// makes it False until its pods run.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the operator or the Deployment is still working
	// towards the spec: a rollout, a scale, a migration.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when progress stopped on a problem the user must act on: one
	// that keeps the MyApp from its spec and that the operator cannot overcome by retrying.
	ConditionStalled = "Stalled"
	// ConditionProgressing is True while a rollout or scale is under way, like Reconciling.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True on any problem: Stalled's, one the operator retries, or one
	// the MyApp serves in spite of (a pod that cannot start beside an available rollout, an
	// autoscaler without metrics). Alone, beside Ready True, it is no alarm: kstatus reads
	// such a MyApp as Current.
	ConditionDegraded = "Degraded"
)

// Condition reasons. They are part of the API: users and tools match on them.
const (
	// ReasonAvailable: the Deployment is Available and runs the current pod template.
	ReasonAvailable = "Available"
	// ReasonRollingOut: pods of an older template are being replaced, or the Deployment
	// has not yet observed its latest spec.
	ReasonRollingOut = "RollingOut"
	// ReasonScaling: every pod runs the current template, but the number of pods, or of
	// available pods, is not yet what the Deployment asks for.
	ReasonScaling = "Scaling"
	// ReasonUnavailable: the Deployment has fewer available pods than it needs, with no
	// rollout or scale under way (pods failing their readiness probe, for example).
	ReasonUnavailable = "Unavailable"
	// ReasonRolloutComplete: no rollout or scale is under way.
	ReasonRolloutComplete = "RolloutComplete"
	// ReasonAsExpected: nothing is wrong.
	ReasonAsExpected = "AsExpected"
	// ReasonSelectorMigration: a Deployment made by 0.2.0 is being replaced by one with the
	// current pod selector; its pods keep serving until the new ones are available.
	ReasonSelectorMigration = "SelectorMigration"
	// ReasonMigrationDeadlineExceeded: the selector migration from 0.2.0 has not finished
	// within its deadline; the message says what blocks it.
	ReasonMigrationDeadlineExceeded = "MigrationDeadlineExceeded"
	// ReasonWaitingForPredecessor: children of an earlier MyApp of the same name are being
	// removed by the garbage collector.
	ReasonWaitingForPredecessor = "WaitingForPredecessor"
	// ReasonProgressDeadlineExceeded: the Deployment gave up rolling out, typically because
	// its pods never become ready (bad image, crashing container, no room to schedule).
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonReplicaFailure: the Deployment cannot create pods (Pod Security admission, a
	// quota, a LimitRange); the message is the Deployment's.
	ReasonReplicaFailure = "ReplicaFailure"
	// ReasonChildNotOwned: an object with a child's name exists and is not owned by this
	// MyApp; the operator leaves it alone.
	ReasonChildNotOwned = "ChildNotOwned"
	// ReasonInvalidSpec: a field of the MyApp cannot be turned into a child.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonChildRejected: the API server or an admission policy refused a child as the
	// MyApp describes it (invalid, forbidden, over quota).
	ReasonChildRejected = "ChildRejected"
	// ReasonApplyFailed: the API server failed a change to a child; the operator retries
	// with backoff.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonAutoscalerUnableToScale: the HorizontalPodAutoscaler reports that it cannot
	// scale (AbleToScale or ScalingActive False), e.g. for want of a cpu request.
	ReasonAutoscalerUnableToScale = "AutoscalerUnableToScale"
	// ReasonRolledBack: the rollout of the spec's pod template failed (its pods could not
	// pull or run their image, could not be created from their configuration, crash-looped,
	// or the Deployment passed its progress deadline), and the operator returned the
	// Deployment to the last template that was Ready. The app serves that template; the spec
	// is not achieved until it changes or a reconcile is requested.
	ReasonRolledBack = "RolledBack"
	// ReasonGatewayAPINotInstalled: spec.expose asks for an HTTPRoute (a Gateway is named, in
	// the MyApp or by the manager's default) and the cluster does not serve the Gateway API's
	// HTTPRoute (gateway.networking.k8s.io/v1). Installing its CRDs is noticed without a
	// restart.
	ReasonGatewayAPINotInstalled = "GatewayAPINotInstalled"
	// ReasonRouteNotAccepted: the Gateway did not accept the MyApp's HTTPRoute (its parent
	// status says Accepted or ResolvedRefs False); the message names the Gateway's reason, such
	// as NotAllowedByListeners or NoMatchingListenerHostname. A BackendNotFound counts only
	// once it has lasted 30 seconds: a Gateway may see the route before its Service.
	ReasonRouteNotAccepted = "RouteNotAccepted"
	// ReasonWaitingForGateway: the MyApp's HTTPRoute carries the spec and the Gateway has not
	// yet said whether it accepts it (no status for the current generation of the route from the
	// controller of the Gateway's class), or has reported its backend missing for less than 30
	// seconds.
	ReasonWaitingForGateway = "WaitingForGateway"
	// ReasonGatewayNotResponding: the Gateway has not answered the current generation of the
	// MyApp's HTTPRoute within 5 minutes of the operator applying it: the Gateway named does
	// not exist, or no controller serves its GatewayClass. The message names the Gateway.
	ReasonGatewayNotResponding = "GatewayNotResponding"
	// ReasonHostClaimed: a host (and path) of spec.expose is held by an older claim of
	// another MyApp: of another namespace on any path, or of the same namespace on the same
	// path. The MyApp serves its other hosts; the holder is unaffected.
	ReasonHostClaimed = "HostClaimed"
	// ReasonHostNotAllowed: a host of spec.expose is outside the host suffixes the MyApp's
	// namespace may claim (the manager's --expose-host-suffixes). The MyApp serves its other
	// hosts, and the host refused holds nothing against other MyApps.
	ReasonHostNotAllowed = "HostNotAllowed"
	// ReasonIngressClassNotFound: the IngressClass of the MyApp's Ingress does not exist, so
	// no ingress controller serves it. Creating the class is noticed at once.
	ReasonIngressClassNotFound = "IngressClassNotFound"
	// ReasonPrometheusOperatorNotInstalled: spec.metrics asks for a PodMonitor and the cluster
	// does not serve the Prometheus Operator's monitoring.coreos.com/v1 PodMonitors. The app
	// runs without it (Degraded); installing the CRDs is noticed within 10 seconds.
	ReasonPrometheusOperatorNotInstalled = "PrometheusOperatorNotInstalled"
	// ReasonCertManagerNotInstalled: spec.expose.tls.issuerRef asks for a certificate and the
	// cluster does not serve cert-manager's cert-manager.io/v1 Certificates. The Ingress
	// serves without it (the ingress controller's default certificate, or none); installing
	// cert-manager is noticed within 10 seconds.
	ReasonCertManagerNotInstalled = "CertManagerNotInstalled"
	// ReasonCertificateNotReady: cert-manager has not yet issued the certificate of the
	// MyApp's Certificate for its current hosts and issuer. Ready waits for it; the message
	// carries cert-manager's own.
	ReasonCertificateNotReady = "CertificateNotReady"
	// ReasonCertificateIssueFailed: cert-manager's last attempt to issue the MyApp's
	// certificate failed, was denied or was invalid (Degraded only, with cert-manager's reason
	// and message); cert-manager tries again with backoff, and a certificate it issued before
	// keeps being served meanwhile.
	ReasonCertificateIssueFailed = "CertificateIssueFailed"
	// ReasonCertificateNotIssued: cert-manager has not issued the MyApp's certificate within 10
	// minutes of the operator last changing its Certificate, and reports no failure (Degraded
	// only): an issuer that does not exist leaves its request pending, as a slow ACME
	// challenge does.
	ReasonCertificateNotIssued = "CertificateNotIssued"
	// ReasonCertManagerNotResponding: cert-manager has said nothing of the current spec of
	// the MyApp's Certificate within 5 minutes of the operator applying it: its controller
	// does not run, or does not watch the MyApp's namespace.
	ReasonCertManagerNotResponding = "CertManagerNotResponding"
	// ReasonIngressNotAdmitted: no ingress controller has published an address in the status
	// of the MyApp's Ingress within 5 minutes of its creation. The app may be served all the
	// same (some controllers never publish one), so it makes the MyApp Degraded only.
	ReasonIngressNotAdmitted = "IngressNotAdmitted"
)

// Reasons of a canary release (spec.canary).
const (
	// ReasonCanaryProgressing: a canary release runs and its analysis passes so far; the
	// message says the step, the weight and what the step waits for.
	ReasonCanaryProgressing = "CanaryProgressing"
	// ReasonCanaryPaused: a canary release waits for the user: a pause step without a
	// duration, or a pause the user asked for (myapp.example.com/canary: resume or promote
	// goes on).
	ReasonCanaryPaused = "CanaryPaused"
	// ReasonCanaryPromoting: every step passed, or the user promoted the canary: its pods take
	// every request while the stable Deployment moves to the new template.
	ReasonCanaryPromoting = "CanaryPromoting"
	// ReasonCanaryAborted: a check failed (the canary's pods, their deadline to become
	// available, a metric check) or the user aborted: every request went back to the stable
	// pods and the canary's pods were removed. The message names the step and the check. It
	// holds until the spec asks for another template or a reconcile is requested.
	ReasonCanaryAborted = "CanaryAborted"
	// ReasonCanaryAnalysisUnavailable: spec.canary asks for metric checks and the manager has
	// no Prometheus to evaluate them (its --canary-prometheus-url flag): no canary starts.
	ReasonCanaryAnalysisUnavailable = "CanaryAnalysisUnavailable"
	// ReasonCanaryAnalysisInconclusive: a metric check cannot be evaluated (Prometheus does not
	// answer, the query returns no number) under onError: Pause: the steps wait until it can
	// be, the weight in force stays.
	ReasonCanaryAnalysisInconclusive = "CanaryAnalysisInconclusive"
)

// Reasons for pods that cannot start until the user fixes something. They are named after
// the kubelet's waiting reasons, which users already know from `kubectl get pods`.
const (
	// ReasonCreateContainerConfigError: the kubelet cannot build a container's
	// configuration: a Secret or ConfigMap (or a key of one) that spec.env or spec.envFrom
	// refers to is missing, or the image runs as root while runAsNonRoot is set.
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	// ReasonVolumeSourceMissing: a ConfigMap or a PersistentVolumeClaim that a volume of the
	// current template takes, and that is not optional, does not exist, while pods of that
	// template wait to start. The kubelet reports no waiting reason for it (the pods wait in
	// ContainerCreating with FailedMount events, or unscheduled for a claim), so the operator
	// names it from the spec. Secrets are not read for it: the operator is granted nothing on
	// them by default.
	ReasonVolumeSourceMissing = "VolumeSourceMissing"
	// ReasonImagePullBackOff: the kubelet cannot pull the image (wrong name or tag, private
	// registry without a pull secret). It stands for the kubelet's ErrImagePull too, which
	// alternates with ImagePullBackOff while the kubelet retries: one problem, one reason.
	ReasonImagePullBackOff = "ImagePullBackOff"
	// ReasonInvalidImageName: the kubelet cannot parse the image reference.
	ReasonInvalidImageName = "InvalidImageName"
)

// ReasonCrashLoopBackOff is a RollbackStatus reason, never a condition's: the kubelet's waiting
// reason of a container that keeps exiting. A crash may come from a dependency that recovers
// on its own and the container leaves that state at each restart, so beside a serving template
// it is no status problem; but a new template whose pods crash-loop failed its rollout.
const ReasonCrashLoopBackOff = "CrashLoopBackOff"
