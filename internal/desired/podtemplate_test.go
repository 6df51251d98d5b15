package desired

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

func TestPodTemplate(t *testing.T) {
	cases := map[string]struct {
		mutate func(*examplev1.MyApp)
		check  func(g Gomega, pod *corev1ac.PodTemplateSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration)
	}{
		"restricted security defaults and a TCP readiness probe": {
			check: func(g Gomega, pod *corev1ac.PodTemplateSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration) {
				g.Expect(*pod.Spec.SecurityContext.RunAsNonRoot).To(BeTrue())
				g.Expect(*pod.Spec.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
				g.Expect(*c.SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
				g.Expect(c.SecurityContext.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}))
				g.Expect(*c.ReadinessProbe.TCPSocket.Port).To(Equal(intstr.FromString(PortName)))
				g.Expect(c.LivenessProbe).To(BeNil())
				g.Expect(c.StartupProbe).To(BeNil())
				g.Expect(pod.Annotations).To(BeEmpty())
				g.Expect(pod.Spec.ServiceAccountName).To(BeNil())
				g.Expect(pod.Spec.DeprecatedServiceAccount).To(BeNil()) //nolint:staticcheck // the deprecated field is the point
			},
		},
		"security fields override the defaults one by one": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.PodSecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr(false), FSGroup: ptr(int64(2000))}
				a.Spec.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr(int64(0)),
					Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}}}
			},
			check: func(g Gomega, pod *corev1ac.PodTemplateSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration) {
				g.Expect(*pod.Spec.SecurityContext.RunAsNonRoot).To(BeFalse())
				g.Expect(*pod.Spec.SecurityContext.FSGroup).To(Equal(int64(2000)))
				g.Expect(*pod.Spec.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
				g.Expect(*c.SecurityContext.RunAsUser).To(Equal(int64(0)))
				g.Expect(*c.SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
				g.Expect(c.SecurityContext.Capabilities.Add).To(Equal([]corev1.Capability{"NET_BIND_SERVICE"}))
				g.Expect(c.SecurityContext.Capabilities.Drop).To(BeEmpty())
			},
		},
		"probes: each handler, ports defaulted to the app's": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.Port = ptr(int32(9000))
				a.Spec.ReadinessProbe = &examplev1.Probe{HTTPGet: &examplev1.HTTPGetProbe{}, PeriodSeconds: ptr(int32(5))}
				a.Spec.LivenessProbe = &examplev1.Probe{GRPC: &examplev1.GRPCProbe{}, FailureThreshold: ptr(int32(6))}
				a.Spec.StartupProbe = &examplev1.Probe{Exec: &examplev1.ExecProbe{Command: []string{"true"}}}
			},
			check: func(g Gomega, _ *corev1ac.PodTemplateSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration) {
				g.Expect(*c.ReadinessProbe.HTTPGet.Path).To(Equal("/"))
				g.Expect(*c.ReadinessProbe.HTTPGet.Port).To(Equal(intstr.FromString(PortName)))
				g.Expect(*c.ReadinessProbe.PeriodSeconds).To(Equal(int32(5)))
				g.Expect(c.ReadinessProbe.TimeoutSeconds).To(BeNil(), "timings left out stay the API server's defaults")
				g.Expect(*c.LivenessProbe.GRPC.Port).To(Equal(int32(9000)))
				g.Expect(*c.LivenessProbe.FailureThreshold).To(Equal(int32(6)))
				g.Expect(c.StartupProbe.Exec.Command).To(Equal([]string{"true"}))
			},
		},
		"command, args, account, pull secrets, labels and annotations": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.Command, a.Spec.Args = []string{"/srv"}, []string{"--port", "8080"}
				a.Spec.ServiceAccountName = "web"
				a.Spec.ImagePullSecrets = []examplev1.LocalObjectReference{{Name: "regcred"}}
				a.Spec.PodLabels = map[string]examplev1.LabelValue{"team": "shop", LabelSelector: "evil"}
				a.Spec.PodAnnotations = map[string]string{"prometheus.io/scrape": "true"}
			},
			check: func(g Gomega, pod *corev1ac.PodTemplateSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration) {
				g.Expect(c.Command).To(Equal([]string{"/srv"}))
				g.Expect(c.Args).To(Equal([]string{"--port", "8080"}))
				g.Expect(*pod.Spec.ServiceAccountName).To(Equal("web"))
				g.Expect(*pod.Spec.DeprecatedServiceAccount).To(Equal("web"), "owned beside the name, so that it goes with it") //nolint:staticcheck // the deprecated field is the point
				g.Expect(*pod.Spec.ImagePullSecrets[0].Name).To(Equal("regcred"))
				g.Expect(pod.Labels).To(HaveKeyWithValue("team", "shop"))
				g.Expect(pod.Labels).To(HaveKeyWithValue(LabelSelector, "web"), "the operator's labels win")
				g.Expect(pod.Annotations).To(HaveKeyWithValue("prometheus.io/scrape", "true"))
			},
		},
		"placement; a spread constraint without selector selects the app's pods": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.NodeSelector = map[string]examplev1.LabelValue{"kubernetes.io/os": "linux"}
				a.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
				a.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
				a.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.ScheduleAnyway}}
			},
			check: func(g Gomega, pod *corev1ac.PodTemplateSpecApplyConfiguration, _ *corev1ac.ContainerApplyConfiguration) {
				g.Expect(pod.Spec.NodeSelector).To(Equal(map[string]string{"kubernetes.io/os": "linux"}))
				g.Expect(*pod.Spec.Tolerations[0].Key).To(Equal("dedicated"))
				g.Expect(pod.Spec.Affinity.NodeAffinity).NotTo(BeNil())
				g.Expect(*pod.Spec.TopologySpreadConstraints[0].TopologyKey).To(Equal("zone"))
				g.Expect(pod.Spec.TopologySpreadConstraints[0].LabelSelector.MatchLabels).To(Equal(map[string]string{LabelSelector: "web"}))
			},
		},
		"fields the MyApp leaves out stay out of the template, so that an upgrade replaces no pod": {
			check: func(g Gomega, pod *corev1ac.PodTemplateSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration) {
				g.Expect(c.EnvFrom).To(BeEmpty())
				g.Expect(c.Lifecycle).To(BeNil())
				g.Expect(pod.Spec.AutomountServiceAccountToken).To(BeNil())
				g.Expect(pod.Spec.TerminationGracePeriodSeconds).To(BeNil())
				g.Expect(pod.Spec.Volumes).To(BeEmpty())
				g.Expect(c.VolumeMounts).To(BeEmpty())
			},
		},
		"env from ConfigMaps and Secrets, pod fields and container resources": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.Env = []examplev1.EnvVar{
					{Name: "POD", ValueFrom: &examplev1.EnvVarSource{FieldRef: &examplev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "MEM", ValueFrom: &examplev1.EnvVarSource{ResourceFieldRef: &examplev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: ptr(examplev1.Quantity("1Mi"))}}},
					{Name: "CPU", ValueFrom: &examplev1.EnvVarSource{ResourceFieldRef: &examplev1.ResourceFieldSelector{Resource: "requests.cpu"}}},
				}
				a.Spec.EnvFrom = []examplev1.EnvFromSource{
					{ConfigMapRef: &examplev1.EnvFromReference{Name: "web-config"}},
					{Prefix: "DB_", SecretRef: &examplev1.EnvFromReference{Name: "db", Optional: ptr(true)}},
				}
			},
			check: func(g Gomega, _ *corev1ac.PodTemplateSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration) {
				g.Expect(*c.Env[0].ValueFrom.FieldRef.FieldPath).To(Equal("metadata.name"))
				g.Expect(*c.Env[0].ValueFrom.FieldRef.APIVersion).To(Equal("v1"))
				g.Expect(*c.Env[1].ValueFrom.ResourceFieldRef.Resource).To(Equal("limits.memory"))
				g.Expect(c.Env[1].ValueFrom.ResourceFieldRef.Divisor.String()).To(Equal("1Mi"))
				g.Expect(c.Env[2].ValueFrom.ResourceFieldRef.Divisor).To(BeNil(), "no divisor: the API server's default")
				g.Expect(c.EnvFrom).To(HaveLen(2))
				g.Expect(*c.EnvFrom[0].ConfigMapRef.Name).To(Equal("web-config"))
				g.Expect(c.EnvFrom[0].ConfigMapRef.Optional).To(BeNil())
				g.Expect(c.EnvFrom[0].Prefix).To(BeNil())
				g.Expect(*c.EnvFrom[1].Prefix).To(Equal("DB_"))
				g.Expect(*c.EnvFrom[1].SecretRef.Name).To(Equal("db"))
				g.Expect(*c.EnvFrom[1].SecretRef.Optional).To(BeTrue())
			},
		},
		"the token mount and the grace period as the MyApp says": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.AutomountServiceAccountToken = ptr(false)
				a.Spec.TerminationGracePeriodSeconds = ptr(int64(45))
			},
			check: func(g Gomega, pod *corev1ac.PodTemplateSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration) {
				g.Expect(*pod.Spec.AutomountServiceAccountToken).To(BeFalse())
				g.Expect(*pod.Spec.TerminationGracePeriodSeconds).To(Equal(int64(45)))
				g.Expect(c.Lifecycle).To(BeNil())
			},
		},
		"a preStop sleep gets the default grace period stated beside it": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.Lifecycle = &examplev1.Lifecycle{PreStop: &examplev1.LifecycleHandler{Sleep: &examplev1.SleepAction{Seconds: 30}}}
			},
			check: func(g Gomega, pod *corev1ac.PodTemplateSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration) {
				g.Expect(*c.Lifecycle.PreStop.Sleep.Seconds).To(Equal(int64(30)))
				g.Expect(*pod.Spec.TerminationGracePeriodSeconds).To(Equal(DefaultTerminationGracePeriodSeconds))
			},
		},
		"a preStop HTTP GET takes the probe's defaults; exec runs the command": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.Lifecycle = &examplev1.Lifecycle{PreStop: &examplev1.LifecycleHandler{HTTPGet: &examplev1.HTTPGetProbe{}}}
				a.Spec.TerminationGracePeriodSeconds = ptr(int64(0))
			},
			check: func(g Gomega, pod *corev1ac.PodTemplateSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration) {
				g.Expect(*c.Lifecycle.PreStop.HTTPGet.Path).To(Equal("/"))
				g.Expect(*c.Lifecycle.PreStop.HTTPGet.Port).To(Equal(intstr.FromString(PortName)))
				g.Expect(*pod.Spec.TerminationGracePeriodSeconds).To(BeZero(), "the MyApp's grace period, even 0")
			},
		},
		"volumes in the core shape, mounted as the MyApp says": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.Volumes = []examplev1.Volume{
					{Name: "tmp", EmptyDir: &examplev1.EmptyDirVolumeSource{SizeLimit: ptr(examplev1.Quantity("64Mi"))}},
					{Name: "config", ConfigMap: &examplev1.ConfigMapVolumeSource{Name: "web-config",
						Items: []examplev1.KeyToPath{{Key: "config.yaml", Path: "config.yaml", Mode: ptr(int32(0o440))}}}},
					{Name: "tls", Secret: &examplev1.SecretVolumeSource{SecretName: "web-tls", Optional: ptr(true)}},
					{Name: "data", PersistentVolumeClaim: &examplev1.PersistentVolumeClaimVolumeSource{ClaimName: "shared", ReadOnly: true}},
				}
				a.Spec.VolumeMounts = []examplev1.VolumeMount{
					{Name: "tmp", MountPath: "/tmp"},
					{Name: "config", MountPath: "/etc/app", ReadOnly: true},
					{Name: "data", MountPath: "/data", SubPath: "web"},
				}
			},
			check: func(g Gomega, pod *corev1ac.PodTemplateSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration) {
				g.Expect(pod.Spec.Volumes).To(HaveLen(4))
				g.Expect(pod.Spec.Volumes[0].EmptyDir.SizeLimit.String()).To(Equal("64Mi"))
				g.Expect(pod.Spec.Volumes[0].EmptyDir.Medium).To(BeNil())
				g.Expect(*pod.Spec.Volumes[1].ConfigMap.Name).To(Equal("web-config"))
				g.Expect(*pod.Spec.Volumes[1].ConfigMap.Items[0].Mode).To(Equal(int32(0o440)))
				g.Expect(pod.Spec.Volumes[1].ConfigMap.DefaultMode).To(BeNil(), "the API server's default")
				g.Expect(*pod.Spec.Volumes[2].Secret.SecretName).To(Equal("web-tls"))
				g.Expect(pod.Spec.Volumes[2].Secret.Items).To(BeNil())
				g.Expect(*pod.Spec.Volumes[2].Secret.Optional).To(BeTrue())
				g.Expect(*pod.Spec.Volumes[3].PersistentVolumeClaim.ReadOnly).To(BeTrue())
				g.Expect(c.VolumeMounts).To(HaveLen(3))
				g.Expect(*c.VolumeMounts[0].MountPath).To(Equal("/tmp"))
				g.Expect(c.VolumeMounts[0].ReadOnly).To(BeNil())
				g.Expect(*c.VolumeMounts[1].ReadOnly).To(BeTrue())
				g.Expect(*c.VolumeMounts[2].SubPath).To(Equal("web"))
			},
		},
		"a downward API volume: fields of the pod, and resources of the application's container": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.Volumes = []examplev1.Volume{{Name: "pod-info", DownwardAPI: &examplev1.DownwardAPIVolumeSource{
					DefaultMode: ptr(int32(0o444)),
					Items: []examplev1.DownwardAPIVolumeFile{
						{Path: "labels", FieldRef: &examplev1.VolumeFieldSelector{FieldPath: "metadata.labels"}},
						{Path: "memory", Mode: ptr(int32(0o400)), ResourceFieldRef: &examplev1.ResourceFieldSelector{
							Resource: "limits.memory", Divisor: ptr(examplev1.Quantity("1Mi"))}},
					}}}}
			},
			check: func(g Gomega, pod *corev1ac.PodTemplateSpecApplyConfiguration, _ *corev1ac.ContainerApplyConfiguration) {
				src := pod.Spec.Volumes[0].DownwardAPI
				g.Expect(*src.DefaultMode).To(Equal(int32(0o444)))
				g.Expect(src.Items).To(HaveLen(2))
				g.Expect(*src.Items[0].FieldRef.FieldPath).To(Equal("metadata.labels"))
				g.Expect(*src.Items[0].FieldRef.APIVersion).To(Equal("v1"))
				g.Expect(*src.Items[1].ResourceFieldRef.ContainerName).To(Equal(ContainerName), "a volume's selector names the container")
				g.Expect(src.Items[1].ResourceFieldRef.Divisor.String()).To(Equal("1Mi"))
				g.Expect(*src.Items[1].Mode).To(Equal(int32(0o400)))
			},
		},
		"a projected volume: its sources in order, each in the core shape": {
			mutate: func(a *examplev1.MyApp) {
				a.Spec.Volumes = []examplev1.Volume{{Name: "bundle", Projected: &examplev1.ProjectedVolumeSource{
					DefaultMode: ptr(int32(0o440)),
					Sources: []examplev1.VolumeProjection{
						{ConfigMap: &examplev1.ConfigMapProjection{Name: "web-config", Optional: ptr(true),
							Items: []examplev1.KeyToPath{{Key: "config.yaml", Path: "app.yaml"}}}},
						{Secret: &examplev1.SecretProjection{Name: "web-tls"}},
						{DownwardAPI: &examplev1.DownwardAPIProjection{Items: []examplev1.DownwardAPIVolumeFile{
							{Path: "cpu", ResourceFieldRef: &examplev1.ResourceFieldSelector{Resource: "limits.cpu"}}}}},
						{ServiceAccountToken: &examplev1.ServiceAccountTokenProjection{Audience: "vault", ExpirationSeconds: ptr(int64(600)), Path: "token"}},
					}}}}
			},
			check: func(g Gomega, pod *corev1ac.PodTemplateSpecApplyConfiguration, _ *corev1ac.ContainerApplyConfiguration) {
				src := pod.Spec.Volumes[0].Projected
				g.Expect(*src.DefaultMode).To(Equal(int32(0o440)))
				g.Expect(src.Sources).To(HaveLen(4))
				g.Expect(*src.Sources[0].ConfigMap.Name).To(Equal("web-config"))
				g.Expect(*src.Sources[0].ConfigMap.Optional).To(BeTrue())
				g.Expect(*src.Sources[0].ConfigMap.Items[0].Path).To(Equal("app.yaml"))
				g.Expect(*src.Sources[1].Secret.Name).To(Equal("web-tls"))
				g.Expect(*src.Sources[2].DownwardAPI.Items[0].ResourceFieldRef.ContainerName).To(Equal(ContainerName))
				g.Expect(*src.Sources[3].ServiceAccountToken.Audience).To(Equal("vault"))
				g.Expect(*src.Sources[3].ServiceAccountToken.ExpirationSeconds).To(Equal(int64(600)))
				g.Expect(*src.Sources[3].ServiceAccountToken.Path).To(Equal("token"))
				g.Expect(*pod.Spec.ServiceAccountName).To(Equal("default"), "Kubernetes refuses a token projection without a service account name")
				g.Expect(*pod.Spec.DeprecatedServiceAccount).To(Equal("default")) //nolint:staticcheck // the deprecated field is the point
			},
		},
		"an empty env value is sent as no value": {
			mutate: func(a *examplev1.MyApp) { a.Spec.Env = []examplev1.EnvVar{{Name: "EMPTY", Value: ptr("")}} },
			check: func(g Gomega, _ *corev1ac.PodTemplateSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration) {
				g.Expect(c.Env).To(HaveLen(1))
				g.Expect(c.Env[0].Value).To(BeNil())
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			pod, err := PodTemplate(newApp(tc.mutate))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pod.Spec.Containers).To(HaveLen(1))
			tc.check(g, pod, &pod.Spec.Containers[0])
		})
	}
}

