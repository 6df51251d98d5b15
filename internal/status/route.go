package status

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/hostclaims"
)

// How the app is reached where spec.expose asks: what the Gateway answers of the MyApp's
// HTTPRoute (this file), what an ingress controller shows of its Ingress (route_ingress.go),
// and when a move from one to the other may remove the one it leaves.

// MoveGrace is how long the exposure a MyApp leaves (its Ingress, or its HTTPRoute) stays after
// the one that replaces it is known to serve: the Gateway's controller reports a route accepted,
// and an ingress controller publishes an Ingress's address, a moment before every proxy routes
// it (Traefik applies each of its providers' changes at most every 2 s by default). Deleting the
// old one at once could leave a moment in which neither routes the app. One grace serves both
// directions: what a proxy takes to catch up does not depend on where the traffic comes from.
const MoveGrace = 10 * time.Second

// BackendGrace is how long a Gateway may report the route's backend missing
// (ResolvedRefs False with BackendNotFound) before the MyApp says the Gateway refuses the route:
// a Gateway's controller that sees the route before the Service it names (its informers are
// not ordered) says so, then resolves it once it sees the Service. Measured from the
// condition's lastTransitionTime, which the Gateway's controller stores on the route.
const BackendGrace = 30 * time.Second

// AnswerDeadline is how long the operator waits for the Gateway to answer the current
// generation of the route before the MyApp is Stalled (GatewayNotResponding), and for an
// ingress controller to publish the address of the Ingress before the MyApp is Degraded
// (IngressNotAdmitted). It is longer than any controller that answers at all takes: some
// publish an Ingress's address only on a periodic sync (ingress-nginx's runs every minute).
const AnswerDeadline = 5 * time.Minute

// ParentController says whose entries of the route's parent status speak for the MyApp's
// Gateway. Entries are keyed by parentRef and controllerName together (Gateway API,
// RouteStatus.Parents): another controller may keep an entry for the same Gateway (an
// implementation that writes for every parentRef it sees, or the stale entry of the Gateway's
// former class), and only the controller named by the Gateway's GatewayClass
// (spec.controllerName) decides whether the Gateway routes the app.
type ParentController struct {
	// Known is false when the operator cannot read the Gateway and its class (not permitted,
	// or the Gateway kinds not served): every controller's entry for the Gateway then counts.
	Known bool
	// Name is the controllerName of the Gateway's class; "" when the Gateway or its class does
	// not exist, so that no entry counts.
	Name string
}

// counts tells whether the entry written by controllerName speaks for the Gateway.
func (c ParentController) counts(controllerName gatewayv1.GatewayController) bool {
	return !c.Known || (c.Name != "" && string(controllerName) == c.Name)
}

