package status

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// TestRouteProblem: the MyApp reads the parent status of its own Gateway and listener only,
// for the route's current generation; both Accepted and ResolvedRefs True make it reachable,
// either False is a refusal that names the Gateway's reason, and anything else is waiting.
func TestRouteProblem(t *testing.T) {
	gw := examplev1.GatewayReference{Namespace: "infra", Name: "public", SectionName: "https"}
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
	conds := func(gen int64, accepted, resolved metav1.ConditionStatus, reason string) []metav1.Condition {
		var out []metav1.Condition
		if accepted != "" {
			out = append(out, metav1.Condition{Type: "Accepted", Status: accepted, Reason: reason, ObservedGeneration: gen})
		}
		if resolved != "" {
			out = append(out, metav1.Condition{Type: "ResolvedRefs", Status: resolved, Reason: reason, ObservedGeneration: gen})
		}
		return out
	}
	ours := ref("infra", "public", "https")
	cases := map[string]struct {
		parents []gatewayv1.RouteParentStatus
		// want is the reason of the problem; "" for none.
		want string
	}{
		"no status yet":                {want: examplev1.ReasonWaitingForGateway},
		"accepted and resolved":        {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, Conditions: conds(3, "True", "True", "Accepted")}}},
		"condition without generation": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, Conditions: conds(0, "True", "True", "Accepted")}}},
		"accepted, refs unknown":       {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, Conditions: conds(3, "True", "", "Accepted")}}, want: examplev1.ReasonWaitingForGateway},
		"of an older generation":       {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, Conditions: conds(2, "True", "True", "Accepted")}}, want: examplev1.ReasonWaitingForGateway},
		"refused by listeners":         {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, Conditions: conds(3, "False", "True", "NotAllowedByListeners")}}, want: examplev1.ReasonRouteNotAccepted},
		"backend not resolved":         {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, Conditions: conds(3, "True", "False", "BackendNotFound")}}, want: examplev1.ReasonRouteNotAccepted},
		"an old refusal":               {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, Conditions: conds(2, "False", "False", "NoMatchingParent")}}, want: examplev1.ReasonWaitingForGateway},
		"another listener's":           {parents: []gatewayv1.RouteParentStatus{{ParentRef: ref("infra", "public", "http"), Conditions: conds(3, "True", "True", "Accepted")}}, want: examplev1.ReasonWaitingForGateway},
		"another gateway's":            {parents: []gatewayv1.RouteParentStatus{{ParentRef: ref("infra", "private", "https"), Conditions: conds(3, "True", "True", "Accepted")}}, want: examplev1.ReasonWaitingForGateway},
		"a namespace left out":         {parents: []gatewayv1.RouteParentStatus{{ParentRef: ref("", "public", "https"), Conditions: conds(3, "True", "True", "Accepted")}}, want: examplev1.ReasonWaitingForGateway},
		"another kind of parent":       {parents: []gatewayv1.RouteParentStatus{{ParentRef: func() gatewayv1.ParentReference { r := ours; r.Kind = ptrTo(gatewayv1.Kind("ListenerSet")); return r }(), Conditions: conds(3, "True", "True", "Accepted")}}, want: examplev1.ReasonWaitingForGateway},
		"one controller accepts":       {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, Conditions: conds(3, "False", "True", "NotAllowedByListeners")}, {ParentRef: ours, Conditions: conds(3, "True", "True", "Accepted")}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 3}}
			route.Status.Parents = tc.parents
			got := RouteProblem(route, gw)
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("want no problem, got %+v", got)
			case tc.want != "" && (got == nil || got.Reason != tc.want):
				t.Fatalf("want %s, got %+v", tc.want, got)
			case got != nil && got.Terminal != (got.Reason == examplev1.ReasonRouteNotAccepted):
				t.Fatalf("only a refusal is terminal: %+v", got)
			case got != nil && got.Reason == examplev1.ReasonRouteNotAccepted && !containsAll(got.Message, "infra/public", tc.parents[0].Conditions[0].Reason):
				t.Fatalf("the message must name the Gateway and its reason: %q", got.Message)
			}
		})
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// TestRouteAcceptedAt: the time the MyApp's own Gateway last reported the route's current
// generation accepted and resolved, the later of the two transitions; zero otherwise.
func TestRouteAcceptedAt(t *testing.T) {
	gw := examplev1.GatewayReference{Namespace: "infra", Name: "public"}
	ours := gatewayv1.ParentReference{Namespace: ptrTo(gatewayv1.Namespace("infra")), Name: "public"}
	theirs := gatewayv1.ParentReference{Namespace: ptrTo(gatewayv1.Namespace("infra")), Name: "private"}
	t1 := metav1.NewTime(metav1.Now().Add(-time.Minute).Truncate(time.Second))
	t2 := metav1.NewTime(t1.Add(5 * time.Second))
	cond := func(typ string, status metav1.ConditionStatus, gen int64, at metav1.Time) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, ObservedGeneration: gen, LastTransitionTime: at, Reason: "R"}
	}
	cases := map[string]struct {
		parents []gatewayv1.RouteParentStatus
		want    time.Time
	}{
		"no status": {},
		"accepted, then resolved": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, Conditions: []metav1.Condition{
			cond("Accepted", "True", 3, t1), cond("ResolvedRefs", "True", 3, t2)}}}, want: t2.Time},
		"resolved, then accepted": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, Conditions: []metav1.Condition{
			cond("Accepted", "True", 3, t2), cond("ResolvedRefs", "True", 3, t1)}}}, want: t2.Time},
		"refused": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, Conditions: []metav1.Condition{
			cond("Accepted", "False", 3, t1), cond("ResolvedRefs", "True", 3, t1)}}}},
		"an older generation": {parents: []gatewayv1.RouteParentStatus{{ParentRef: ours, Conditions: []metav1.Condition{
			cond("Accepted", "True", 2, t1), cond("ResolvedRefs", "True", 2, t1)}}}},
		"another Gateway's": {parents: []gatewayv1.RouteParentStatus{{ParentRef: theirs, Conditions: []metav1.Condition{
			cond("Accepted", "True", 3, t1), cond("ResolvedRefs", "True", 3, t1)}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 3}}
			route.Status.Parents = tc.parents
			if got := RouteAcceptedAt(route, gw); !got.Equal(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