func TestRollingUpdateAndBudget(t *testing.T) {
	g := NewWithT(t)
	app := newApp(func(a *examplev1.MyApp) {
		a.Spec.RollingUpdate = &examplev1.RollingUpdate{MaxUnavailable: ptr(intstr.FromInt32(0))}
		a.Spec.PodDisruptionBudget = &examplev1.PodDisruptionBudgetSpec{MinAvailable: ptr(intstr.FromString("50%"))}
	})
	d, err := Deployment(app, false)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(*d.Spec.Strategy.RollingUpdate.MaxUnavailable).To(Equal(intstr.FromInt32(0)))
	g.Expect(d.Spec.Strategy.RollingUpdate.MaxSurge).To(BeNil())
	pdb, err := PodDisruptionBudget(app, false)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(*pdb.Name).To(Equal("web"))
	g.Expect(*pdb.Spec.MinAvailable).To(Equal(intstr.FromString("50%")))
	g.Expect(pdb.Spec.Selector.MatchLabels).To(Equal(SelectorLabels(app)))
	g.Expect(pdb.OwnerReferences).To(HaveLen(1))

	plain := newApp(nil)
	d, err = Deployment(plain, false)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Spec.Strategy).To(BeNil(), "the Deployment's own defaults apply")
	pdb, err = PodDisruptionBudget(plain, false)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pdb).To(BeNil())
}