// RouteProblem reads what the Gateway said of the MyApp's HTTPRoute in the route's parent
// status, in the entries of the Gateway's own controller (by), for the route's current
// generation, and returns the problem it makes and, when the answer can change with time
// alone, how soon to look again:
//   - none once the entry reports the route Accepted and its references resolved;
//   - a terminal Failure (RouteNotAccepted) when it reports either False, naming the
//     Gateway's reason; the Gateway's BackendNotFound only once BackendGrace has passed since
//     it said so, and a Failure that is no problem, to wait for (WaitingForGateway), before;
//   - otherwise, while the Gateway has said nothing of this generation, WaitingForGateway
//     until AnswerDeadline after the operator applied the route's current spec (appliedAt,
//     durable on the route), then a terminal GatewayNotResponding that names the Gateway and
//     what to check.
//
// Messages name the Gateway's reason, never its message, which implementations word freely.
func RouteProblem(route *gatewayv1.HTTPRoute, gw examplev1.GatewayReference, by ParentController, appliedAt, now time.Time) (*Failure, time.Duration) {
	gateway := describeGateway(gw)
	var refused, resolving *Failure
	var recheck time.Duration
	for _, p := range route.Status.Parents {
		if !sameParent(p.ParentRef, route.Namespace, gw) || !by.counts(p.ControllerName) {
			continue
		}
		accepted := currentCondition(p.Conditions, string(gatewayv1.RouteConditionAccepted), route.Generation)
		resolved := currentCondition(p.Conditions, string(gatewayv1.RouteConditionResolvedRefs), route.Generation)
		switch {
		case accepted != nil && accepted.Status == metav1.ConditionFalse:
			refused = &Failure{Reason: examplev1.ReasonRouteNotAccepted, Terminal: true, Message: fmt.Sprintf(
				"Gateway %s does not accept HTTPRoute %s (%s); see the route's status", gateway, route.Name, accepted.Reason)}
		case resolved != nil && resolved.Status == metav1.ConditionFalse &&
			resolved.Reason == string(gatewayv1.RouteReasonBackendNotFound) && now.Before(resolved.LastTransitionTime.Add(BackendGrace)):
			resolving = &Failure{Reason: examplev1.ReasonWaitingForGateway, Message: fmt.Sprintf(
				"Waiting for Gateway %s to resolve the backend of HTTPRoute %s (%s)", gateway, route.Name, resolved.Reason)}
			recheck = soonest(recheck, resolved.LastTransitionTime.Add(BackendGrace).Sub(now))
		case resolved != nil && resolved.Status == metav1.ConditionFalse:
			refused = &Failure{Reason: examplev1.ReasonRouteNotAccepted, Terminal: true, Message: fmt.Sprintf(
				"Gateway %s cannot resolve the backend of HTTPRoute %s (%s); see the route's status", gateway, route.Name, resolved.Reason)}
		case accepted != nil && accepted.Status == metav1.ConditionTrue && resolved != nil && resolved.Status == metav1.ConditionTrue:
			// The Gateway's controller routes the app's traffic: it is reachable.
			return nil, 0
		}
	}
	switch {
	case refused != nil:
		return refused, 0
	case resolving != nil:
		return resolving, recheck
	case appliedAt.IsZero():
		// No time to count from (an object without a creation time is no stored object).
		return waitingForGateway(gateway, route.Name), 0
	}
	if left := appliedAt.Add(AnswerDeadline).Sub(now); left > 0 {
		return waitingForGateway(gateway, route.Name), left
	}
	return &Failure{Reason: examplev1.ReasonGatewayNotResponding, Terminal: true, Message: fmt.Sprintf(
		"Gateway %s has not accepted HTTPRoute %s within %s of its last change: check that the Gateway exists "+
			"(kubectl get gateway -n %s %s) and that a controller serves its GatewayClass (kubectl get gatewayclass: ACCEPTED True)",
		gateway, route.Name, minutes(AnswerDeadline), gw.Namespace, gw.Name)}, 0
}

func waitingForGateway(gateway, route string) *Failure {
	return &Failure{Reason: examplev1.ReasonWaitingForGateway,
		Message: fmt.Sprintf("Waiting for Gateway %s to accept HTTPRoute %s", gateway, route)}
}

// describeGateway names the Gateway, and its listener when the MyApp names one.
func describeGateway(gw examplev1.GatewayReference) string {
	gateway := gw.Namespace + "/" + gw.Name
	if gw.SectionName != "" {
		gateway += " (listener " + gw.SectionName + ")"
	}
	return gateway
}

// minutes writes a whole number of minutes as a message says it.
func minutes(d time.Duration) string {
	if m := int(d / time.Minute); m != 1 {
		return fmt.Sprintf("%d minutes", m)
	}
	return "1 minute"
}

