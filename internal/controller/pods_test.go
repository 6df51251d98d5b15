package controller

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/status"
)

// fullPod is one of a MyApp's pods as the API server sends it to the informer: the pod
// template the operator asks for (probes, security context, env from a Secret), the fields
// the API server and the scheduler add, managedFields of the controller manager and the
// kubelet, and a kubelet status. waiting, when set, is the container's waiting reason.
func fullPod(t testing.TB, i int, waiting string) *corev1.Pod {
	t.Helper()
	app := &examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: fmt.Sprintf("web-%05d", i/2), UID: "8d3b"},
		Spec: examplev1.MyAppSpec{Image: "registry.example.com/shop/web:1.27.3", Port: ptrTo(int32(8080)),
			Env: []examplev1.EnvVar{{Name: "GREETING", Value: ptrTo("hello")},
				{Name: "PASSWORD", ValueFrom: &examplev1.EnvVarSource{SecretKeyRef: &examplev1.KeySelector{Name: "db", Key: "password"}}}}}}
	tmpl, err := desired.PodTemplate(app)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(raw, pod); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%s-5d4b8c7f9-%05d", app.Name, i)
	pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	pod.Name, pod.Namespace, pod.GenerateName = name, app.Namespace, app.Name+"-5d4b8c7f9-"
	pod.UID, pod.ResourceVersion = types.UID(fmt.Sprintf("0c3f9d2e-5b1a-4c7e-9f00-%012d", i)), "123456789"
	pod.CreationTimestamp = metav1.Now()
	pod.Labels["pod-template-hash"] = "5d4b8c7f9"
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app.Name + "-5d4b8c7f9",
		UID: "1f0e", Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}}
	// managedFields mirror the spec's and the status's structure: their size is of that order.
	specFields, _ := json.Marshal(pod.Spec)
	pod.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: specFields}},
	}
	s := &pod.Spec
	s.NodeName, s.ServiceAccountName, s.DeprecatedServiceAccount = "node-17", "default", "default"
	s.RestartPolicy, s.DNSPolicy, s.SchedulerName = corev1.RestartPolicyAlways, corev1.DNSClusterFirst, "default-scheduler"
	s.TerminationGracePeriodSeconds, s.EnableServiceLinks, s.Priority = ptrTo(int64(30)), ptrTo(true), ptrTo(int32(0))
	s.Tolerations = []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptrTo(int64(300))},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptrTo(int64(300))}}
	s.Volumes = []corev1.Volume{{Name: "kube-api-access-x7k2p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptrTo(int64(3607))}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}}}}}}}
	s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "kube-api-access-x7k2p", ReadOnly: true,
		MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
	s.Containers[0].TerminationMessagePath, s.Containers[0].ImagePullPolicy = "/dev/termination-log", corev1.PullIfNotPresent
	now := metav1.Now()
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.3.17", PodIP: "10.244.17.201",
		HostIPs: []corev1.HostIP{{IP: "10.0.3.17"}}, PodIPs: []corev1.PodIP{{IP: "10.244.17.201"}}, QOSClass: corev1.PodQOSBestEffort,
		StartTime: &now}
	for _, typ := range []corev1.PodConditionType{"PodReadyToStartContainers", corev1.PodInitialized, corev1.PodReady,
		corev1.ContainersReady, corev1.PodScheduled} {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	cs := corev1.ContainerStatus{Name: desired.ContainerName, Image: app.Spec.Image, Ready: true, Started: ptrTo(true),
		ImageID:     "registry.example.com/shop/web@sha256:0f8e3c1d2b4a69788f6e5d4c3b2a1908f7e6d5c4b3a29180f7e6d5c4b3a29180",
		ContainerID: "containerd://4b2d0c9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c",
		State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}
	if waiting != "" {
		for i, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
				pod.Status.Conditions[i].Status = corev1.ConditionFalse
			}
		}
		cs.Ready, cs.Started = false, ptrTo(false)
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting, Message: `secret "db" not found`}}
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	statusFields, _ := json.Marshal(pod.Status)
	pod.ManagedFields = append(pod.ManagedFields, metav1.ManagedFieldsEntry{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "v1", Subresource: "status", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: statusFields}})
	return pod
}

