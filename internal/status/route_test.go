package status

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

const (
	gatewayController = "example.com/gateway-controller"
	otherController   = "other.example.com/gateway-controller"
)

// TestRouteProblem: the MyApp reads the parent status of its own Gateway and listener only,
// written by the controller of the Gateway's class, for the route's current generation; both
// Accepted and ResolvedRefs True make it reachable, either False is a refusal that names the
// Gateway's reason (a BackendNotFound only once BackendGrace has passed), and anything else
// is waiting until AnswerDeadline after the route's spec was applied, then GatewayNotResponding.
func TestRouteProblem(t *testing.T) {
	gw := examplev1.GatewayReference{Namespace: "infra", Name: "public", SectionName: "https"}
	now := t0.Time
	applied := now.Add(-time.Minute)
	ref := func(ns, name, section string) gatewayv1.ParentReference {
		r := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(name)}
		if ns != "" {
			r.Namespace = ptrTo(gatewayv1.Namespace(ns))
		}
		if section != "" {
			r.SectionName = ptrTo(gatewayv1.SectionName(section))
		}
		return r
	}
	// conds are the Gateway's Accepted and ResolvedRefs for generation gen, "" leaving one out,
	// both with the reason and with transitions at since.
	condsSince := func(gen int64, accepted, resolved metav1.ConditionStatus, reason string, since time.Time) []metav1.Condition {
		var out []metav1.Condition
		if accepted != "" {
			out = append(out, metav1.Condition{Type: "Accepted", Status: accepted, Reason: reason, ObservedGeneration: gen,
				LastTransitionTime: metav1.NewTime(since)})
		}
		if resolved != "" {
			out = append(out, metav1.Condition{Type: "ResolvedRefs", Status: resolved, Reason: reason, ObservedGeneration: gen,
				LastTransitionTime: metav1.NewTime(since)})
		}
		return out
	}
	conds := func(gen int64, accepted, resolved metav1.ConditionStatus, reason string) []metav1.Condition {
		return condsSince(gen, accepted, resolved, reason, now.Add(-time.Hour))
	}
	ours := ref("infra", "public", "https")
	entry := func(parent gatewayv1.ParentReference, controller string, c []metav1.Condition) gatewayv1.RouteParentStatus {
		return gatewayv1.RouteParentStatus{ParentRef: parent, ControllerName: gatewayv1.GatewayController(controller), Conditions: c}
	}
	known := ParentController{Known: true, Name: gatewayController}
	cases := map[string]struct {
		parents []gatewayv1.RouteParentStatus
		// by is whose entries count (the Gateway's class's controller, known, by default).
		by *ParentController
		// applied is when the route's spec was applied (a minute ago by default).
		applied *time.Time
		// want is the reason of the problem; "" for none.
		want string
		// recheck is how soon the answer changes with time alone.
		recheck time.Duration
	}{
		"no status yet":                {want: examplev1.ReasonWaitingForGateway, recheck: AnswerDeadline - time.Minute},
		"accepted and resolved":        {parents: []gatewayv1.RouteParentStatus{entry(ours, gatewayController, conds(3, "True", "True", "Accepted"))}},
		"condition without generation": {parents: []gatewayv1.RouteParentStatus{entry(ours, gatewayController, conds(0, "True", "True", "Accepted"))}},
		"accepted, refs unknown": {parents: []gatewayv1.RouteParentStatus{entry(ours, gatewayController, conds(3, "True", "", "Accepted"))},
			want: examplev1.ReasonWaitingForGateway, recheck: AnswerDeadline - time.Minute},
		"of an older generation": {parents: []gatewayv1.RouteParentStatus{entry(ours, gatewayController, conds(2, "True", "True", "Accepted"))},
			want: examplev1.ReasonWaitingForGateway, recheck: AnswerDeadline - time.Minute},
		"refused by listeners": {parents: []gatewayv1.RouteParentStatus{entry(ours, gatewayController, conds(3, "False", "True", "NotAllowedByListeners"))},
			want: examplev1.ReasonRouteNotAccepted},
		"a reference not permitted": {parents: []gatewayv1.RouteParentStatus{entry(ours, gatewayController, conds(3, "True", "False", "RefNotPermitted"))},
			want: examplev1.ReasonRouteNotAccepted},
		"backend not found, for longer than the grace": {parents: []gatewayv1.RouteParentStatus{entry(ours, gatewayController,
			condsSince(3, "True", "False", "BackendNotFound", now.Add(-BackendGrace)))}, want: examplev1.ReasonRouteNotAccepted},
		"backend not found, for a moment": {parents: []gatewayv1.RouteParentStatus{entry(ours, gatewayController,
			condsSince(3, "True", "False", "BackendNotFound", now.Add(-BackendGrace+5*time.Second)))},
			want: examplev1.ReasonWaitingForGateway, recheck: 5 * time.Second},
		"backend not found, for a moment, past the answer deadline": {parents: []gatewayv1.RouteParentStatus{entry(ours, gatewayController,
			condsSince(3, "True", "False", "BackendNotFound", now.Add(-time.Second)))}, applied: ptrTo(now.Add(-time.Hour)),
			want: examplev1.ReasonWaitingForGateway, recheck: BackendGrace - time.Second},
		"backend not found, without a transition time": {parents: []gatewayv1.RouteParentStatus{entry(ours, gatewayController,
			condsSince(3, "True", "False", "BackendNotFound", time.Time{}))}, want: examplev1.ReasonRouteNotAccepted},
		"an old refusal": {parents: []gatewayv1.RouteParentStatus{entry(ours, gatewayController, conds(2, "False", "False", "NoMatchingParent"))},
			want: examplev1.ReasonWaitingForGateway, recheck: AnswerDeadline - time.Minute},
		"another listener's": {parents: []gatewayv1.RouteParentStatus{entry(ref("infra", "public", "http"), gatewayController, conds(3, "True", "True", "Accepted"))},
			want: examplev1.ReasonWaitingForGateway, recheck: AnswerDeadline - time.Minute},
		"another gateway's": {parents: []gatewayv1.RouteParentStatus{entry(ref("infra", "private", "https"), gatewayController, conds(3, "True", "True", "Accepted"))},
			want: examplev1.ReasonWaitingForGateway, recheck: AnswerDeadline - time.Minute},
		"a namespace left out": {parents: []gatewayv1.RouteParentStatus{entry(ref("", "public", "https"), gatewayController, conds(3, "True", "True", "Accepted"))},
			want: examplev1.ReasonWaitingForGateway, recheck: AnswerDeadline - time.Minute},
		"another kind of parent": {parents: []gatewayv1.RouteParentStatus{entry(func() gatewayv1.ParentReference {
			r := ours
			r.Kind = ptrTo(gatewayv1.Kind("ListenerSet"))
			return r
		}(), gatewayController, conds(3, "True", "True", "Accepted"))}, want: examplev1.ReasonWaitingForGateway, recheck: AnswerDeadline - time.Minute},

		// Entries are keyed by parentRef and controllerName: only the Gateway's own controller decides.
		"another controller refuses": {parents: []gatewayv1.RouteParentStatus{entry(ours, otherController, conds(3, "False", "True", "NotAllowedByListeners"))},
			want: examplev1.ReasonWaitingForGateway, recheck: AnswerDeadline - time.Minute},
		"another controller accepts": {parents: []gatewayv1.RouteParentStatus{entry(ours, otherController, conds(3, "True", "True", "Accepted"))},
			want: examplev1.ReasonWaitingForGateway, recheck: AnswerDeadline - time.Minute},
		"the Gateway's controller accepts, another refuses": {parents: []gatewayv1.RouteParentStatus{
			entry(ours, otherController, conds(3, "False", "True", "NotAllowedByListeners")), entry(ours, gatewayController, conds(3, "True", "True", "Accepted"))}},
		"the Gateway's controller refuses, another accepts": {parents: []gatewayv1.RouteParentStatus{
			entry(ours, otherController, conds(3, "True", "True", "Accepted")), entry(ours, gatewayController, conds(3, "False", "True", "NotAllowedByListeners"))},
			want: examplev1.ReasonRouteNotAccepted},
		"no Gateway or class: no entry counts": {parents: []gatewayv1.RouteParentStatus{entry(ours, gatewayController, conds(3, "True", "True", "Accepted"))},
			by: &ParentController{Known: true}, want: examplev1.ReasonWaitingForGateway, recheck: AnswerDeadline - time.Minute},
		"the class unknown: any controller's entry counts": {parents: []gatewayv1.RouteParentStatus{entry(ours, otherController, conds(3, "True", "True", "Accepted"))},
			by: &ParentController{}},
		"the class unknown: any controller accepting wins": {parents: []gatewayv1.RouteParentStatus{
			entry(ours, otherController, conds(3, "False", "True", "NotAllowedByListeners")), entry(ours, gatewayController, conds(3, "True", "True", "Accepted"))},
			by: &ParentController{}},

		// The deadline of an answer.
		"no answer, just before the deadline": {applied: ptrTo(now.Add(-AnswerDeadline + time.Second)), want: examplev1.ReasonWaitingForGateway, recheck: time.Second},
		"no answer at the deadline":           {applied: ptrTo(now.Add(-AnswerDeadline)), want: examplev1.ReasonGatewayNotResponding},
		"another controller's answer only, past the deadline": {parents: []gatewayv1.RouteParentStatus{entry(ours, otherController, conds(3, "True", "True", "Accepted"))},
			applied: ptrTo(now.Add(-time.Hour)), want: examplev1.ReasonGatewayNotResponding},
		"an older generation's answer, past the deadline": {parents: []gatewayv1.RouteParentStatus{entry(ours, gatewayController, conds(2, "True", "True", "Accepted"))},
			applied: ptrTo(now.Add(-time.Hour)), want: examplev1.ReasonGatewayNotResponding},
		"a refusal, past the deadline": {parents: []gatewayv1.RouteParentStatus{entry(ours, gatewayController, conds(3, "False", "True", "NotAllowedByListeners"))},
			applied: ptrTo(now.Add(-time.Hour)), want: examplev1.ReasonRouteNotAccepted},
		"no time to count from": {applied: &time.Time{}, want: examplev1.ReasonWaitingForGateway},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 3}}
			route.Status.Parents = tc.parents
			by, at := known, applied
			if tc.by != nil {
				by = *tc.by
			}
			if tc.applied != nil {
				at = *tc.applied
			}
			got, recheck := RouteProblem(route, gw, by, at, now)
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("want no problem, got %+v", got)
			case tc.want != "" && (got == nil || got.Reason != tc.want):
				t.Fatalf("want %s, got %+v", tc.want, got)
			case recheck != tc.recheck:
				t.Fatalf("want a recheck in %s, got %s", tc.recheck, recheck)
			case got == nil:
				return
			case got.Terminal != (got.Reason != examplev1.ReasonWaitingForGateway):
				t.Fatalf("only a refusal or no answer is terminal: %+v", got)
			case got.Reason == examplev1.ReasonRouteNotAccepted && !containsAll(got.Message, "infra/public", lastReason(tc.parents)):
				t.Fatalf("the message must name the Gateway and its reason: %q", got.Message)
			case got.Reason == examplev1.ReasonGatewayNotResponding &&
				!containsAll(got.Message, "infra/public", "web", "kubectl get gateway -n infra public", "gatewayclass"):
				t.Fatalf("the message must name the Gateway and what to check: %q", got.Message)
			}
		})
	}
}

