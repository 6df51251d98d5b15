package controller

import (
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/testutil"
)

func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "story-"}}
	Expect(k8s.Create(suiteCtx, ns)).To(Succeed())
	return ns.Name
}

func createMyApp(ns, name string, mutate func(*examplev1.MyApp)) *examplev1.MyApp {
	app := &examplev1.MyApp{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       examplev1.MyAppSpec{Image: "nginx:1.27", Replicas: ptrTo(int32(2))},
	}
	if mutate != nil {
		mutate(app)
	}
	Expect(k8s.Create(suiteCtx, app)).To(Succeed())
	return app
}

// updateMyApp changes the MyApp's spec, retrying on conflicts with the operator's status writes.
func updateMyApp(app *examplev1.MyApp, mutate func(*examplev1.MyApp)) {
	Eventually(func() error {
		if err := k8s.Get(suiteCtx, client.ObjectKeyFromObject(app), app); err != nil {
			return err
		}
		mutate(app)
		return k8s.Update(suiteCtx, app)
	}).Should(Succeed())
}

func key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

// get returns a poller that reads the named object of type T from the API server.
func get[T any, PT interface {
	*T
	client.Object
}](ns, name string) func(Gomega) PT {
	return func(g Gomega) PT {
		obj := PT(new(T))
		g.Expect(k8s.Get(suiteCtx, key(ns, name), obj)).To(Succeed())
		return obj
	}
}

var (
	getMyApp      = get[examplev1.MyApp]
	getDeployment = get[appsv1.Deployment]
	getService    = get[corev1.Service]
	getHPA        = get[autoscalingv2.HorizontalPodAutoscaler]
	getPDB        = get[policyv1.PodDisruptionBudget]
)

// container is the single container of a Deployment's pods.
func container(g Gomega, d *appsv1.Deployment) corev1.Container {
	g.Expect(d.Spec.Template.Spec.Containers).To(HaveLen(1))
	return d.Spec.Template.Spec.Containers[0]
}

// condition returns the MyApp's condition of that type, failing when it is missing.
func condition(g Gomega, app *examplev1.MyApp, typ string) metav1.Condition {
	c := meta.FindStatusCondition(app.Status.Conditions, typ)
	g.Expect(c).NotTo(BeNil(), "condition %s missing", typ)
	return *c
}

// rollOut plays the deployment controller: it reports the Deployment's current spec as fully
// rolled out and available, through the status subresource.
func rollOut(ns, name string) {
	reportDeploymentStatus(ns, name, func(want int32) (replicas, updated, available int32) { return want, want, want })
}

// keepRolledOut plays the deployment controller inside a poll: a Deployment whose latest
// generation is not observed yet is rolled out, as the real controller observes every
// generation. A wait for Ready after a change the operator carries out in more than one write
// (a replica hand-over applies twice) polls with it, so that the story does not depend on which
// write the test saw first.
func keepRolledOut(g Gomega, ns, name string) {
	if d := getDeployment(ns, name)(g); d.Status.ObservedGeneration != d.Generation {
		rollOut(ns, name)
	}
}

// reportDeploymentStatus plays the deployment controller: the Deployment's latest spec
// observed, with the counts counts gives for its spec.replicas (every pod of the current
// template; ready pods are the available ones) and Available True, as the controller reports
// it whenever maxUnavailable allows the available count.
func reportDeploymentStatus(ns, name string, counts func(want int32) (replicas, updated, available int32)) {
	Eventually(func(g Gomega) {
		d := getDeployment(ns, name)(g)
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		replicas, updated, available := counts(want)
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: updated,
			ReadyReplicas: available, AvailableReplicas: available,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
				Reason: "MinimumReplicasAvailable", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		}
		g.Expect(k8s.Status().Update(suiteCtx, d)).To(Succeed())
	}).Should(Succeed())
}

// eventReasons lists the reasons of the events recorded on the MyApp.
func eventReasons(g Gomega, app *examplev1.MyApp) []string {
	events := eventsOf(g, app)
	reasons := make([]string, 0, len(events))
	for _, e := range events {
		reasons = append(reasons, e.Reason)
	}
	return reasons
}

// eventsOf lists the events recorded on the MyApp.
func eventsOf(g Gomega, app *examplev1.MyApp) []corev1.Event {
	list := &corev1.EventList{}
	g.Expect(k8s.List(suiteCtx, list, client.InNamespace(app.Namespace))).To(Succeed())
	var events []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.UID == app.UID {
			events = append(events, e)
		}
	}
	return events
}

// editContainerPort changes, as someone editing by hand would, the number of the first port
// of the Deployment's first container: the edit only the operator's repair can undo.
func editContainerPort(ns, name string, port int32) {
	Eventually(func(g Gomega) {
		d := getDeployment(ns, name)(g)
		d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort = port
		g.Expect(k8s.Update(suiteCtx, d, client.FieldOwner("someone"))).To(Succeed())
	}).Should(Succeed())
}

// applyAsOperator server-side applies obj, a typed object with its TypeMeta set, as the
// operator's field manager, as an earlier release of the operator would have.
func applyAsOperator(obj client.Object) {
	Expect(testutil.ApplyAs(suiteCtx, k8s, obj, FieldOwner)).To(Succeed())
}
