package realnode

import (
	"fmt"
	"net/url"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/test/traffic"
)

var _ = Describe("A MyApp's settings on a real node", Ordered, Label("realnode", "settings"), func() {
	BeforeAll(func() { deployOperatorAgain() })

	It("gives the pods env from a ConfigMap and a Secret, pod fields and resources, config files and a writable /tmp on a read-only root, no API token; a new file rolls out with a preStop sleep and drops no request", func() {
		ns := newNamespace()
		v1 := appImage + ":" + appVersions[0]
		settingsFile := func(content string) []examplev1.File {
			return []examplev1.File{{Path: "/srv/config/settings.yaml", Content: content, Mode: ptr.To[int32](0o444)}}
		}
		Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-settings"},
			Data: map[string]string{"GREETING": "hello from a ConfigMap", "MODE": "from the ConfigMap",
				"config.yaml": "greeting: hello from a file\n"}})).To(Succeed())
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-secret"},
			StringData: map[string]string{"TOKEN": "s3cret"}})).To(Succeed())

		app := &examplev1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: examplev1.MyAppSpec{Image: v1, Replicas: ptr.To[int32](2), Port: ptr.To[int32](appPort),
				Resources: &examplev1.ResourceRequirements{Limits: map[corev1.ResourceName]examplev1.Quantity{"memory": "64Mi"}},
				Env: []examplev1.EnvVar{
					{Name: "POD_NAME", ValueFrom: &examplev1.EnvVarSource{FieldRef: &examplev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "NODE", ValueFrom: &examplev1.EnvVarSource{FieldRef: &examplev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
					{Name: "MEMORY_MIB", ValueFrom: &examplev1.EnvVarSource{ResourceFieldRef: &examplev1.ResourceFieldSelector{
						Resource: "limits.memory", Divisor: ptr.To(examplev1.Quantity("1Mi"))}}},
					{Name: "APP_MODE", Value: ptr.To("from env, which wins")},
				},
				EnvFrom: []examplev1.EnvFromSource{
					{Prefix: "APP_", ConfigMapRef: &examplev1.EnvFromReference{Name: "web-settings"}},
					{SecretRef: &examplev1.EnvFromReference{Name: "web-secret"}},
					{ConfigMapRef: &examplev1.EnvFromReference{Name: "not-there", Optional: ptr.To(true)}},
				},
				SecurityContext: &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)},
				Volumes: []examplev1.Volume{
					{Name: "tmp", EmptyDir: &examplev1.EmptyDirVolumeSource{SizeLimit: ptr.To(examplev1.Quantity("16Mi"))}},
					{Name: "config", ConfigMap: &examplev1.ConfigMapVolumeSource{Name: "web-settings",
						Items: []examplev1.KeyToPath{{Key: "config.yaml", Path: "config.yaml"}}}},
					{Name: "pod-info", DownwardAPI: &examplev1.DownwardAPIVolumeSource{Items: []examplev1.DownwardAPIVolumeFile{
						{Path: "name", FieldRef: &examplev1.VolumeFieldSelector{FieldPath: "metadata.name"}},
						{Path: "memory", ResourceFieldRef: &examplev1.ResourceFieldSelector{Resource: "limits.memory",
							Divisor: ptr.To(examplev1.Quantity("1Mi"))}}}}},
					{Name: "bundle", Projected: &examplev1.ProjectedVolumeSource{Sources: []examplev1.VolumeProjection{
						{ConfigMap: &examplev1.ConfigMapProjection{Name: "web-settings", Items: []examplev1.KeyToPath{{Key: "config.yaml", Path: "app/config.yaml"}}}},
						{Secret: &examplev1.SecretProjection{Name: "web-secret", Items: []examplev1.KeyToPath{{Key: "TOKEN", Path: "app/token"}}}},
						{DownwardAPI: &examplev1.DownwardAPIProjection{Items: []examplev1.DownwardAPIVolumeFile{
							{Path: "pod/namespace", FieldRef: &examplev1.VolumeFieldSelector{FieldPath: "metadata.namespace"}}}}},
					}}},
				},
				VolumeMounts: []examplev1.VolumeMount{
					{Name: "tmp", MountPath: "/tmp"},
					{Name: "config", MountPath: "/etc/app", ReadOnly: true},
					{Name: "pod-info", MountPath: "/etc/podinfo", ReadOnly: true},
					{Name: "bundle", MountPath: "/etc/bundle", ReadOnly: true},
				},
				Files:                         settingsFile("release: first\n"),
				AutomountServiceAccountToken:  ptr.To(false),
				TerminationGracePeriodSeconds: ptr.To[int64](20),
				Lifecycle:                     &examplev1.Lifecycle{PreStop: &examplev1.LifecycleHandler{Sleep: &examplev1.SleepAction{Seconds: 5}}},
			},
		}
		Expect(k8s.Create(ctx, app)).To(Succeed())

		By("asking each pod what the kubelet gave it")
		pods := expectReadyAndAnswering(ns, app.Name, appVersions[0], 2)
		for _, p := range pods {
			env := func(name string) string {
				body, err := httpGet(fmt.Sprintf("http://%s:%d/env?name=%s", p.Status.PodIP, appPort, url.QueryEscape(name)))
				Expect(err).NotTo(HaveOccurred(), "variable %s of pod %s", name, p.Name)
				return body
			}
			Expect(env("APP_GREETING")).To(Equal("hello from a ConfigMap"))
			Expect(env("APP_MODE")).To(Equal("from env, which wins"))
			Expect(env("TOKEN")).To(Equal("s3cret"))
			Expect(env("POD_NAME")).To(Equal(p.Name))
			Expect(env("NODE")).To(Equal(realNodeName))
			Expect(env("MEMORY_MIB")).To(Equal("64"))

			ask := func(path string) (string, error) {
				return httpGet(fmt.Sprintf("http://%s:%d%s", p.Status.PodIP, appPort, path))
			}
			Expect(ask("/file?path=/etc/app/config.yaml")).To(Equal("greeting: hello from a file\n"), "the ConfigMap key as a file")
			Expect(ask("/file?path=/srv/config/settings.yaml")).To(Equal("release: first\n"), "the file of spec.files")
			Expect(ask("/file?path=/etc/podinfo/name")).To(Equal(p.Name), "the downward API's pod name as a file")
			Expect(ask("/file?path=/etc/podinfo/memory")).To(Equal("64"), "the container's memory limit in MiB as a file")
			Expect(ask("/file?path=/etc/bundle/app/config.yaml")).To(Equal("greeting: hello from a file\n"), "a projected ConfigMap key")
			Expect(ask("/file?path=/etc/bundle/app/token")).To(Equal("s3cret"), "a projected Secret key")
			Expect(ask("/file?path=/etc/bundle/pod/namespace")).To(Equal(ns), "a projected pod field")
			Expect(ask("/write?path=/tmp/scratch")).To(Equal("ok\n"), "the emptyDir at /tmp is writable")
			_, err := ask("/write?path=/scratch")
			Expect(err).To(MatchError(ContainSubstring("read-only file system")), "the root filesystem is read-only")

			Expect(p.Spec.AutomountServiceAccountToken).To(HaveValue(BeFalse()))
			for _, m := range p.Spec.Containers[0].VolumeMounts {
				Expect(m.MountPath).NotTo(HavePrefix("/var/run/secrets/kubernetes.io"), "pod %s mounts the API token", p.Name)
			}
			Expect(p.Spec.TerminationGracePeriodSeconds).To(HaveValue(BeEquivalentTo(20)))
		}

		By("deleting a pod: it keeps answering on its own address through its preStop sleep, then stops")
		// The check that tells the hook apart: without it the app gets SIGTERM as soon as the
		// kubelet sees the delete, and stops listening (1.7 s after the delete, measured here
		// with the hook removed); with it, 5 s later.
		var victim corev1.Pod
		for _, p := range pods {
			victim = p
			break
		}
		podURL := fmt.Sprintf("http://%s:%d/readyz", victim.Status.PodIP, appPort)
		Expect(k8s.Delete(ctx, &victim)).To(Succeed())
		deleted := time.Now()
		var lastAnswer time.Time
		Eventually(func() error {
			if _, err := httpGet(podURL); err == nil {
				lastAnswer = time.Now()
				return fmt.Errorf("pod %s still answers", victim.Name)
			}
			return nil
		}).WithPolling(100 * time.Millisecond).Should(Succeed())
		Expect(lastAnswer.Sub(deleted)).To(BeNumerically(">=", 4*time.Second),
			"pod %s stopped answering %s after its delete; its preStop sleeps 5 s", victim.Name, lastAnswer.Sub(deleted))
		pods = expectReadyAndAnswering(ns, app.Name, appVersions[0], 2)

		By("rolling new content of the file out under traffic through the Service")
		service := serviceURL(ns, app.Name)
		Eventually(traffic.Get).WithArguments(service).Should(Succeed())
		started := time.Now()
		stream := traffic.Start(service, perSecond, 3*time.Minute)
		updateSpec(app, func(s *examplev1.MyAppSpec) { s.Files = settingsFile("release: second\n") })
		after := expectReadyAndAnswering(ns, app.Name, appVersions[0], 2)
		for _, p := range after {
			Expect(httpGet(fmt.Sprintf("http://%s:%d/file?path=/srv/config/settings.yaml", p.Status.PodIP, appPort))).
				To(Equal("release: second\n"), "pod %s serves the new file", p.Name)
		}
		// The old pods are gone only once their sleep and shutdown are over; the requests sent
		// until then count.
		expectOnlyPods(ns, len(after))
		expectNoRequestLost("traffic through a rollout of a file with a preStop sleep", stream.Stop(), started)
		for uid := range after {
			Expect(pods).NotTo(HaveKey(uid))
		}
	})
})
