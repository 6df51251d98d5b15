package controller

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// changes gathers what one reconcile did to a MyApp's children, so that the MyApp gets one
// event per kind of change ("Created Service web, Deployment web") instead of one per child:
// a new MyApp costs the API server one event write, not two or four.
type changes struct{ created, updated, deleted []string }

// Event reasons of the changes to children.
const (
	reasonCreated = "Created"
	reasonUpdated = "Updated"
	reasonDeleted = "Deleted"
)

// record notes that the child kind/name was created, updated or deleted (reason). Without a
// changes to gather into (c is nil), the event is recorded at once.
func (c *changes) record(r *MyAppReconciler, app *examplev1.MyApp, reason, kind, name string) {
	child := kind + " " + name
	switch {
	case c == nil:
		r.Recorder.Event(app, corev1.EventTypeNormal, reason, reason+" "+child)
	case reason == reasonCreated:
		c.created = append(c.created, child)
	case reason == reasonUpdated:
		c.updated = append(c.updated, child)
	case reason == reasonDeleted:
		c.deleted = append(c.deleted, child)
	}
}

// emit records the gathered changes on the MyApp, one event per reason.
func (c *changes) emit(r *MyAppReconciler, app *examplev1.MyApp) {
	for _, e := range []struct {
		reason   string
		children []string
	}{{reasonCreated, c.created}, {reasonUpdated, c.updated}, {reasonDeleted, c.deleted}} {
		if len(e.children) > 0 {
			r.Recorder.Event(app, corev1.EventTypeNormal, e.reason, e.reason+" "+strings.Join(e.children, ", "))
		}
	}
}
