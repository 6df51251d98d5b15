package ssa

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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
