package events

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/record"
)

// How Flush knows that the events recorded before it are written.
//
// Counting the sink's writes cannot tell: between the recorder and the API server, client-go's
// correlator folds a repeated event into a patch of an earlier one, drops events of an object
// that floods (its spam filter), and turns the patch of an event that is gone into a create,
// so the number of writes is not the number of events. The order can tell: the broadcaster
// hands events to the sink's goroutine in the order they were recorded, and that goroutine
// handles one at a time (writes it, with its retries, folds it or drops it) before it takes
// the next. Flush records a marker event, on an object of its own that no correlator has seen,
// so it is neither folded nor dropped; when the marker reaches the sink, every event recorded
// before it has been handled. The sink answers the marker itself: it never reaches the API
// server.

// The marker's object: a kind no API server serves, so that no event of the operator's is
// ever taken for a marker.
const (
	markerAPIVersion = "flush.events.myapp-operator.example.com/v1"
	markerKind       = "EventFlush"
)

// isMarker reports whether e is a flush marker (of any Flush, finished or not).
func isMarker(e *corev1.Event) bool {
	return e.InvolvedObject.APIVersion == markerAPIVersion && e.InvolvedObject.Kind == markerKind
}

// Flush returns once every event recorded before the call has been written, or given up by
// client-go (an event the API server refuses, or one still failing after client-go's retries),
// or with an error when ctx ends first. Events recorded while Flush waits may or may not be
// written by then.
func (r *Recorder) Flush(ctx context.Context) error {
	uid := uuid.NewUUID()
	reached := r.sink.expect(uid)
	defer r.sink.forget(uid)
	marker := &corev1.ObjectReference{APIVersion: markerAPIVersion, Kind: markerKind, Name: "flush", UID: uid}
	r.Event(marker, corev1.EventTypeNormal, "Flush", "every event recorded before this one is written")
	select {
	case <-reached:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the events recorded before the flush are not all written yet: %w", context.Cause(ctx))
	}
}

// flushSink passes events on to the sink it wraps, and answers flush markers itself.
type flushSink struct {
	record.EventSink

	mu      sync.Mutex
	waiting map[types.UID]chan struct{} // by marker UID, closed when the marker arrives
}

func (s *flushSink) Create(e *corev1.Event) (*corev1.Event, error) {
	if s.arrived(e) {
		return e, nil
	}
	return s.EventSink.Create(e)
}

func (s *flushSink) Update(e *corev1.Event) (*corev1.Event, error) {
	if s.arrived(e) {
		return e, nil
	}
	return s.EventSink.Update(e)
}

func (s *flushSink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	if s.arrived(e) {
		return e, nil
	}
	return s.EventSink.Patch(e, data)
}

// expect registers a marker and returns the channel closed when it arrives.
func (s *flushSink) expect(uid types.UID) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting == nil {
		s.waiting = map[types.UID]chan struct{}{}
	}
	ch := make(chan struct{})
	s.waiting[uid] = ch
	return ch
}

// forget drops a marker whose Flush returned.
func (s *flushSink) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.waiting, uid)
}

// arrived reports whether e is a marker, and tells its Flush, if it still waits, that it
// arrived.
func (s *flushSink) arrived(e *corev1.Event) bool {
	if !isMarker(e) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.waiting[e.InvolvedObject.UID]; ok {
		close(ch)
		delete(s.waiting, e.InvolvedObject.UID)
	}
	return true
}
