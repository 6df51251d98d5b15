package controller

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestListingOf is the reading of a Service's EndpointSlices: only pods of the template, not
// being deleted, listed ready (or with the ready condition unset) in a slice not being deleted.
func TestListingOf(t *testing.T) {
	pod := func(name, hash string, ready, deleting bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash}}}
		if ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{}
		}
		return p
	}
	endpoint := func(name string, ready *bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ready},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: name}}
	}
	slice := func(endpoints ...discoveryv1.Endpoint) discoveryv1.EndpointSlice {
		return discoveryv1.EndpointSlice{Endpoints: endpoints}
	}
	pods := []corev1.Pod{pod("a", "v2", true, false), pod("b", "v2", true, false), pod("c", "v2", false, false),
		pod("old", "v1", true, false), pod("going", "v2", true, true)}
	for _, tc := range []struct {
		name  string
		sets  []discoveryv1.EndpointSlice
		want  listing
		least int32
		all   bool
	}{
		{"no slice lists nothing", nil, listing{listed: 0, ready: 2}, 1, false},
		{"every ready pod listed", []discoveryv1.EndpointSlice{slice(endpoint("a", ptr.To(true)), endpoint("b", nil))}, listing{listed: 2, ready: 2}, 2, true},
		{"a pod listed not ready is not listed", []discoveryv1.EndpointSlice{slice(endpoint("a", ptr.To(true)), endpoint("b", ptr.To(false)))}, listing{listed: 1, ready: 2}, 1, false},
		{"another template's pods do not count", []discoveryv1.EndpointSlice{slice(endpoint("a", nil), endpoint("old", nil))}, listing{listed: 1, ready: 2}, 1, false},
		{"a pod being deleted does not count", []discoveryv1.EndpointSlice{slice(endpoint("a", nil), endpoint("going", nil))}, listing{listed: 1, ready: 2}, 1, false},
		{"a pod listed in two slices counts once", []discoveryv1.EndpointSlice{slice(endpoint("a", nil)), slice(endpoint("a", nil), endpoint("b", nil))}, listing{listed: 2, ready: 2}, 2, true},
		{"a listed pod the cache does not hold ready yet counts", []discoveryv1.EndpointSlice{slice(endpoint("a", nil), endpoint("b", nil), endpoint("c", nil))}, listing{listed: 3, ready: 2}, 3, true},
		{"fewer than least", []discoveryv1.EndpointSlice{slice(endpoint("a", nil), endpoint("b", nil))}, listing{listed: 2, ready: 2}, 3, false},
		{"a slice being deleted lists nothing", []discoveryv1.EndpointSlice{{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{}},
			Endpoints: []discoveryv1.Endpoint{endpoint("a", nil), endpoint("b", nil)}}}, listing{listed: 0, ready: 2}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := listingOf(tc.sets, pods, "v2")
			if got != tc.want {
				t.Fatalf("listingOf = %+v, want %+v", got, tc.want)
			}
			if all := got.servesAll(tc.least); all != tc.all {
				t.Fatalf("servesAll(%d) = %t, want %t", tc.least, all, tc.all)
			}
		})
	}
	if got := listingOf([]discoveryv1.EndpointSlice{slice(endpoint("a", nil))}, pods, ""); got != (listing{}) {
		t.Fatalf("an unknown template lists %+v", got)
	}
}