// TestTrimPodKeepsWhatTheStatusReads: the trimmed pod still names its MyApp, and holds the
// waiting state of a container the user must fix and whether the pod is ready, and nothing
// else of the status.
func TestTrimPodKeepsWhatTheStatusReads(t *testing.T) {
	g := NewWithT(t)
	full := fullPod(t, 0, "CreateContainerConfigError")
	full.DeletionTimestamp = ptrTo(metav1.Now())
	out, err := trimPod(full)
	g.Expect(err).NotTo(HaveOccurred())
	pod := out.(*corev1.Pod)
	g.Expect(pod.Name).To(Equal(full.Name))
	g.Expect(pod.Namespace).To(Equal(full.Namespace))
	g.Expect(pod.ResourceVersion).To(Equal(full.ResourceVersion))
	g.Expect(pod.Labels).To(HaveKeyWithValue(desired.LabelSelector, "web-00000"))
	g.Expect(pod.Labels).To(HaveKeyWithValue("pod-template-hash", "5d4b8c7f9"))
	g.Expect(pod.DeletionTimestamp).To(Equal(full.DeletionTimestamp))
	g.Expect(pod.ManagedFields).To(BeEmpty())
	g.Expect(pod.Spec.Containers).To(BeEmpty())
	g.Expect(pod.Status.Conditions).To(BeEmpty())
	g.Expect(pod.Status.ContainerStatuses).To(Equal([]corev1.ContainerStatus{{Name: "app", Image: "registry.example.com/shop/web:1.27.3",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: `secret "db" not found`}}}}),
		"the image the container runs, from the pod's spec")

	again, err := trimPod(pod)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(pod), "the transform is idempotent")

	running, _ := trimPod(fullPod(t, 1, ""))
	g.Expect(running.(*corev1.Pod).Status.ContainerStatuses).To(BeEmpty(), "a running container says nothing to the status")
	g.Expect(running.(*corev1.Pod).Status.Conditions).To(Equal([]corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}),
		"a ready pod says only that it is ready")
	creating, _ := trimPod(fullPod(t, 1, "ContainerCreating"))
	g.Expect(creating.(*corev1.Pod).Status.ContainerStatuses).To(BeEmpty(), "nor one being created")
	g.Expect(trimPod("not a pod")).To(Equal("not a pod"))
}

// TestTrimPodKeepsInitContainerProblems: an init container or sidecar that cannot start is
// kept as the application's container is, its image from the pod's spec, and waitingIn reports
// it before the application's container, which waits for it.
func TestTrimPodKeepsInitContainerProblems(t *testing.T) {
	g := NewWithT(t)
	full := fullPod(t, 0, "")
	full.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: "registry.example.com/shop/migrate:2"},
		{Name: "proxy", Image: "envoy:1", RestartPolicy: ptrTo(corev1.ContainerRestartPolicyAlways)}}
	full.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: "migrate", Image: "registry.example.com/shop/migrate:2", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
		{Name: "proxy", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}}},
	}
	full.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
	out, err := trimPod(full)
	g.Expect(err).NotTo(HaveOccurred())
	pod := out.(*corev1.Pod)
	g.Expect(pod.Status.InitContainerStatuses).To(Equal([]corev1.ContainerStatus{{Name: "proxy", Image: "envoy:1",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}}}}),
		"the sidecar's problem, with the image of its spec; a completed init container says nothing")
	g.Expect(pod.Status.ContainerStatuses).To(BeEmpty(), "PodInitializing is no problem")
	again, err := trimPod(pod)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(pod), "the transform is idempotent")
	g.Expect(waitingIn(pod)).To(Equal([]status.ContainerWaiting{{Pod: pod.Name, Container: "proxy", Image: "envoy:1", Reason: "CrashLoopBackOff", Message: "back-off 10s"}}))
}

// podsAtScale is the pod count of the scale target: 5,000 MyApps of 2 pods. The test
// measures podsMeasured of them and scales up.
const podsAtScale, podsMeasured = 10_000, 2_000

