package controller

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/hostclaims"
	"github.com/example/myapp-operator/internal/status"
)

// Hosts belong to someone (docs/design/host-claims.md): before a MyApp's HTTPRoute or
// Ingress is applied, its hosts are judged against the claims the other MyApps the manager
// watches record in their status, the ones it holds are recorded in its own, and the child
// serves only those. A claim refused stalls the MyApp, naming the holder; the holder is
// unaffected.

// hostClaimants is the handler that reconciles the MyApps whose hosts meet those of a MyApp
// that changed hands: created, deleted, its hosts or path changed, or its record of what it
// holds changed.
func (r *MyAppReconciler) hostClaimants() handler.EventHandler {
	// enqueue walks the cache once for the hosts of every version of the MyApp given.
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		var hosts []examplev1.Hostname
		for _, obj := range objs {
			if app, ok := obj.(*examplev1.MyApp); ok && app.Spec.Expose != nil {
				hosts = append(hosts, app.Spec.Expose.Hosts...)
			}
		}
		if len(hosts) == 0 {
			return
		}
		meeting, err := r.myAppsMeeting(ctx, client.ObjectKeyFromObject(objs[0]), hosts)
		if err != nil {
			log.FromContext(ctx).Error(err, "Could not list the MyApps whose hosts meet a changed one; their resync looks again")
			return
		}
		for _, m := range meeting {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(m)})
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if claimsChanged(e.ObjectOld, e.ObjectNew) {
				enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
	}
}

// claimsChanged tells whether an update of a MyApp can change who holds a host: its hosts or
// path, its deletion, or its record of what it holds.
func claimsChanged(before, after client.Object) bool {
	b, ok1 := before.(*examplev1.MyApp)
	a, ok2 := after.(*examplev1.MyApp)
	if !ok1 || !ok2 {
		return false
	}
	expose := func(app *examplev1.MyApp) ([]examplev1.Hostname, string) {
		if app.Spec.Expose == nil {
			return nil, ""
		}
		return app.Spec.Expose.Hosts, desired.ExposedPath(app.Spec.Expose)
	}
	bh, bp := expose(b)
	ah, ap := expose(a)
	return !slices.Equal(bh, ah) || bp != ap || (b.DeletionTimestamp == nil) != (a.DeletionTimestamp == nil) ||
		!slices.Equal(recordedClaims(b), recordedClaims(a))
}

// myAppsMeeting lists, from the cache, the MyApps other than self with a host that meets one
// of hosts.
// It walks every cached MyApp, without copying them (it only reads), rather than look them up
// in a field index: an index on the manager's cache would start a MyApp informer in a manager
// that never leads (a standby, or one without the RBAC to list MyApps), whose sync would hold
// its start and its shutdown; the controllers' own informers start with the leadership.
func (r *MyAppReconciler) myAppsMeeting(ctx context.Context, self types.NamespacedName, hosts []examplev1.Hostname) ([]*examplev1.MyApp, error) {
	list := &examplev1.MyAppList{}
	if err := r.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return meetingIn(list.Items, self, hosts), nil
}

// meetingIn picks the MyApps of items other than self with a host that meets one of hosts.
func meetingIn(items []examplev1.MyApp, self types.NamespacedName, hosts []examplev1.Hostname) []*examplev1.MyApp {
	var out []*examplev1.MyApp
	for i := range items {
		m := &items[i]
		if m.Spec.Expose == nil || (m.Name == self.Name && m.Namespace == self.Namespace) {
			continue
		}
		if slices.ContainsFunc(m.Spec.Expose.Hosts, func(h examplev1.Hostname) bool {
			return slices.ContainsFunc(hosts, func(mine examplev1.Hostname) bool { return hostclaims.HostsMeet(string(h), string(mine)) })
		}) {
			out = append(out, m)
		}
	}
	return out
}