// TestListingNeverCountsWhatTheGatewaySkips: over random slices and pods, a listing never
// counts more pods than the slices list ready endpoints of the template's live pods, as a
// Gateway's controller reads them, and servesAll(n) holds only with n of them; trimming a
// slice for the cache changes nothing of its reading.
func TestListingNeverCountsWhatTheGatewaySkips(t *testing.T) {
	for seed := uint64(1); seed <= 500; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		var pods []corev1.Pod
		for i := range r.IntN(8) {
			p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i),
				Labels: map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: []string{"v1", "v2"}[r.IntN(2)]}}}
			if r.IntN(2) == 0 {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			}
			if r.IntN(5) == 0 {
				p.DeletionTimestamp = &metav1.Time{}
			}
			pods = append(pods, p)
		}
		var sets []discoveryv1.EndpointSlice
		for range r.IntN(3) {
			s := discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4}
			for range r.IntN(6) {
				e := discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"},
					TargetRef: &corev1.ObjectReference{Kind: []string{"Pod", "Pod", "Node"}[r.IntN(3)], Name: fmt.Sprintf("p%d", r.IntN(9))}}
				if c := r.IntN(3); c > 0 {
					e.Conditions.Ready = ptr.To(c == 1)
				}
				s.Endpoints = append(s.Endpoints, e)
			}
			sets = append(sets, s)
		}
		l := listingOf(sets, pods, "v2")
		served := map[string]bool{}
		for _, s := range sets {
			for _, e := range s.Endpoints {
				if e.TargetRef.Kind == "Pod" && (e.Conditions.Ready == nil || *e.Conditions.Ready) {
					served[e.TargetRef.Name] = true
				}
			}
		}
		live := 0
		for _, p := range pods {
			if served[p.Name] && p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] == "v2" && p.DeletionTimestamp == nil {
				live++
			}
		}
		if int(l.listed) != live {
			t.Fatalf("seed %d: listed %d, the Gateway would send to %d", seed, l.listed, live)
		}
		if least := int32(r.IntN(5)); l.servesAll(least) && (int(least) > live || l.ready > l.listed) {
			t.Fatalf("seed %d: servesAll(%d) with %d listed and %d ready", seed, least, live, l.ready)
		}
		trimmed := make([]discoveryv1.EndpointSlice, len(sets))
		for i := range sets {
			out, err := trimEndpointSlice(sets[i].DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			again, _ := trimEndpointSlice(out)
			trimmed[i] = *again.(*discoveryv1.EndpointSlice)
		}
		if got := listingOf(trimmed, pods, "v2"); got != l {
			t.Fatalf("seed %d: the trimmed slices read %+v, the slices %+v", seed, got, l)
		}
		if !maps.Equal(listedPods(trimmed), listedPods(sets)) {
			t.Fatalf("seed %d: trimming changed the listed pods", seed)
		}
	}
}

// servePods plays the kubelet and the EndpointSlice controller: the pods ready, and the
// Service's one EndpointSlice listing them ready, labelled as the controller labels it (the
// Service's labels and its name).
func servePods(ns, service string, pods ...*corev1.Pod) {
	GinkgoHelper()
	for _, p := range pods {
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(suiteCtx, client.ObjectKeyFromObject(p), p)).To(Succeed())
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			g.Expect(k8s.Status().Update(suiteCtx, p)).To(Succeed())
		}).Should(Succeed())
	}
	Eventually(func(g Gomega) {
		svc := getService(ns, service)(g)
		slice := &discoveryv1.EndpointSlice{}
		err := k8s.Get(suiteCtx, client.ObjectKey{Namespace: ns, Name: service + "-slice"}, slice)
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		slice.Namespace, slice.Name, slice.AddressType = ns, service+"-slice", discoveryv1.AddressTypeIPv4
		slice.Labels = maps.Clone(svc.Labels)
		slice.Labels[discoveryv1.LabelServiceName] = service
		slice.Endpoints = nil
		for i, p := range pods {
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.0.0.%d", i+1)},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
				TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: p.Name}})
		}
		if apierrors.IsNotFound(err) {
			g.Expect(k8s.Create(suiteCtx, slice)).To(Succeed())
		} else {
			g.Expect(k8s.Update(suiteCtx, slice)).To(Succeed())
		}
	}).Should(Succeed())
}

// podsOf creates n pods of the named Deployment's template hash (createPodOfDeployment).
func podsOf(ns, deployment, hash string, n int) []*corev1.Pod {
	GinkgoHelper()
	out := make([]*corev1.Pod, 0, n)
	for range n {
		out = append(out, createPodOfDeployment(ns, deployment, hash))
	}
	return out
}