// TestPodCacheFootprint measures the heap the operator's pod cache takes per pod, trimmed,
// against a full pod, and bounds it: at 5,000 MyApps x 2 pods the trimmed cache must stay
// under 24 MiB, and take a quarter of the full pods'
// heap at most. It fails when it cannot measure (a heap that did not grow).
func TestPodCacheFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap of 4,000 pods")
	}
	raw, err := json.Marshal(fullPod(t, 1, ""))
	if err != nil {
		t.Fatal(err)
	}
	full := heapPerPod(t, raw, false)
	trimmed := heapPerPod(t, raw, true)
	t.Logf("heap per cached pod: full %d B (JSON %d B), trimmed %d B; %d pods trimmed: %.1f MiB (full: %.1f MiB)",
		full, len(raw), trimmed, podsAtScale, float64(trimmed*podsAtScale)/(1<<20), float64(full*podsAtScale)/(1<<20))
	if trimmed*podsAtScale > 24<<20 {
		t.Errorf("the trimmed pod cache would take %d B at %d pods, more than 24 MiB", trimmed*podsAtScale, podsAtScale)
	}
	if full < 4*trimmed {
		t.Errorf("trimming saves too little: %d B per full pod, %d B trimmed", full, trimmed)
	}
}

// heapPerPod decodes podsMeasured pods from raw, as the informer does, keeps them (trimmed or
// not) as the cache would, and returns the live heap they hold, per pod.
func heapPerPod(t *testing.T, raw []byte, trim bool) int {
	kept := make([]any, podsMeasured)
	before := liveHeap()
	for i := range kept {
		pod := &corev1.Pod{}
		if err := json.Unmarshal(raw, pod); err != nil {
			t.Fatal(err)
		}
		kept[i] = pod
		if trim {
			kept[i], _ = trimPod(pod)
		}
	}
	after := liveHeap()
	runtime.KeepAlive(kept)
	if after <= before {
		t.Fatalf("cannot measure: the live heap did not grow (%d B before, %d B after)", before, after)
	}
	return int(after-before) / podsMeasured
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestPodProblemChanged: a pod's events reconcile its MyApp only when the problems the
// status reports change.
func TestPodProblemChanged(t *testing.T) {
	trimmed := func(waiting string) *corev1.Pod {
		p, _ := trimPod(fullPod(t, 0, waiting))
		return p.(*corev1.Pod)
	}
	ok, bad, pull, back := trimmed(""), trimmed("CreateContainerConfigError"), trimmed("ErrImagePull"), trimmed("ImagePullBackOff")
	newer := func(p *corev1.Pod) *corev1.Pod { p = p.DeepCopy(); p.ResourceVersion += "1"; return p }
	unready := newer(ok)
	unready.Status.Conditions = nil
	deleting := newer(bad)
	deleting.DeletionTimestamp = ptrTo(metav1.Now())
	cases := []struct {
		name     string
		old, new *corev1.Pod
		want     bool
	}{
		{"a healthy pod changes", ok, newer(ok), false},
		{"a container starts failing", ok, bad, true},
		{"a container is fixed", bad, ok, true},
		{"the same problem again", bad, newer(bad), false},
		{"the kubelet moves from ErrImagePull to ImagePullBackOff", pull, back, true},
		{"a pod with a problem is being deleted", bad, deleting, true},
		{"a pod becomes ready (a problem it had is over)", unready, ok, true},
		{"a ready pod stops being ready", ok, unready, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(podProblemChanged.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new})).To(Equal(tc.want))
		})
	}
	g := NewWithT(t)
	g.Expect(podProblemChanged.Create(event.CreateEvent{Object: ok})).To(BeFalse())
	g.Expect(podProblemChanged.Create(event.CreateEvent{Object: bad})).To(BeTrue())
	g.Expect(podProblemChanged.Delete(event.DeleteEvent{Object: ok})).To(BeFalse())
	g.Expect(podProblemChanged.Delete(event.DeleteEvent{Object: bad})).To(BeTrue())
	g.Expect(myAppOfPod(t.Context(), bad)).To(ConsistOf(HaveField("NamespacedName", types.NamespacedName{Namespace: "shop", Name: "web-00000"})))
}
