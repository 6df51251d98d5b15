package ssa

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

func deploymentIntent(name, image string) *appsv1ac.DeploymentApplyConfiguration {
	labels := map[string]string{"app": name}
	return appsv1ac.Deployment(name, "default").WithLabels(labels).WithSpec(appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
			WithContainers(corev1ac.Container().WithName("app").WithImage(image)))))
}

// TestApplyNeverChangesTheIntent: the API server's answer (server-set fields, defaults,
// managedFields) lands in the object passed in, never in the apply configuration, which can
// be compared or applied again after the call.
func TestApplyNeverChangesTheIntent(t *testing.T) {
	g := NewWithT(t)
	cfg := deploymentIntent("intent", "nginx:1.27")
	before, err := json.Marshal(cfg)
	g.Expect(err).NotTo(HaveOccurred())

	obj := &appsv1.Deployment{}
	g.Expect(Apply(t.Context(), k8s, cfg, obj, "tester", true)).To(Succeed())
	after, err := json.Marshal(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(after)).To(Equal(string(before)))
	g.Expect(cfg.UID).To(BeNil())
	g.Expect(obj.UID).NotTo(BeEmpty(), "the answer is in obj")
	g.Expect(obj.Spec.Template.Spec.Containers[0].TerminationMessagePath).NotTo(BeEmpty(), "with the server's defaults")

	same, err := Carries(obj, cfg, appsv1ac.ExtractDeployment, "tester")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(same).To(BeTrue(), "the stored object carries the intent, compared as applied")
}

// TestApplyReplacesWhatObjHeld: nothing of what obj held survives the answer, even where the
// answer leaves a field out.
func TestApplyReplacesWhatObjHeld(t *testing.T) {
	g := NewWithT(t)
	obj := &appsv1.Deployment{}
	obj.Annotations = map[string]string{"stale": "yes"}
	obj.Status.ReadyReplicas, obj.Status.AvailableReplicas = 3, 3
	g.Expect(Apply(t.Context(), k8s, deploymentIntent("replaced", "nginx:1.27"), obj, "tester", true)).To(Succeed())
	g.Expect(obj.Annotations).NotTo(HaveKey("stale"))
	g.Expect(obj.Status.ReadyReplicas).To(BeZero())
	g.Expect(obj.Status.AvailableReplicas).To(BeZero())
}

// TestCarriesSeesOnlyTheManagersFields: another manager's change to a field the manager does
// not own makes no difference; a change of the manager's own field does.
func TestCarriesSeesOnlyTheManagersFields(t *testing.T) {
	g := NewWithT(t)
	cfg := deploymentIntent("carries", "nginx:1.27")
	obj := &appsv1.Deployment{}
	g.Expect(Apply(t.Context(), k8s, cfg, obj, "tester", true)).To(Succeed())

	other := appsv1ac.Deployment("carries", "default").WithAnnotations(map[string]string{"team": "shop"})
	g.Expect(Apply(t.Context(), k8s, other, obj, "someone", true)).To(Succeed())
	same, err := Carries(obj, cfg, appsv1ac.ExtractDeployment, "tester")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(same).To(BeTrue())

	image := appsv1ac.Deployment("carries", "default").WithSpec(appsv1ac.DeploymentSpec().WithTemplate(
		corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("app").WithImage("nginx:1.28")))))
	g.Expect(Apply(t.Context(), k8s, image, obj, "someone", true)).To(Succeed())
	same, err = Carries(obj, cfg, appsv1ac.ExtractDeployment, "tester")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(same).To(BeFalse(), "the image was taken from the manager")
	g.Expect(Owners(obj, "f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"app"}`, "f:image")).To(ConsistOf("someone"))
}

// TestWritten: an answer that carries the intent says so, and a change of the manager's fields
// is told from a change that left them as they were; an answer in which someone else's value
// replaced one the manager sent (what a mutating webhook does) does not carry the intent.
func TestWritten(t *testing.T) {
	g := NewWithT(t)
	cfg := deploymentIntent("written", "nginx:1.27")
	first := &appsv1.Deployment{}
	g.Expect(Apply(t.Context(), k8s, cfg, first, "tester", true)).To(Succeed())
	carries, changed, err := Written(&appsv1.Deployment{}, first, false, cfg, appsv1ac.ExtractDeployment, "tester")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(carries).To(BeTrue(), "a created object carries what created it")
	g.Expect(changed).To(BeTrue(), "a create is a change")

	again := &appsv1.Deployment{}
	g.Expect(Apply(t.Context(), k8s, cfg, again, "tester", true)).To(Succeed())
	carries, changed, err = Written(first, again, true, cfg, appsv1ac.ExtractDeployment, "tester")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(carries).To(BeTrue())
	g.Expect(changed).To(BeFalse(), "the same intent again changes nothing the manager owns")

	newer := deploymentIntent("written", "nginx:1.28")
	updated := &appsv1.Deployment{}
	g.Expect(Apply(t.Context(), k8s, newer, updated, "tester", true)).To(Succeed())
	carries, changed, err = Written(again, updated, true, newer, appsv1ac.ExtractDeployment, "tester")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(carries).To(BeTrue())
	g.Expect(changed).To(BeTrue(), "the image moved")

	image := appsv1ac.Deployment("written", "default").WithSpec(appsv1ac.DeploymentSpec().WithTemplate(
		corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("app").WithImage("nginx:1.29")))))
	mutated := &appsv1.Deployment{}
	g.Expect(Apply(t.Context(), k8s, image, mutated, "webhook", true)).To(Succeed())
	carries, _, err = Written(updated, mutated, true, newer, appsv1ac.ExtractDeployment, "tester")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(carries).To(BeFalse(), "another manager's value replaced the one sent")
}

