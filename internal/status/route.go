package status

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// RouteProblem reads what the Gateway said of the MyApp's HTTPRoute in the route's parent
// status: nil once a controller of that Gateway reports the current generation of the route
// Accepted and its references resolved; a terminal Failure (RouteNotAccepted) when it reports
// either False; otherwise, while the Gateway has said nothing of this generation, a Failure
// that is no problem, to wait for (WaitingForGateway). Messages name the Gateway's reason,
// never its message, which implementations word freely.
func RouteProblem(route *gatewayv1.HTTPRoute, gw examplev1.GatewayReference) *Failure {
	gateway := gw.Namespace + "/" + gw.Name
	if gw.SectionName != "" {
		gateway += " (listener " + gw.SectionName + ")"
	}
	var refused *Failure
	for _, p := range route.Status.Parents {
		if !sameParent(p.ParentRef, route.Namespace, gw) {
			continue
		}
		accepted := currentCondition(p.Conditions, string(gatewayv1.RouteConditionAccepted), route.Generation)
		resolved := currentCondition(p.Conditions, string(gatewayv1.RouteConditionResolvedRefs), route.Generation)
		switch {
		case accepted != nil && accepted.Status == metav1.ConditionFalse:
			refused = &Failure{Reason: examplev1.ReasonRouteNotAccepted, Terminal: true, Message: fmt.Sprintf(
				"Gateway %s does not accept HTTPRoute %s (%s); see the route's status", gateway, route.Name, accepted.Reason)}
		case resolved != nil && resolved.Status == metav1.ConditionFalse:
			refused = &Failure{Reason: examplev1.ReasonRouteNotAccepted, Terminal: true, Message: fmt.Sprintf(
				"Gateway %s cannot resolve the backend of HTTPRoute %s (%s); see the route's status", gateway, route.Name, resolved.Reason)}
		case accepted != nil && accepted.Status == metav1.ConditionTrue && resolved != nil && resolved.Status == metav1.ConditionTrue:
			// One controller of the Gateway routes the app's traffic: it is reachable.
			return nil
		}
	}
	if refused != nil {
		return refused
	}
	return &Failure{Reason: examplev1.ReasonWaitingForGateway,
		Message: fmt.Sprintf("Waiting for Gateway %s to accept HTTPRoute %s", gateway, route.Name)}
}

// sameParent tells whether a parent status is about the Gateway the MyApp names. The API
// server defaults a reference's group and kind; its namespace, left out, is the route's.
func sameParent(ref gatewayv1.ParentReference, routeNamespace string, gw examplev1.GatewayReference) bool {
	ns := routeNamespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	section := ""
	if ref.SectionName != nil {
		section = string(*ref.SectionName)
	}
	return (ref.Group == nil || *ref.Group == gatewayv1.GroupName) && (ref.Kind == nil || *ref.Kind == "Gateway") &&
		ns == gw.Namespace && string(ref.Name) == gw.Name && section == gw.SectionName
}

// currentCondition is the condition of that type if it speaks of the route's generation (one
// without observedGeneration is taken as current), or nil.
func currentCondition(conds []metav1.Condition, typ string, generation int64) *metav1.Condition {
	for i := range conds {
		c := &conds[i]
		if c.Type == typ && (c.ObservedGeneration == 0 || c.ObservedGeneration >= generation) {
			return c
		}
	}
	return nil
}

// RouteAcceptedAt is when a controller of the MyApp's Gateway last reported the route
// accepted with its references resolved, by the later of the two conditions' transition
// times; zero when it has not, or gave no time.
func RouteAcceptedAt(route *gatewayv1.HTTPRoute, gw examplev1.GatewayReference) time.Time {
	var at time.Time
	for _, p := range route.Status.Parents {
		if !sameParent(p.ParentRef, route.Namespace, gw) {
			continue
		}
		accepted := currentCondition(p.Conditions, string(gatewayv1.RouteConditionAccepted), route.Generation)
		resolved := currentCondition(p.Conditions, string(gatewayv1.RouteConditionResolvedRefs), route.Generation)
		if accepted == nil || resolved == nil || accepted.Status != metav1.ConditionTrue || resolved.Status != metav1.ConditionTrue {
			continue
		}
		for _, t := range []time.Time{accepted.LastTransitionTime.Time, resolved.LastTransitionTime.Time} {
			if t.After(at) {
				at = t
			}
		}
	}
	return at
}