// soonest is the shorter of two rechecks (0: none).
func soonest(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
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

// RouteParent is the Gateway the route attaches to, read from its spec: a route the MyApp
// no longer asks for names the Gateway it served through. ok is false for a route with no
// Gateway as its parent.
func RouteParent(route *gatewayv1.HTTPRoute) (gw examplev1.GatewayReference, ok bool) {
	for _, ref := range route.Spec.ParentRefs {
		if (ref.Group != nil && *ref.Group != gatewayv1.GroupName) || (ref.Kind != nil && *ref.Kind != "Gateway") {
			continue
		}
		gw = examplev1.GatewayReference{Namespace: route.Namespace, Name: string(ref.Name)}
		if ref.Namespace != nil {
			gw.Namespace = string(*ref.Namespace)
		}
		if ref.SectionName != nil {
			gw.SectionName = string(*ref.SectionName)
		}
		return gw, true
	}
	return gw, false
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

// RouteAcceptedAt is when the Gateway's controller (by) last reported the route's current
// generation accepted with its references resolved, by the later of the two conditions'
// transition times; zero when it has not, or gave no time.
func RouteAcceptedAt(route *gatewayv1.HTTPRoute, gw examplev1.GatewayReference, by ParentController) time.Time {
	var at time.Time
	for _, p := range route.Status.Parents {
		if !sameParent(p.ParentRef, route.Namespace, gw) || !by.counts(p.ControllerName) {
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

// RouteServed tells whether the Gateway's controller (by) reports the route accepted with its
// references resolved, for whatever generation it last looked at: a route the MyApp no longer
// applies keeps routing the generation the Gateway last accepted.
func RouteServed(route *gatewayv1.HTTPRoute, gw examplev1.GatewayReference, by ParentController) bool {
	for _, p := range route.Status.Parents {
		if !sameParent(p.ParentRef, route.Namespace, gw) || !by.counts(p.ControllerName) {
			continue
		}
		accepted := currentCondition(p.Conditions, string(gatewayv1.RouteConditionAccepted), 0)
		resolved := currentCondition(p.Conditions, string(gatewayv1.RouteConditionResolvedRefs), 0)
		if accepted != nil && resolved != nil && accepted.Status == metav1.ConditionTrue && resolved.Status == metav1.ConditionTrue {
			return true
		}
	}
	return false
}

// HostClaimed is the Stalled problem of a host of spec.expose an older claim of another MyApp
// holds: the field, the host, the holder and since when, and what to do.
func HostClaimed(r hostclaims.Refusal) Failure {
	holder := fmt.Sprintf("is exposed by MyApp %s/%s at path %s", r.Holder.Namespace, r.Holder.Name, r.Holder.Path)
	if r.Holder.Host != r.Claim.Host {
		holder = fmt.Sprintf("meets %s, which MyApp %s/%s exposes at path %s,", r.Holder.Host, r.Holder.Namespace, r.Holder.Name, r.Holder.Path)
	}
	return Failure{Reason: examplev1.ReasonHostClaimed, Terminal: true, Message: fmt.Sprintf(
		"spec.expose.hosts[%d] %s %s since %s: a host belongs to the namespace of its oldest claim, and within it a path to one "+
			"MyApp; choose another host or path. The MyApp serves its other hosts",
		r.Index, r.Claim.Host, holder, r.Holder.Since.UTC().Format(time.RFC3339))}
}

// HostNotAllowed is the Stalled problem of a host of spec.expose outside the host suffixes
// the manager's --expose-host-suffixes lets the MyApp's namespace claim: the field, the host,
// the namespace's suffixes, and what to do.
func HostNotAllowed(index int, host, namespace string, suffixes []string) Failure {
	may := "may claim no host"
	if len(suffixes) > 0 {
		may = "may claim only hosts under " + strings.Join(suffixes, ", ")
	}
	return Failure{Reason: examplev1.ReasonHostNotAllowed, Terminal: true, Message: fmt.Sprintf(
		"spec.expose.hosts[%d] %s is not allowed: namespace %s %s (the operator's --expose-host-suffixes); "+
			"choose a host under them, or ask the cluster's administrator. The MyApp serves its other hosts",
		index, host, namespace, may)}
}
