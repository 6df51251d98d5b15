package controller

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
)

// TestReplaceFromApplied: what the API server answers replaces the object whole; nothing of
// the cached copy survives, even where the answer omits a field.
func TestReplaceFromApplied(t *testing.T) {
	g := NewWithT(t)
	cached := &appsv1.Deployment{}
	cached.Name = "web"
	cached.Annotations = map[string]string{"removed": "since"}
	cached.Status.ReadyReplicas, cached.Status.AvailableReplicas = 3, 3

	answer := appsv1ac.Deployment("web", "shop").WithStatus(appsv1ac.DeploymentStatus().WithReplicas(3))
	g.Expect(replaceFromApplied(answer, cached)).To(Succeed())

	g.Expect(cached.Namespace).To(Equal("shop"))
	g.Expect(cached.Status.Replicas).To(Equal(int32(3)))
	g.Expect(cached.Status.ReadyReplicas).To(BeZero())
	g.Expect(cached.Status.AvailableReplicas).To(BeZero())
	g.Expect(cached.Annotations).To(BeEmpty())
}
