// Package events records the operator's core/v1 Events, and writes the ones still queued when
// the manager stops, so that the last problem found before a restart (a rolling upgrade of the
// operator, a node drain) is not lost with the process.
package events

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// Recorder records core/v1 Events through a broadcaster of its own. client-go's broadcaster
// writes events from a goroutine of its own and its Shutdown drops those still queued; Shutdown
// here writes them first (flush.go).
type Recorder struct {
	record.EventRecorder
	broadcaster record.EventBroadcaster
	sink        *flushSink
}

// NewRecorder starts a broadcaster that writes the events it is given to sink, through
// client-go's correlator with the given options (which folds repeated events into one and
// drops floods), and logs each at V(1) on log. The events name component as their source.
// Call Shutdown once nothing records any more.
func NewRecorder(sink record.EventSink, scheme *runtime.Scheme, component string,
	correlator record.CorrelatorOptions, log logr.Logger) *Recorder {
	bc := record.NewBroadcaster(record.WithCorrelatorOptions(correlator))
	fs := &flushSink{EventSink: sink}
	bc.StartRecordingToSink(fs)
	bc.StartEventWatcher(func(e *corev1.Event) {
		if isMarker(e) {
			return
		}
		log.V(1).Info(e.Message, "type", e.Type, "object", e.InvolvedObject, "reason", e.Reason)
	})
	return &Recorder{
		EventRecorder: bc.NewRecorder(scheme, corev1.EventSource{Component: component}),
		broadcaster:   bc,
		sink:          fs,
	}
}

// Shutdown writes the events recorded so far, waiting at most timeout, and then stops the
// broadcaster. The wait is bounded so that an API server that does not answer never holds up
// the process's exit: the error then says that some events may be lost. Record nothing after
// Shutdown (client-go drops such events with an error in the log).
func (r *Recorder) Shutdown(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := r.Flush(ctx)
	r.broadcaster.Shutdown()
	return err
}