// lastReason is the reason of the last entry's first condition: the one the cases that refuse
// put last.
func lastReason(parents []gatewayv1.RouteParentStatus) string {
	return parents[len(parents)-1].Conditions[0].Reason
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// TestRouteProblemMessagesAreStable: the messages a waiting route makes do not change as time
// passes, so that the status does not churn while it waits.
func TestRouteProblemMessagesAreStable(t *testing.T) {
	gw := examplev1.GatewayReference{Namespace: "infra", Name: "public"}
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 1}}
	applied := t0.Time
	seen := map[string]string{}
	for at := applied; at.Before(applied.Add(2 * AnswerDeadline)); at = at.Add(7 * time.Second) {
		f, _ := RouteProblem(route, gw, ParentController{}, applied, at)
		if m, ok := seen[f.Reason]; ok && m != f.Message {
			t.Fatalf("%s: %q, then %q", f.Reason, m, f.Message)
		}
		seen[f.Reason] = f.Message
	}
	if len(seen) != 2 {
		t.Fatalf("want WaitingForGateway then GatewayNotResponding, got %v", seen)
	}
}

// TestRouteAcceptedAt: the time the MyApp's own Gateway's controller last reported the route's
// current generation accepted and resolved, the later of the two transitions; zero otherwise.
func TestRouteAcceptedAt(t *testing.T) {
	gw := examplev1.GatewayReference{Namespace: "infra", Name: "public"}
	ours := gatewayv1.ParentReference{Namespace: ptrTo(gatewayv1.Namespace("infra")), Name: "public"}
	theirs := gatewayv1.ParentReference{Namespace: ptrTo(gatewayv1.Namespace("infra")), Name: "private"}
	t1 := metav1.NewTime(metav1.Now().Add(-time.Minute).Truncate(time.Second))
	t2 := metav1.NewTime(t1.Add(5 * time.Second))
	cond := func(typ string, status metav1.ConditionStatus, gen int64, at metav1.Time) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, ObservedGeneration: gen, LastTransitionTime: at, Reason: "R"}
	}
	by := ParentController{Known: true, Name: gatewayController}
	cases := map[string]struct {
		parents []gatewayv1.RouteParentStatus
		want    time.Time
	}{
		"no status": {},
		"accepted, then resolved": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, ControllerName: gatewayController, Conditions: []metav1.Condition{
			cond("Accepted", "True", 3, t1), cond("ResolvedRefs", "True", 3, t2)}}}, want: t2.Time},
		"resolved, then accepted": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, ControllerName: gatewayController, Conditions: []metav1.Condition{
			cond("Accepted", "True", 3, t2), cond("ResolvedRefs", "True", 3, t1)}}}, want: t2.Time},
		"refused": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, ControllerName: gatewayController, Conditions: []metav1.Condition{
			cond("Accepted", "False", 3, t1), cond("ResolvedRefs", "True", 3, t1)}}}},
		"an older generation": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, ControllerName: gatewayController, Conditions: []metav1.Condition{
			cond("Accepted", "True", 2, t1), cond("ResolvedRefs", "True", 2, t1)}}}},
		"another Gateway's": {parents: []gatewayv1.RouteParentStatus{{ParentRef: theirs, ControllerName: gatewayController, Conditions: []metav1.Condition{
			cond("Accepted", "True", 3, t1), cond("ResolvedRefs", "True", 3, t1)}}}},
		"another controller's": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, ControllerName: otherController, Conditions: []metav1.Condition{
			cond("Accepted", "True", 3, t1), cond("ResolvedRefs", "True", 3, t1)}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 3}}
			route.Status.Parents = tc.parents
			if got := RouteAcceptedAt(route, gw, by); !got.Equal(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRouteServed: a route the MyApp no longer applies served if the Gateway's controller
// accepted any generation of it, and not if it refused it or only another controller spoke.
func TestRouteServed(t *testing.T) {
	gw := examplev1.GatewayReference{Namespace: "infra", Name: "public"}
	ours := gatewayv1.ParentReference{Namespace: ptrTo(gatewayv1.Namespace("infra")), Name: "public"}
	cond := func(typ string, status metav1.ConditionStatus, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, ObservedGeneration: gen, Reason: "R"}
	}
	by := ParentController{Known: true, Name: gatewayController}
	cases := map[string]struct {
		parents []gatewayv1.RouteParentStatus
		want    bool
	}{
		"no status": {},
		"accepted, the current generation": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, ControllerName: gatewayController,
			Conditions: []metav1.Condition{cond("Accepted", "True", 3), cond("ResolvedRefs", "True", 3)}}}, want: true},
		"accepted, an older generation": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, ControllerName: gatewayController,
			Conditions: []metav1.Condition{cond("Accepted", "True", 2), cond("ResolvedRefs", "True", 2)}}}, want: true},
		"refused": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, ControllerName: gatewayController,
			Conditions: []metav1.Condition{cond("Accepted", "False", 3), cond("ResolvedRefs", "True", 3)}}}},
		"backend not found": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, ControllerName: gatewayController,
			Conditions: []metav1.Condition{cond("Accepted", "True", 3), cond("ResolvedRefs", "False", 3)}}}},
		"accepted by another controller": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, ControllerName: otherController,
			Conditions: []metav1.Condition{cond("Accepted", "True", 3), cond("ResolvedRefs", "True", 3)}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 3}}
			route.Status.Parents = tc.parents
			if got := RouteServed(route, gw, by); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRouteParent: the Gateway a route attaches to, as a MyApp names it.