func TestServiceDuringSelectorMigration(t *testing.T) {
	g := NewWithT(t)
	app := newApp(func(a *examplev1.MyApp) { a.Spec.ServiceAnnotations = map[string]string{"lb": "internal"} })
	s := Service(app, true)
	// Both 0.2.0's pods (name, instance, managed-by) and the new ones (name, managed-by,
	// selector key) carry these labels.
	g.Expect(s.Spec.Selector).To(Equal(map[string]string{LabelName: "web", LabelManagedBy: ManagedBy}))
	g.Expect(s.Annotations).To(HaveKeyWithValue(AnnotationSelectorMigration, SelectorMigrationFrom020))
	g.Expect(s.Annotations).To(HaveKeyWithValue("lb", "internal"))
	legacyPods := LegacySelectorLabels(app)
	legacyPods[LabelManagedBy] = ManagedBy
	for k, v := range s.Spec.Selector {
		g.Expect(legacyPods).To(HaveKeyWithValue(k, v))
		g.Expect(Labels(app)).To(HaveKeyWithValue(k, v))
	}

	s = Service(app, false)
	g.Expect(s.Spec.Selector).To(Equal(map[string]string{LabelSelector: "web"}))
	g.Expect(s.Annotations).NotTo(HaveKey(AnnotationSelectorMigration))
}

