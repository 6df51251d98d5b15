package controller

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

// The stories play the deployment controller for both Deployments (currentReplicaSet, rollOut)
// and the kubelet (createPodOf, setWaiting); without a Gateway the canary's share is its pods'
// among the MyApp's.
var _ = Describe("Canary releases", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	image := func(name string) func(Gomega) string {
		return func(g Gomega) string { return container(g, getDeployment(ns, name)(g)).Image }
	}
	canaryOf := func(g Gomega) *examplev1.CanaryStatus {
		c := getMyApp(ns, "web")(g).Status.Canary
		g.Expect(c).NotTo(BeNil(), "a canary is recorded")
		return c
	}
	// readyOn makes the MyApp's current template Ready and returns its pod-template-hash once
	// the status records it.
	readyOn := func() string {
		GinkgoHelper()
		hash := currentReplicaSet(ns, "web")
		rollOut(ns, "web")
		Eventually(func(g Gomega) string { return getMyApp(ns, "web")(g).Status.ReadyTemplate }).Should(Equal(hash))
		return hash
	}
	// canaryServes plays the deployment controller for the canary Deployment at its current
	// spec: its ReplicaSet, and every pod it asks for available.
	canaryServes := func() {
		GinkgoHelper()
		currentReplicaSet(ns, desired.CanaryName(&examplev1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: "web"}}))
		rollOut(ns, "web-canary")
	}
	withCanary := func(steps ...examplev1.CanaryStep) func(*examplev1.MyApp) {
		return func(a *examplev1.MyApp) {
			a.Spec.Replicas = ptrTo(int32(4))
			a.Spec.Canary = &examplev1.Canary{Steps: steps}
		}
	}
	weight := func(w int32) examplev1.CanaryStep { return examplev1.CanaryStep{SetWeight: ptrTo(w)} }
	pause := func(d string) examplev1.CanaryStep {
		p := &examplev1.CanaryPause{}
		if d != "" {
			p.Duration = ptrTo(d)
		}
		return examplev1.CanaryStep{Pause: p}
	}
	setImage := func(app *examplev1.MyApp, img string) {
		GinkgoHelper()
		updateMyApp(app, func(a *examplev1.MyApp) { a.Spec.Image = img })
	}

	It("adds no child and restarts nothing for spec.canary alone, and rolls out a MyApp's first release as without it", func() {
		app := createMyApp(ns, "web", withCanary(weight(25), pause("")))
		stable := readyOn()
		Consistently(func(g Gomega) {
			g.Expect(getMyApp(ns, "web")(g).Status.Canary).To(BeNil())
			err := k8s.Get(suiteCtx, key(ns, "web-canary"), &appsv1.Deployment{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no canary Deployment: %v", err)
		}, 2*resyncPeriod, 200*time.Millisecond).Should(Succeed())
		Expect(getMyApp(ns, "web")(Default).Status.ReadyTemplate).To(Equal(stable))
		Expect(app.Spec.Canary.Steps).To(HaveLen(2))
	})

	It("runs the steps beside the stable pods, which keep their template, then promotes the canary and ends it", func() {
		app := createMyApp(ns, "web", withCanary(weight(25), pause("1s"), weight(50), pause("")))
		stable := readyOn()

		By("a new image: a canary, the stable Deployment kept on the template that serves")
		setImage(app, "nginx:1.28")
		Eventually(func(g Gomega) {
			c := canaryOf(g)
			g.Expect(c.Phase).To(Equal("Progressing"))
			g.Expect(c.Size).To(Equal(int32(25)), "sized for the first weight")
			g.Expect(c.Weight).To(BeZero(), "no weight before the canary's pods serve")
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			d := getDeployment(ns, "web-canary")(g)
			g.Expect(*d.Spec.Replicas).To(Equal(int32(1)), "25% beside 4 stable pods: 4 x 25 / 75, rounded")
			g.Expect(container(g, d).Image).To(Equal("nginx:1.28"))
			g.Expect(d.Spec.Template.Labels).To(HaveKeyWithValue(desired.LabelTrack, desired.TrackCanary))
			g.Expect(d.Spec.Selector.MatchLabels).To(HaveKeyWithValue(desired.LabelTrack, desired.TrackCanary))
		}).Should(Succeed())
		Consistently(image("web"), 2*resyncPeriod, 200*time.Millisecond).Should(Equal("nginx:1.27"), "the stable pods keep their template")
		Expect(getMyApp(ns, "web")(Default).Status.ReadyTemplate).To(Equal(stable))
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			g.Expect(condition(g, a, examplev1.ConditionProgressing).Reason).To(Equal(examplev1.ReasonCanaryProgressing))
			g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(condition(g, a, examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())

		By("the canary's pods serve: the weight, then the timed pause, then the next size and weight")
		canaryServes()
		Eventually(func(g Gomega) {
			c := canaryOf(g)
			g.Expect(c.Size).To(Equal(int32(50)))
			g.Expect(c.Step).To(Equal(int32(2)))
		}).Should(Succeed())
		Eventually(func(g Gomega) int32 { return *getDeployment(ns, "web-canary")(g).Spec.Replicas }).Should(Equal(int32(4)))
		canaryServes()

		By("a pause without a duration waits for the user")
		Eventually(func(g Gomega) {
			c := canaryOf(g)
			g.Expect(c.Phase).To(Equal("Paused"))
			g.Expect(c.Weight).To(Equal(int32(50)))
			g.Expect(condition(g, getMyApp(ns, "web")(g), examplev1.ConditionProgressing).Reason).To(Equal(examplev1.ReasonCanaryPaused))
		}).Should(Succeed())
		Consistently(func(g Gomega) string { return canaryOf(g).Phase }, 2*resyncPeriod, 200*time.Millisecond).Should(Equal("Paused"))
		Expect(seriesOf(Default, ns)).To(HaveKeyWithValue("myapp_canary_weight", 50.0))

		By("resume: the canary is promoted, sized as the stable Deployment, and takes every request")
		controlCanary(app, "resume")
		Eventually(func(g Gomega) int32 { return *getDeployment(ns, "web-canary")(g).Spec.Replicas }).Should(Equal(int32(4)))
		canaryServes()
		Eventually(func(g Gomega) {
			c := canaryOf(g)
			g.Expect(c.Phase).To(Equal("Promoting"))
			g.Expect(c.Weight).To(Equal(int32(100)))
			g.Expect(c.StableMoved).To(BeTrue())
		}).Should(Succeed())

		By("the stable Deployment moves to the template, completes it, and the canary ends")
		Eventually(image("web")).Should(Equal("nginx:1.28"))
		next := readyOn()
		Expect(next).NotTo(Equal(stable))
		expectCanaryEnded(ns, "web")
		Expect(eventReasons(Default, app)).To(ContainElements("CanaryStarted", "CanaryStep", "CanaryPaused", "CanaryPromoting", "CanaryPromoted"))
	})

	It("aborts a canary whose pods crash-loop: no weight, its pods removed, the MyApp Stalled until the spec changes", func() {
		app := createMyApp(ns, "web", withCanary(weight(25), pause("")))
		stable := readyOn()
		setImage(app, "nginx:crashes")
		Eventually(func(g Gomega) int32 { return *getDeployment(ns, "web-canary")(g).Spec.Replicas }).Should(Equal(int32(1)))
		hash := currentReplicaSet(ns, "web-canary")
		setWaiting(createPodOfDeployment(ns, "web-canary", hash), "CrashLoopBackOff", "back-off 10s restarting failed container")

		By("the operator's own judge aborts it before any weight")
		Eventually(func(g Gomega) {
			a := getMyApp(ns, "web")(g)
			c := canaryOf(g)
			g.Expect(c.Phase).To(Equal("Aborted"))
			g.Expect(c.Weight).To(BeZero())
			g.Expect(c.Reason).To(Equal(examplev1.ReasonCrashLoopBackOff))
			g.Expect(c.Message).To(ContainSubstring("step 1 of 2"))
			stalled := condition(g, a, examplev1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(examplev1.ReasonCanaryAborted))
		}).Should(Succeed())
		Eventually(func(g Gomega) int32 { return *getDeployment(ns, "web-canary")(g).Spec.Replicas }).Should(BeZero())
		Expect(image("web")(Default)).To(Equal("nginx:1.27"))
		Expect(getMyApp(ns, "web")(Default).Status.ReadyTemplate).To(Equal(stable))

		By("it holds through resyncs and controls; a new template starts a canary again")
		controlCanary(app, "resume")
		Consistently(func(g Gomega) string { return canaryOf(g).Phase }, 2*resyncPeriod, 200*time.Millisecond).Should(Equal("Aborted"))
		setImage(app, "nginx:1.28")
		Eventually(func(g Gomega) {
			c := canaryOf(g)
			g.Expect(c.Phase).To(Equal("Progressing"))
			g.Expect(c.Size).To(Equal(int32(25)))
		}).Should(Succeed())
		Eventually(image("web-canary")).Should(Equal("nginx:1.28"))
	})

	It("takes the manual controls once each: pause, abort, and promote skips the steps left", func() {
		app := createMyApp(ns, "web", withCanary(weight(25), pause("1h"), weight(50)))
		readyOn()
		setImage(app, "nginx:1.28")
		Eventually(func(g Gomega) int32 { return canaryOf(g).Size }).Should(Equal(int32(25)))
		canaryServes()
		Eventually(func(g Gomega) int32 { return canaryOf(g).Step }).Should(Equal(int32(1)))

		By("promote: sized as the stable Deployment, every request, then the stable pods move")
		controlCanary(app, "promote")
		Eventually(func(g Gomega) int32 { return *getDeployment(ns, "web-canary")(g).Spec.Replicas }).Should(Equal(int32(4)))
		canaryServes()
		Eventually(func(g Gomega) bool { return canaryOf(g).StableMoved }).Should(BeTrue())
		Eventually(image("web")).Should(Equal("nginx:1.28"))

		By("a promotion not yet completed by the stable Deployment can still be aborted by hand")
		controlCanary(app, "abort")
		Eventually(func(g Gomega) {
			c := canaryOf(g)
			g.Expect(c.Phase).To(Equal("Aborted"))
			g.Expect(c.Reason).To(Equal("CanaryAbortedByUser"))
		}).Should(Succeed())
		Eventually(image("web")).Should(Equal("nginx:1.27"), "the stable pods return to the template that serves")

		By("the canary keeps every request and its pods until the stable Deployment runs them all again")
		Consistently(func(g Gomega) {
			c := canaryOf(g)
			g.Expect(c.Weight).To(Equal(int32(100)))
			g.Expect(*getDeployment(ns, "web-canary")(g).Spec.Replicas).To(Equal(int32(4)))
		}, 2*resyncPeriod, 200*time.Millisecond).Should(Succeed())
		currentReplicaSet(ns, "web")
		rollOut(ns, "web")
		Eventually(func(g Gomega) {
			g.Expect(canaryOf(g).Weight).To(BeZero())
			g.Expect(*getDeployment(ns, "web-canary")(g).Spec.Replicas).To(BeZero())
		}).Should(Succeed())

		By("the same value again acts on nothing; a suffix gives a control again")
		controlCanary(app, "abort")
		requestReconcile(app, "again")
		Eventually(func(g Gomega) string { return canaryOf(g).Phase }).Should(Equal("Progressing"))
		controlCanary(app, "pause/2")
		Eventually(func(g Gomega) string { return canaryOf(g).Phase }).Should(Equal("Paused"))
	})

	It("starts again at the first step with the newest template pushed mid-canary", func() {
		app := createMyApp(ns, "web", withCanary(weight(25), pause("1h")))
		readyOn()
		setImage(app, "nginx:1.28")
		Eventually(func(g Gomega) int32 { return canaryOf(g).Size }).Should(Equal(int32(25)))
		canaryServes()
		Eventually(func(g Gomega) int32 { return canaryOf(g).Step }).Should(Equal(int32(1)))
		first := canaryOf(Default).Template

		setImage(app, "nginx:1.29")
		Eventually(func(g Gomega) {
			c := canaryOf(g)
			g.Expect(c.Template).NotTo(Equal(first))
			g.Expect(c.Step).To(BeZero())
		}).Should(Succeed())
		Eventually(image("web-canary")).Should(Equal("nginx:1.29"))
		Expect(image("web")(Default)).To(Equal("nginx:1.27"))
	})

	It("gives a promotion that moved the stable pods up for a newer template: the stable pods return, then the new canary starts", func() {
		app := createMyApp(ns, "web", withCanary(weight(25), pause("")))
		readyOn()
		setImage(app, "nginx:1.28")
		Eventually(func(g Gomega) int32 { return canaryOf(g).Size }).Should(Equal(int32(25)))
		canaryServes()
		Eventually(func(g Gomega) string { return canaryOf(g).Phase }).Should(Equal("Paused"))
		controlCanary(app, "promote")
		Eventually(func(g Gomega) int32 { return *getDeployment(ns, "web-canary")(g).Spec.Replicas }).Should(Equal(int32(4)))
		canaryServes()
		Eventually(func(g Gomega) bool { return canaryOf(g).StableMoved }).Should(BeTrue())
		Eventually(image("web")).Should(Equal("nginx:1.28"))
		promoted := canaryOf(Default).Template

		By("a newer template: the stable pods return to the template that serves, the promoted canary keeps every request")
		setImage(app, "nginx:1.29")
		Eventually(image("web")).Should(Equal("nginx:1.27"))
		Consistently(func(g Gomega) {
			c := canaryOf(g)
			g.Expect(c.Template).To(Equal(promoted))
			g.Expect(c.Weight).To(Equal(int32(100)))
			d := getDeployment(ns, "web-canary")(g)
			g.Expect(*d.Spec.Replicas).To(Equal(int32(4)))
			g.Expect(container(g, d).Image).To(Equal("nginx:1.28"))
			g.Expect(condition(g, getMyApp(ns, "web")(g), examplev1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
		}, 2*resyncPeriod, 200*time.Millisecond).Should(Succeed())

		By("the stable pods all back: the requests go to them, then the newer template's canary starts at its first step")
		currentReplicaSet(ns, "web")
		rollOut(ns, "web")
		Eventually(func(g Gomega) {
			c := canaryOf(g)
			g.Expect(c.Template).NotTo(Equal(promoted))
			g.Expect(c.Step).To(BeZero())
			g.Expect(c.Phase).To(Equal("Progressing"))
		}).Should(Succeed())
		Eventually(image("web-canary")).Should(Equal("nginx:1.29"))
		Expect(image("web")(Default)).To(Equal("nginx:1.27"))
		Expect(eventReasons(Default, app)).NotTo(ContainElement("CanaryAborted"))
	})

	It("resumes where it was after a manager restart: the step is in the status", func() {
		app := createMyApp(ns, "web", func(a *examplev1.MyApp) {
			withCanary(weight(25), pause("1h"))(a)
			a.Labels = map[string]string{unwatchedLabel: "restarted"}
		})
		selectRestarted, err := labels.Parse(unwatchedLabel + "=restarted")
		Expect(err).NotTo(HaveOccurred())
		stop := startManager(managerOptions{myApps: selectRestarted})
		readyOn()
		setImage(app, "nginx:1.28")
		Eventually(func(g Gomega) int32 { return canaryOf(g).Size }).Should(Equal(int32(25)))
		canaryServes()
		// The size is recorded before the canary Deployment is applied with it: a rollout
		// reported in between is of the generation before, so the wait plays the deployment
		// controller again for every generation it has not observed.
		Eventually(func(g Gomega) int32 {
			if d := getDeployment(ns, "web-canary")(g); d.Status.ObservedGeneration != d.Generation {
				canaryServes()
			}
			return canaryOf(g).Step
		}).Should(Equal(int32(1)))
		before := canaryOf(Default)
		stop()

		startManager(managerOptions{myApps: selectRestarted})
		Consistently(func(g Gomega) *examplev1.CanaryStatus { return canaryOf(g) }, 2*resyncPeriod, 200*time.Millisecond).
			Should(Equal(before), "the pause goes on where it was: nothing recorded again")
		Expect(image("web")(Default)).To(Equal("nginx:1.27"))
		Expect(countEvents(Default, app, "CanaryStarted")).To(Equal(1))
	})
})

// controlCanary gives a manual control: it sets the MyApp's canary control annotation.
func controlCanary(app *examplev1.MyApp, value string) {
	GinkgoHelper()
	updateMyApp(app, func(a *examplev1.MyApp) {
		if a.Annotations == nil {
			a.Annotations = map[string]string{}
		}
		a.Annotations[examplev1.CanaryControlAnnotation] = value
	})
}

// expectCanaryEnded waits until the MyApp's canary ended: no canary recorded, Ready, and the
// canary Deployment gone.
func expectCanaryEnded(ns, name string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		a := getMyApp(ns, name)(g)
		g.Expect(a.Status.Canary).To(BeNil())
		g.Expect(condition(g, a, examplev1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		err := k8s.Get(suiteCtx, key(ns, name+"-canary"), &appsv1.Deployment{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the canary Deployment goes: %v", err)
	}).Should(Succeed())
}