func TestRouteParent(t *testing.T) {
	g := NewWithT(t)
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	_, ok := RouteParent(route)
	g.Expect(ok).To(BeFalse(), "no parent")
	route.Spec.ParentRefs = []gatewayv1.ParentReference{
		{Kind: ptrTo(gatewayv1.Kind("Service")), Group: ptrTo(gatewayv1.Group("")), Name: "mesh"},
		{Name: "public", SectionName: ptrTo(gatewayv1.SectionName("http"))},
	}
	gw, ok := RouteParent(route)
	g.Expect(ok).To(BeTrue())
	g.Expect(gw).To(Equal(examplev1.GatewayReference{Namespace: "shop", Name: "public", SectionName: "http"}), "the route's namespace when left out")
	route.Spec.ParentRefs[1].Namespace = ptrTo(gatewayv1.Namespace("infra"))
	gw, _ = RouteParent(route)
	g.Expect(gw.Namespace).To(Equal("infra"))
}

// TestExposureStatuses: what each answer about the exposure makes of the MyApp's conditions,
// and what kstatus (Flux, kpt; Argo CD's health check reads the same conditions) reports of it.
// A route waiting is InProgress; a Gateway that refuses or never answers, and an IngressClass
// that does not exist, are Stalled (Failed); an Ingress no controller admitted is Degraded
// beside Ready (Current).
func TestExposureStatuses(t *testing.T) {
	rolledOut := func() Observed { return Observed{Deployment: deployment(1, 1, 3, 3, 3, 3, 3, true)} }
	gw := examplev1.GatewayReference{Namespace: "infra", Name: "public"}
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 1}}
	now := t0.Time
	routeObs := func(applied time.Time) Observed {
		obs := rolledOut()
		f, _ := RouteProblem(route, gw, ParentController{Known: true, Name: gatewayController}, applied, now)
		if f.Terminal {
			obs.Failures = append(obs.Failures, *f)
		} else {
			obs.Unreachable = f
		}
		return obs
	}
	ingressObs := func(classMissing bool, created time.Time) Observed {
		obs := rolledOut()
		ing := ingress("nginx", created, false)
		if f, _ := IngressProblem(ing, classMissing, now); f != nil {
			obs.Failures = append(obs.Failures, *f)
		}
		return obs
	}
	cases := map[string]struct {
		obs                             Observed
		ready, reconciling, stalled, dg metav1.ConditionStatus
		reason                          string
		want                            kstatus.Status
	}{
		"waiting for the Gateway": {routeObs(now.Add(-time.Minute)), "False", "True", "False", "False",
			examplev1.ReasonWaitingForGateway, kstatus.InProgressStatus},
		"the Gateway never answers": {routeObs(now.Add(-AnswerDeadline)), "False", "False", "True", "True",
			examplev1.ReasonGatewayNotResponding, kstatus.FailedStatus},
		"the IngressClass does not exist": {ingressObs(true, now), "False", "False", "True", "True",
			examplev1.ReasonIngressClassNotFound, kstatus.FailedStatus},
		"no controller admitted the Ingress yet": {ingressObs(false, now.Add(-time.Minute)), "True", "False", "False", "False",
			examplev1.ReasonAvailable, kstatus.CurrentStatus},
		"no controller admitted the Ingress": {ingressObs(false, now.Add(-AnswerDeadline)), "True", "False", "False", "True",
			examplev1.ReasonIngressNotAdmitted, kstatus.CurrentStatus},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			app := &examplev1.MyApp{}
			app.APIVersion, app.Kind = examplev1.GroupVersion.String(), "MyApp"
			app.Name, app.Namespace, app.Generation = "web", "shop", 1
			app.Status = Compute(app, tc.obs, t0)
			byType := map[string]metav1.Condition{}
			for _, c := range app.Status.Conditions {
				byType[c.Type] = c
			}
			g.Expect(byType[examplev1.ConditionReady].Status).To(Equal(tc.ready))
			g.Expect(byType[examplev1.ConditionReconciling].Status).To(Equal(tc.reconciling))
			g.Expect(byType[examplev1.ConditionStalled].Status).To(Equal(tc.stalled))
			g.Expect(byType[examplev1.ConditionDegraded].Status).To(Equal(tc.dg))
			reasonOn := examplev1.ConditionReady
			if tc.dg == metav1.ConditionTrue {
				reasonOn = examplev1.ConditionDegraded
			}
			g.Expect(byType[reasonOn].Reason).To(Equal(tc.reason))
			g.Expect(kstatusOf(g, app)).To(Equal(tc.want))
		})
	}
}
