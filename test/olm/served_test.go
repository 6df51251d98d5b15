package olm

import (
	"fmt"
	"slices"
	"sync"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// appLabel is on the pods of every MyApp, in 0.2.0 and 0.3.0 alike, with the MyApp's name.
const appLabel = "app.kubernetes.io/name"

// servedWatch follows the pods of some MyApps of one namespace through a watch, from a list
// of the pods as they are, and remembers for each MyApp the fewest ready pods it ever had:
// zero means that, for a moment, nothing served it.
type servedWatch struct {
	mu       sync.Mutex
	ready    map[string]map[string]bool // MyApp -> ready pod names
	fewest   map[string]int
	err      error
	stopping bool // the test stopped the watch: what follows is its closing, not news
	w        watch.Interface
	finished chan struct{}
}

// watchServed starts following the pods of apps in ns. Each must have a ready pod already.
func watchServed(ns string, apps ...string) *servedWatch {
	s := &servedWatch{ready: map[string]map[string]bool{}, fewest: map[string]int{}, finished: make(chan struct{})}
	pods := &corev1.PodList{}
	Expect(k8s.List(ctx, pods, client.InNamespace(ns), client.HasLabels{appLabel})).To(Succeed())
	for _, app := range apps {
		s.ready[app] = map[string]bool{}
	}
	for i := range pods.Items {
		s.observe(&pods.Items[i], false)
	}
	for _, app := range apps {
		s.fewest[app] = len(s.ready[app])
		Expect(s.fewest[app]).To(BeNumerically(">", 0), "MyApp %s has no ready pod to start with", app)
	}
	var err error
	s.w, err = k8s.Watch(ctx, &corev1.PodList{}, client.InNamespace(ns), client.HasLabels{appLabel},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: pods.ResourceVersion}})
	Expect(err).NotTo(HaveOccurred())
	go func() {
		defer close(s.finished)
		for ev := range s.w.ResultChan() {
			s.mu.Lock()
			switch pod, ok := ev.Object.(*corev1.Pod); {
			case s.stopping:
			case ev.Type == watch.Error || !ok:
				s.err = fmt.Errorf("pod watch: %v", ev.Object)
			default:
				s.observe(pod, ev.Type == watch.Deleted)
			}
			s.mu.Unlock()
		}
	}()
	return s
}

// observe records one pod's state and updates the fewest ready pods of its MyApp.
func (s *servedWatch) observe(pod *corev1.Pod, deleted bool) {
	app := pod.Labels[appLabel]
	ready, ok := s.ready[app]
	if !ok {
		return
	}
	if !deleted && pod.DeletionTimestamp == nil && podReady(pod) {
		ready[pod.Name] = true
	} else {
		delete(ready, pod.Name)
	}
	if n, seen := s.fewest[app]; seen && len(ready) < n {
		s.fewest[app] = len(ready)
	}
}

// stop ends the watch and returns the fewest ready pods of each MyApp. It fails the test when
// the watch ended on its own: then it has not seen everything.
func (s *servedWatch) stop() map[string]int {
	s.mu.Lock()
	select {
	case <-s.finished:
		s.err = fmt.Errorf("the pod watch ended before the test stopped it")
	default:
	}
	s.stopping = true
	s.mu.Unlock()
	s.w.Stop()
	<-s.finished
	s.mu.Lock()
	defer s.mu.Unlock()
	Expect(s.err).NotTo(HaveOccurred(), "cannot tell whether the MyApps were served throughout")
	return s.fewest
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podUIDs lists the UIDs of the pods of the named MyApps in ns, sorted: the same list before
// and after an upgrade of the operator means that no pod of theirs was replaced. (The
// operator's own pod carries appLabel too, with its own name.)
func podUIDs(ns string, apps ...string) []string {
	sel, err := labels.NewRequirement(appLabel, selection.In, apps)
	Expect(err).NotTo(HaveOccurred())
	pods := &corev1.PodList{}
	Expect(k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*sel)})).To(Succeed())
	uids := make([]string, 0, len(pods.Items))
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			uids = append(uids, string(p.UID))
		}
	}
	Expect(uids).NotTo(BeEmpty(), "no pod of %v in %s to compare", apps, ns)
	slices.Sort(uids)
	return uids
}
