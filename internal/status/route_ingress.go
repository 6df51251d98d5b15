package status

import (
	"fmt"
	"time"

	networkingv1 "k8s.io/api/networking/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// An Ingress has no acceptance signal in the API: no condition, no observedGeneration. What
// there is: its IngressClass, which names the controller meant to serve it, and
// status.loadBalancer, where that controller publishes the address it serves it on. Neither
// proves that a request reaches the app, so Ready does not wait for them; a class that does not
// exist does prove that nothing serves the Ingress.

// Admitted tells whether an ingress controller published an address for the Ingress: the one
// signal that some controller serves it.
func Admitted(ing *networkingv1.Ingress) bool {
	return len(ing.Status.LoadBalancer.Ingress) > 0
}

// IngressProblem reads what is known of the controller of the MyApp's Ingress, and returns
// the problem it makes and, when the answer can change with time alone, how soon to look again:
//   - a terminal IngressClassNotFound when the class the Ingress names does not exist
//     (classMissing: the operator read the cluster's IngressClasses and found none of that
//     name): no controller serves it until someone creates the class or the MyApp names another;
//   - none once an ingress controller published the Ingress's address;
//   - none until AnswerDeadline after the Ingress was created, then IngressNotAdmitted, which
//     the app serves in spite of (Degraded, Ready kept): some ingress controllers never publish
//     an address (Traefik without a published Service, ingress-nginx with --update-status=false),
//     and Ready must not wait for a signal a working setup may never give.
//
// Measured from the Ingress's creation: a change of its rules does not restart the wait.
func IngressProblem(ing *networkingv1.Ingress, classMissing bool, now time.Time) (*Failure, time.Duration) {
	class := "<none>"
	if ing.Spec.IngressClassName != nil {
		class = *ing.Spec.IngressClassName
	}
	switch {
	case classMissing:
		return &Failure{Reason: examplev1.ReasonIngressClassNotFound, Terminal: true, Message: fmt.Sprintf(
			"IngressClass %s does not exist, so no ingress controller serves Ingress %s: install the controller of that class, "+
				"or name an existing class in spec.expose.ingressClassName (kubectl get ingressclass)", class, ing.Name)}, 0
	case Admitted(ing) || ing.CreationTimestamp.IsZero():
		return nil, 0
	}
	if left := ing.CreationTimestamp.Add(AnswerDeadline).Sub(now); left > 0 {
		return nil, left
	}
	return &Failure{Reason: examplev1.ReasonIngressNotAdmitted, Terminal: true, ServedWithout: true, Message: fmt.Sprintf(
		"No ingress controller has published an address for Ingress %s (class %s) within %s of its creation: check that the "+
			"controller of that class runs; a controller that never publishes one leaves this reason in place",
		ing.Name, class, minutes(AnswerDeadline))}, 0
}

// IngressTakesOverAt is when the HTTPRoute of a MyApp that moved to an Ingress may go: MoveGrace
// after the Ingress carries the spec (specAt, when the operator last changed it) and an ingress
// controller published its address (addressAt, when its status last changed; zero when
// unknown), whichever came later. Without an address, it is AnswerDeadline after specAt: a
// controller that never publishes one has had longer than any controller that does takes.
func IngressTakesOverAt(ing *networkingv1.Ingress, specAt, addressAt time.Time) time.Time {
	if !Admitted(ing) {
		return specAt.Add(AnswerDeadline)
	}
	if addressAt.After(specAt) {
		return addressAt.Add(MoveGrace)
	}
	return specAt.Add(MoveGrace)
}
