package events

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
)

// newRecorder records through the API server cs talks to, with client-go's default correlator.
func newRecorder(cs kubernetes.Interface) *Recorder {
	return NewRecorder(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")}, scheme.Scheme,
		"events-test", record.CorrelatorOptions{}, logr.Discard())
}

// TestShutdownWritesQueuedEvents: the events recorded just before the manager stops are
// stored by the time Shutdown returns, which is when the process exits. Each event is on an
// object of its own, as the operator's are on their MyApps: client-go drops a burst of more
// than 25 events on one object, and folds similar ones into one.
func TestShutdownWritesQueuedEvents(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	ns, err := cs.CoreV1().Namespaces().Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "queued-"}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	r := newRecorder(cs)
	const n = 50
	for i := range n {
		name := fmt.Sprintf("app-%d", i)
		app := &corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns.Name, Name: name, UID: types.UID(name)}
		r.Eventf(app, corev1.EventTypeWarning, "Queued", "event %d, recorded just before the shutdown", i)
	}
	g.Expect(r.Shutdown(30 * time.Second)).To(Succeed())

	// Read at once, not eventually: after Shutdown the process exits, and what is not stored
	// by then is lost.
	stored, err := cs.CoreV1().Events(ns.Name).List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	objects := map[string]bool{}
	for _, e := range stored.Items {
		if e.Reason == "Queued" {
			objects[e.InvolvedObject.Name] = true
		}
	}
	g.Expect(objects).To(HaveLen(n), "events stored when Shutdown returned")

	all, err := cs.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	for _, e := range all.Items {
		g.Expect(isMarker(&e)).To(BeFalse(), "a flush marker reached the API server: %v", e.InvolvedObject)
	}
}

// TestShutdownIsBoundedWhenTheAPIServerHangs: an API server that accepts connections and never
// answers holds up the exit for the timeout only, and Shutdown says events may be lost.
func TestShutdownIsBoundedWhenTheAPIServerHangs(t *testing.T) {
	g := NewWithT(t)
	hanging := hangingServer(t)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://" + hanging})
	g.Expect(err).NotTo(HaveOccurred())

	r := newRecorder(cs)
	app := &corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "app", UID: "app"}
	r.Event(app, corev1.EventTypeWarning, "Queued", "never answered")
	returned := make(chan error, 1)
	go func() { returned <- r.Shutdown(500 * time.Millisecond) }()
	g.Eventually(returned).WithTimeout(5*time.Second).Should(Receive(&err), "Shutdown still waits for the API server")
	g.Expect(err).To(MatchError(context.DeadlineExceeded))
}

// hangingServer listens on a loopback address, accepts connections and never answers; it
// closes them when the test ends.
func hangingServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}
