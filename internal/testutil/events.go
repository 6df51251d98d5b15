package testutil

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CountEvents counts the events of that reason recorded on obj, each repetition the event
// recorder folded into one Event (count, series) included. It returns an error when it
// cannot count: obj without a UID (its events cannot be told apart), a list that fails, an
// Event with a negative count or a series without one. Nothing defaults to 0.
func CountEvents(ctx context.Context, c client.Reader, obj client.Object, reason string) (int, error) {
	if obj.GetUID() == "" {
		return 0, fmt.Errorf("%s/%s has no UID: read it from the API server first", obj.GetNamespace(), obj.GetName())
	}
	list := &corev1.EventList{}
	if err := c.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		return 0, fmt.Errorf("listing events: %w", err)
	}
	n := 0
	for _, e := range list.Items {
		if e.InvolvedObject.UID != obj.GetUID() || e.Reason != reason {
			continue
		}
		switch {
		case e.Count < 0:
			return 0, fmt.Errorf("event %s has a negative count %d", e.Name, e.Count)
		case e.Series != nil && e.Series.Count <= 0:
			return 0, fmt.Errorf("event %s has a series without a count", e.Name)
		case e.Series != nil:
			n += int(e.Series.Count)
		case e.Count > 0:
			n += int(e.Count)
		default:
			n++ // written once, without a count
		}
	}
	return n, nil
}