// TestApplyWithoutForceDoesNotTakeOver: an apply that is not forced conflicts with another
// manager's value instead of taking the field.
func TestApplyWithoutForceDoesNotTakeOver(t *testing.T) {
	g := NewWithT(t)
	obj := &appsv1.Deployment{}
	g.Expect(Apply(t.Context(), k8s, deploymentIntent("theirs", "nginx:1.27"), obj, "someone", true)).To(Succeed())
	err := Apply(t.Context(), k8s, deploymentIntent("theirs", "nginx:1.28"), obj, "tester", false)
	g.Expect(err).To(MatchError(ContainSubstring("conflict")))
	g.Expect(k8s.Get(t.Context(), keyOf(obj), obj)).To(Succeed())
	g.Expect(obj.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.27"))
	g.Expect(obj.Spec.Template.Spec.Containers[0].ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
}

// TestApplyAtRefusesANewerObject: an apply guarded by the resourceVersion it was decided from
// lands only on that version; once the object moved on, the API server refuses it, and the
// intent sent stays unchanged.
func TestApplyAtRefusesANewerObject(t *testing.T) {
	g := NewWithT(t)
	obj := &appsv1.Deployment{}
	g.Expect(Apply(t.Context(), k8s, deploymentIntent("guarded", "nginx:1.27"), obj, "tester", true)).To(Succeed())
	seen := obj.ResourceVersion
	g.Expect(Apply(t.Context(), k8s, deploymentIntent("guarded", "nginx:1.28"), obj, "someone", true)).To(Succeed())

	intent := deploymentIntent("guarded", "nginx:1.29")
	err := ApplyAt(t.Context(), k8s, intent, &appsv1.Deployment{}, "tester", true, seen)
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "an apply decided from an older version: %v", err)
	g.Expect(intent.ResourceVersion).To(BeNil(), "the intent is not changed")
	g.Expect(k8s.Get(t.Context(), keyOf(obj), obj)).To(Succeed())
	g.Expect(obj.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.28"))

	g.Expect(ApplyAt(t.Context(), k8s, intent, obj, "tester", true, obj.ResourceVersion)).To(Succeed())
	g.Expect(obj.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.29"))
}

// sampleIntent is a Deployment intent the size of the operator's for a sample MyApp: labels,
// a selector, a strategy, one container with a port, a probe, resources and the restricted
// security defaults.
func sampleIntent(name string) *appsv1ac.DeploymentApplyConfiguration {
	labels := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/instance": name,
		"app.kubernetes.io/managed-by": "myapp-operator"}
	container := corev1ac.Container().WithName("app").WithImage("nginx:1.27").
		WithPorts(corev1ac.ContainerPort().WithName("http").WithContainerPort(8080).WithProtocol(corev1.ProtocolTCP)).
		WithReadinessProbe(corev1ac.Probe().WithTCPSocket(corev1ac.TCPSocketAction().WithPort(intstr.FromString("http")))).
		WithResources(corev1ac.ResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}).
			WithLimits(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")})).
		WithSecurityContext(corev1ac.SecurityContext().WithAllowPrivilegeEscalation(false).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")))
	return appsv1ac.Deployment(name, "default").WithLabels(labels).
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("example.com/v1").WithKind("MyApp").
			WithName(name).WithUID("0b8f3c2e-5d7a-4b1e-9c6f-2a4d8e1f7b3c").WithController(true).WithBlockOwnerDeletion(true)).
		WithSpec(appsv1ac.DeploymentSpec().WithReplicas(2).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
			WithStrategy(appsv1ac.DeploymentStrategy().WithType(appsv1.RollingUpdateDeploymentStrategyType).
				WithRollingUpdate(appsv1ac.RollingUpdateDeployment().WithMaxSurge(intstr.FromString("25%")).WithMaxUnavailable(intstr.FromInt32(0)))).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
				WithSecurityContext(corev1ac.PodSecurityContext().WithRunAsNonRoot(true).
					WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
				WithContainers(container))))
}

// BenchmarkCarries is what telling whether a stored Deployment carries an intent costs: the
// read-back of the manager's fields from its managedFields, and the comparison.
func BenchmarkCarries(b *testing.B) {
	cfg := sampleIntent("bench-carries")
	obj := &appsv1.Deployment{}
	if err := Apply(b.Context(), k8s, cfg, obj, "tester", true); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if same, err := Carries(obj, cfg, appsv1ac.ExtractDeployment, "tester"); err != nil || !same {
			b.Fatalf("carries: %v, %v", same, err)
		}
	}
}

// BenchmarkDigestOf is what naming the same intent by its digest costs, which is what the
// reconciler pays instead of Carries for a child it already saw carrying the intent.
func BenchmarkDigestOf(b *testing.B) {
	cfg := sampleIntent("bench-digest")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DigestOf(cfg); err != nil {
			b.Fatal(err)
		}
	}
}