// TestProjectedVolumePathsDiffer: two items of a projected volume's sources on one path make a
// pod Kubernetes refuses; the builder says so, naming the field, rather than send it (the
// operator's admission policy refuses such a MyApp before it is stored).
func TestProjectedVolumePathsDiffer(t *testing.T) {
	g := NewWithT(t)
	_, err := PodTemplate(newApp(func(a *examplev1.MyApp) {
		a.Spec.Volumes = []examplev1.Volume{{Name: "bundle", Projected: &examplev1.ProjectedVolumeSource{Sources: []examplev1.VolumeProjection{
			{ConfigMap: &examplev1.ConfigMapProjection{Name: "c", Items: []examplev1.KeyToPath{{Key: "a", Path: "conf"}}}},
			{DownwardAPI: &examplev1.DownwardAPIProjection{Items: []examplev1.DownwardAPIVolumeFile{
				{Path: "conf", FieldRef: &examplev1.VolumeFieldSelector{FieldPath: "metadata.name"}}}}},
		}}}}
	}))
	var invalid *InvalidSpecError
	g.Expect(errors.As(err, &invalid)).To(BeTrue(), "got %v", err)
	g.Expect(invalid.Field).To(Equal("spec.volumes[bundle].projected.sources"))
	g.Expect(invalid.Message).To(ContainSubstring(`"conf"`))
}