// judgeClaims judges the MyApp's hosts and records the ones it holds before they are served.
// It returns the MyApp to expose: app itself when it holds every host, else a copy whose
// spec.expose keeps only the hosts it holds (none: not exposed); obs gets the record and a
// HostClaimed failure for each refused host.
func (r *MyAppReconciler) judgeClaims(ctx context.Context, app *examplev1.MyApp, obs *status.Observed) (*examplev1.MyApp, error) {
	e := app.Spec.Expose
	if e == nil {
		return app, nil // obs.Exposure stays nil: the status write lets the record go
	}
	path := desired.ExposedPath(e)
	now := metav1.NewTime(r.now()).Rfc3339Copy() // the status keeps seconds
	mine := make([]hostclaims.Claim, 0, len(e.Hosts))
	// field is the place in spec.expose.hosts of each claim of mine, and hosts its host.
	field := make([]int, 0, len(e.Hosts))
	hosts := make([]examplev1.Hostname, 0, len(e.Hosts))
	for i, h := range e.Hosts {
		if !r.HostSuffixes.Allows(app.Namespace, string(h)) {
			// A host the namespace may not claim is neither served nor recorded: it holds
			// nothing against the MyApps that may claim it.
			suffixes, _ := r.HostSuffixes.For(app.Namespace)
			obs.Failures = append(obs.Failures, status.HostNotAllowed(i, string(h), app.Namespace, suffixes))
			continue
		}
		field, hosts = append(field, i), append(hosts, h)
		c := hostclaims.Claim{Namespace: app.Namespace, Name: app.Name, Host: string(h), Path: path, Since: now.Time}
		for _, rec := range recordedClaims(app) {
			if string(rec.Host) == c.Host && rec.Path == path {
				c.Since, c.Recorded = rec.Since.Time, true
			}
		}
		mine = append(mine, c)
	}
	// Only the claims of hosts the namespace may claim are judged.
	meeting, err := r.myAppsMeeting(ctx, client.ObjectKeyFromObject(app), hosts)
	if err != nil {
		return nil, err
	}
	var others []hostclaims.Claim
	for _, m := range meeting {
		others = append(others, r.heldClaims(m)...)
	}
	held, refused := hostclaims.Judge(mine, others)
	for i := range refused {
		refused[i].Index = field[refused[i].Index]
	}

	record := make([]examplev1.HostClaim, 0, len(held))
	for _, c := range held {
		record = append(record, examplev1.HostClaim{Host: examplev1.Hostname(c.Host), Path: c.Path, Since: metav1.NewTime(c.Since)})
	}
	if slices.ContainsFunc(held, func(c hostclaims.Claim) bool { return !c.Recorded }) {
		// A claim is recorded before the child that serves it is applied: its age is what
		// decides against a later claimant, and it must survive a restart.
		if err := r.recordStatus(ctx, app, "the hosts it holds", func(s *examplev1.MyAppStatus) {
			s.Exposure = &examplev1.ExposureStatus{Claims: record}
		}); err != nil {
			return nil, err
		}
	}
	obs.Exposure = nil
	if len(record) > 0 {
		obs.Exposure = &examplev1.ExposureStatus{Claims: record}
	}
	if len(held) == len(e.Hosts) {
		return app, nil
	}
	for _, ref := range refused {
		obs.Failures = append(obs.Failures, status.HostClaimed(ref))
	}
	served := app.DeepCopy()
	if len(held) == 0 {
		served.Spec.Expose = nil
		return served, nil
	}
	served.Spec.Expose.Hosts = nil
	for _, c := range held {
		served.Spec.Expose.Hosts = append(served.Spec.Expose.Hosts, examplev1.Hostname(c.Host))
	}
	return served, nil
}

// recordedClaims are the claims the MyApp's status records.
func recordedClaims(app *examplev1.MyApp) []examplev1.HostClaim {
	if app.Status.Exposure == nil {
		return nil
	}
	return app.Status.Exposure.Claims
}

// heldClaims are the recorded claims of another MyApp that it still asks for and its namespace
// may claim: a host dropped from its spec, a MyApp being deleted, or a host suffix the
// administrator no longer allows its namespace, lets the host go before its status says so.
func (r *MyAppReconciler) heldClaims(app *examplev1.MyApp) []hostclaims.Claim {
	if app.Spec.Expose == nil || app.DeletionTimestamp != nil {
		return nil
	}
	path := desired.ExposedPath(app.Spec.Expose)
	var out []hostclaims.Claim
	for _, rec := range recordedClaims(app) {
		if rec.Path == path && slices.Contains(app.Spec.Expose.Hosts, rec.Host) && r.HostSuffixes.Allows(app.Namespace, string(rec.Host)) {
			out = append(out, hostclaims.Claim{Namespace: app.Namespace, Name: app.Name, Host: string(rec.Host), Path: rec.Path,
				Since: rec.Since.Time, Recorded: true})
		}
	}
	return out
}
