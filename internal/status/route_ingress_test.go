package status

import (
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// ingress is the Ingress "web" of that class ("" for none), created at created, with an address
// published by an ingress controller when admitted.
func ingress(class string, created time.Time, admitted bool) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", CreationTimestamp: metav1.NewTime(created)}}
	if class != "" {
		ing.Spec.IngressClassName = &class
	}
	if admitted {
		ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.10"}}
	}
	return ing
}

// TestIngressProblem: a class that does not exist is Stalled at once; an Ingress no controller
// published an address for is no problem until AnswerDeadline after its creation, then
// Degraded only (ServedWithout); an address ends both waits.
func TestIngressProblem(t *testing.T) {
	now := t0.Time
	cases := map[string]struct {
		ing          *networkingv1.Ingress
		classMissing bool
		want         string
		recheck      time.Duration
	}{
		"admitted":                      {ing: ingress("nginx", now.Add(-time.Hour), true)},
		"just created":                  {ing: ingress("nginx", now, false), recheck: AnswerDeadline},
		"not admitted, before deadline": {ing: ingress("nginx", now.Add(-AnswerDeadline+time.Second), false), recheck: time.Second},
		"not admitted at the deadline":  {ing: ingress("nginx", now.Add(-AnswerDeadline), false), want: examplev1.ReasonIngressNotAdmitted},
		"no class, not admitted":        {ing: ingress("", now.Add(-time.Hour), false), want: examplev1.ReasonIngressNotAdmitted},
		"the class does not exist":      {ing: ingress("nginx", now, false), classMissing: true, want: examplev1.ReasonIngressClassNotFound},
		"the class does not exist, an address from before": {ing: ingress("nginx", now.Add(-time.Hour), true), classMissing: true,
			want: examplev1.ReasonIngressClassNotFound},
		"no creation time": {ing: ingress("nginx", time.Time{}, false)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, recheck := IngressProblem(tc.ing, tc.classMissing, now)
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("want no problem, got %+v", got)
			case tc.want != "" && (got == nil || got.Reason != tc.want):
				t.Fatalf("want %s, got %+v", tc.want, got)
			case recheck != tc.recheck:
				t.Fatalf("want a recheck in %s, got %s", tc.recheck, recheck)
			case got == nil:
				return
			case !got.Terminal || got.ServedWithout != (got.Reason == examplev1.ReasonIngressNotAdmitted):
				t.Fatalf("a missing class is Stalled, an Ingress not admitted Degraded only: %+v", got)
			case got.Reason == examplev1.ReasonIngressClassNotFound && !strings.Contains(got.Message, "IngressClass nginx does not exist"):
				t.Fatalf("the message must name the class: %q", got.Message)
			case got.Reason == examplev1.ReasonIngressNotAdmitted && !strings.Contains(got.Message, "Ingress web"):
				t.Fatalf("the message must name the Ingress: %q", got.Message)
			}
		})
	}
}

// TestIngressTakesOverAt: the route of a MyApp that moved to an Ingress goes MoveGrace after
// the later of the Ingress taking the spec and its address being published; without an
// address, AnswerDeadline after the Ingress took the spec.
func TestIngressTakesOverAt(t *testing.T) {
	spec := t0.Time
	cases := map[string]struct {
		admitted  bool
		addressAt time.Time
		want      time.Time
	}{
		"no address":                              {want: spec.Add(AnswerDeadline)},
		"an address published after":              {admitted: true, addressAt: spec.Add(30 * time.Second), want: spec.Add(30*time.Second + MoveGrace)},
		"an address from before the spec":         {admitted: true, addressAt: spec.Add(-time.Hour), want: spec.Add(MoveGrace)},
		"an address published at an unknown time": {admitted: true, want: spec.Add(MoveGrace)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ing := ingress("nginx", spec, tc.admitted)
			if got := IngressTakesOverAt(ing, spec, tc.addressAt); !got.Equal(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
