package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

// otherEditor is the field manager of the client that edits the operator's children beside it.
const otherEditor = "e2e-other-editor"

var _ = Describe("Faults: another client edits the children", Ordered, Serial, func() {
	It("takes back the fields the operator owns and leaves the other client's fields alone", func() {
		op := startOperator("faults-editor")
		Eventually(op.isLeader).WithTimeout(60 * time.Second).Should(BeTrue())
		ns := newNamespace()
		fixed := myAppSpec(ns, "fixed", 3) // a disruption budget, replicas from the MyApp
		fixed.Spec.Replicas = ptr(int32(2))
		scaled := myAppSpec(ns, "scaled", 4) // an autoscaler owns the replica count
		scaled.Spec.AutoScaling.MinReplicas, scaled.Spec.AutoScaling.MaxReplicas = ptr(int32(2)), ptr(int32(3))
		createMyApp(fixed)
		createMyApp(scaled)
		Eventually(func(g Gomega) { expectExactChildren(g, ns) }).Should(Succeed())

		By("editing both MyApps' children from another client while the operator reconciles a new image")
		const rounds = 12
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			for round := range rounds {
				for _, name := range []string{"fixed", "scaled"} {
					editChildren(ns, name, round, name == "fixed")
				}
			}
		}()
		updateMyApp(ns, "fixed", func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
		updateMyApp(ns, "scaled", func(a *examplev1.MyApp) { a.Spec.Image = "nginx:1.28" })
		Eventually(done).WithTimeout(3 * time.Minute).Should(BeClosed())

		By("converging the operator's fields to the MyApps' spec")
		Eventually(func(g Gomega) {
			expectExactChildren(g, ns)
			for _, name := range []string{"fixed", "scaled"} {
				d := getDeployment(g, ns, name)
				g.Expect(d.Labels).To(HaveKeyWithValue(desired.LabelName, name))
				g.Expect(d.Spec.Template.Spec.Containers[0].Ports).To(ConsistOf(HaveField("ContainerPort", int32(8080))))
				svc := &corev1.Service{}
				g.Expect(k8s.Get(ctx, key(ns, name), svc)).To(Succeed())
				g.Expect(svc.Labels).To(HaveKeyWithValue(desired.LabelName, name))
				g.Expect(svc.Spec.Ports).To(ConsistOf(And(HaveField("Port", int32(8080)), HaveField("TargetPort", intstr.FromString(desired.PortName)))))
			}
			hpa := &autoscalingv2.HorizontalPodAutoscaler{}
			g.Expect(k8s.Get(ctx, key(ns, "scaled"), hpa)).To(Succeed())
			g.Expect(hpa.Spec.MaxReplicas).To(Equal(int32(3)))
			pdb := &policyv1.PodDisruptionBudget{}
			g.Expect(k8s.Get(ctx, key(ns, "fixed"), pdb)).To(Succeed())
			g.Expect(pdb.Spec.MaxUnavailable).To(HaveValue(Equal(intstr.FromInt32(1))))
		}).WithTimeout(2 * time.Minute).Should(Succeed())
		expectReady(ns, "fixed", 2)

		By("keeping the other client's fields")
		last := fmt.Sprint(rounds - 1)
		for _, name := range []string{"fixed", "scaled"} {
			d := getDeployment(Default, ns, name)
			Expect(d.Labels).To(HaveKeyWithValue("other.example.com/team", "blue"))
			Expect(d.Annotations).To(HaveKeyWithValue("other.example.com/round", last))
			Expect(d.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "OTHER_EDITOR", Value: last}))
			svc := &corev1.Service{}
			Expect(k8s.Get(ctx, key(ns, name), svc)).To(Succeed())
			Expect(svc.Labels).To(HaveKeyWithValue("other.example.com/team", "blue"))
			Expect(svc.Annotations).To(HaveKeyWithValue("other.example.com/round", last))
		}
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		Expect(k8s.Get(ctx, key(ns, "scaled"), hpa)).To(Succeed())
		Expect(hpa.Annotations).To(HaveKeyWithValue("other.example.com/round", last))
		pdb := &policyv1.PodDisruptionBudget{}
		Expect(k8s.Get(ctx, key(ns, "fixed"), pdb)).To(Succeed())
		Expect(pdb.Annotations).To(HaveKeyWithValue("other.example.com/round", last))

		By("not fighting the other client once it stopped: no more writes to the children's specs")
		// The fixed Deployment's generation; for the autoscaled one its pod template (the
		// autoscaler may still move its replicas, which bumps the generation) and the
		// autoscaler's generation.
		fixedGen := getDeployment(Default, ns, "fixed").Generation
		scaledTemplate := getDeployment(Default, ns, "scaled").Spec.Template
		hpaGen := hpa.Generation
		Consistently(func(g Gomega) {
			g.Expect(getDeployment(g, ns, "fixed").Generation).To(Equal(fixedGen))
			g.Expect(equality.Semantic.DeepEqual(getDeployment(g, ns, "scaled").Spec.Template, scaledTemplate)).To(BeTrue(), "the scaled Deployment's template changed")
			h := &autoscalingv2.HorizontalPodAutoscaler{}
			g.Expect(k8s.Get(ctx, key(ns, "scaled"), h)).To(Succeed())
			g.Expect(h.Generation).To(Equal(hpaGen))
		}, 5*time.Second, 500*time.Millisecond).Should(Succeed())
		op.expectNoPanic()
	})
})