// TestDivisor: a divisor is taken by value, in any spelling, and the template carries it in the
// spelling Kubernetes accepts: pod validation compares the quantity's canonical form with 1 or
// 1m for cpu, and 1, 1k ... 1E, 1Ki ... 1Ei for the others.
func TestDivisor(t *testing.T) {
	cases := []struct {
		resource, divisor string
		want              string // the divisor sent; "" for none
		refused           bool
	}{
		{"limits.cpu", "1", "1", false},
		{"limits.cpu", "1m", "1m", false},
		{"requests.cpu", "1000m", "1", false},
		{"requests.cpu", "0.001", "1m", false},
		{"limits.cpu", "1e-3", "1m", false},
		{"limits.cpu", "1000000n", "1m", false},
		{"limits.cpu", "0.001k", "1", false},
		{"limits.cpu", "0", "", false},
		{"limits.cpu", "1k", "", true},
		{"limits.cpu", "2", "", true},
		{"limits.cpu", "500m", "", true},
		{"limits.cpu", "1Ki", "", true},
		{"limits.memory", "1", "1", false},
		{"limits.memory", "1000m", "1", false},
		{"limits.memory", "1000", "1k", false},
		{"limits.memory", "1e3", "1k", false},
		{"requests.memory", "1Mi", "1Mi", false},
		{"requests.memory", "1048576", "1Mi", false},
		{"requests.memory", "1024Ki", "1Mi", false},
		{"limits.memory", "1024", "1Ki", false},
		{"limits.memory", "1000k", "1M", false},
		{"limits.memory", "0.5Mi", "", true},
		{"limits.memory", "1m", "", true},
		{"limits.memory", "1000Ki", "", true},
		{"limits.memory", "2Gi", "", true},
		{"limits.ephemeral-storage", "1073741824", "1Gi", false},
		{"limits.ephemeral-storage", "1E", "1E", false},
		{"limits.ephemeral-storage", "1Ei", "1Ei", false},
		{"limits.hugepages-2Mi", "2Mi", "", true},
		{"requests.hugepages-1Gi", "1024Mi", "1Gi", false},
	}
	for _, tc := range cases {
		t.Run(tc.resource+"/"+tc.divisor, func(t *testing.T) {
			g := NewWithT(t)
			sel, err := resourceFieldSelector("spec.env[0].valueFrom.resourceFieldRef",
				&examplev1.ResourceFieldSelector{Resource: tc.resource, Divisor: ptr(examplev1.Quantity(tc.divisor))})
			if tc.refused {
				var invalid *InvalidSpecError
				g.Expect(errors.As(err, &invalid)).To(BeTrue(), "%v", err)
				g.Expect(invalid.Field).To(Equal("spec.env[0].valueFrom.resourceFieldRef.divisor"))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			if tc.want == "" {
				g.Expect(sel.Divisor).To(BeNil(), "0 is no divisor, as Kubernetes takes it")
				return
			}
			// What pod validation compares: the canonical form, which is also what the
			// apply sends and the API server stores, so the comparison of intents holds.
			g.Expect(sel.Divisor.String()).To(Equal(tc.want))
			g.Expect(*sel.Resource).To(Equal(tc.resource))
		})
	}
}