// editChildren is one round of the other client's edits to a MyApp's children: conflicting
// writes to fields the operator owns (image, replicas when not autoscaled, the port
// numbers, the app.kubernetes.io/name label, the autoscaler's bound, the budget) mixed with
// writes to fields it does not (an annotation, a label of its own, an env var in the
// operator's container). Each write is retried until it lands, as a controller would.
func editChildren(ns, name string, round int, ownsReplicas bool) {
	r := fmt.Sprint(round)
	meta := fmt.Sprintf(`"metadata":{"labels":{%q:"hijacked",%q:"blue"},"annotations":{%q:%q}}`,
		desired.LabelName, "other.example.com/team", "other.example.com/round", r)
	replicas := ""
	if ownsReplicas {
		replicas = `"replicas":7,`
	}
	patch(ns, name, &appsv1.Deployment{}, types.StrategicMergePatchType, fmt.Sprintf(
		`{%s,"spec":{%s"template":{"spec":{"containers":[{"name":%q,"image":"example.com/hijacked:%d","env":[{"name":"OTHER_EDITOR","value":%q}]}]}}}}`,
		meta, replicas, desired.ContainerName, round, r))
	patch(ns, name, &appsv1.Deployment{}, types.JSONPatchType,
		`[{"op":"replace","path":"/spec/template/spec/containers/0/ports/0/containerPort","value":9090}]`)
	patch(ns, name, &corev1.Service{}, types.StrategicMergePatchType, "{"+meta+"}")
	patch(ns, name, &corev1.Service{}, types.JSONPatchType,
		`[{"op":"replace","path":"/spec/ports/0/port","value":9090}]`)
	annotation := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}`, "other.example.com/round", r)
	if ownsReplicas {
		patch(ns, name, &policyv1.PodDisruptionBudget{}, types.MergePatchType, annotation+`,"spec":{"maxUnavailable":3}}`)
	} else {
		patch(ns, name, &autoscalingv2.HorizontalPodAutoscaler{}, types.MergePatchType, annotation+`,"spec":{"maxReplicas":9}}`)
	}
}

// patch applies a patch as the other client, retrying until the API server takes it (a JSON
// patch can meet an object the operator is changing).
func patch(ns, name string, obj client.Object, pt types.PatchType, body string) {
	Eventually(func(g Gomega) {
		o := obj.DeepCopyObject().(client.Object)
		o.SetNamespace(ns)
		o.SetName(name)
		g.Expect(k8s.Patch(ctx, o, client.RawPatch(pt, []byte(body)), client.FieldOwner(otherEditor))).To(Succeed())
	}).WithTimeout(30*time.Second).Should(Succeed(), "%T %s/%s: %s", obj, ns, name, body)
}
