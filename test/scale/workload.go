package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
	"github.com/example/myapp-operator/internal/desired"
)

// The workload of issue 8: MyApps with two replicas of nginx, everything else defaulted.
const (
	workloadImage    = "nginx:1.27"
	workloadReplicas = 2
	// concurrency is how many requests the benchmark has in flight, in every phase.
	concurrency = 10
	// rawFieldOwner applies the objects of the raw baseline, the floor and the least writes.
	rawFieldOwner = "bench-raw"
)

func appName(i int) string { return fmt.Sprintf("app-%05d", i) }

func newMyApp(namespace string, i int) *examplev1.MyApp {
	replicas := int32(workloadReplicas)
	return &examplev1.MyApp{
		ObjectMeta: metav1.ObjectMeta{Name: appName(i), Namespace: namespace},
		Spec:       examplev1.MyAppSpec{Replicas: &replicas, Image: workloadImage},
	}
}

// parallel runs job(0..n-1) with the benchmark's concurrency and returns the first error.
func parallel(ctx context.Context, n int, job func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range concurrency {
		wg.Go(func() {
			for i := range jobs {
				if err := job(ctx, i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					cancel()
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return ctx.Err()
}

// writeStep is one kind of write a phase times: count requests, job(0..count-1), sent with the
// benchmark's concurrency.
type writeStep struct {
	Name  string
	Raw   bool // the raw baseline sends these writes too
	Count int
	Job   func(ctx context.Context, i int) error
}

// rawBaseline is the raw baseline's one step: applying, straight from a client, the
// Deployments and Services the operator would make for n MyApps, a MyApp's two one after the
// other. The MyApp they are built from is the API server's own defaulting of the benchmark's
// MyApp (a dry-run create), so that the objects are exactly the operator's.
func rawBaseline(ctx context.Context, c client.Client, namespace string, n int) ([]writeStep, error) {
	template := newMyApp(namespace, 0)
	if err := c.Create(ctx, template, client.DryRunAll); err != nil {
		return nil, fmt.Errorf("dry-run create of a MyApp: %w", err)
	}
	return []writeStep{{Name: "Deployment and Service applies", Count: 2 * n, Job: func(ctx context.Context, j int) error {
		app := template.DeepCopy()
		app.Name = appName(j / 2)
		// An owner reference needs a uid; no MyApp owns these objects, and nothing in
		// envtest collects garbage.
		app.UID = uuid.NewUUID()
		if j%2 == 0 {
			return applyDeployment(ctx, c, app)
		}
		return applyService(ctx, c, app)
	}}}, nil
}

// applyDeployment applies the MyApp's Deployment as the benchmark's client (opts: a dry run
// for the warm-up).
func applyDeployment(ctx context.Context, c client.Client, app *examplev1.MyApp, opts ...client.ApplyOption) error {
	dep, err := desired.Deployment(app, false)
	if err != nil {
		return err
	}
	opts = append([]client.ApplyOption{client.FieldOwner(rawFieldOwner), client.ForceOwnership}, opts...)
	if err := c.Apply(ctx, dep, opts...); err != nil {
		return fmt.Errorf("applying Deployment %s: %w", app.Name, err)
	}
	return nil
}

// applyService applies the MyApp's Service as the benchmark's client (opts as applyDeployment).
func applyService(ctx context.Context, c client.Client, app *examplev1.MyApp, opts ...client.ApplyOption) error {
	opts = append([]client.ApplyOption{client.FieldOwner(rawFieldOwner), client.ForceOwnership}, opts...)
	if err := c.Apply(ctx, desired.Service(app, false), opts...); err != nil {
		return fmt.Errorf("applying Service %s: %w", app.Name, err)
	}
	return nil
}

// operatorWrites sends, from a client, the writes the operator makes for a new MyApp i, one
// method per kind: the user's create of the MyApp, the applies of its Deployment and its
// Service, a status patch and an event. The floor and the least writes are made of them.
type operatorWrites struct {
	c         client.Client
	namespace string
	status    examplev1.MyAppStatus // one the operator wrote in the operator phase
	apps      []*examplev1.MyApp    // as created; a job reads only its own entry
}

func newOperatorWrites(c client.Client, namespace string, n int, status examplev1.MyAppStatus) *operatorWrites {
	return &operatorWrites{c: c, namespace: namespace, status: status, apps: make([]*examplev1.MyApp, n)}
}

func (w *operatorWrites) create(ctx context.Context, i int) (err error) {
	w.apps[i], err = createMyApp(ctx, w.c, w.namespace, i)
	return err
}

func (w *operatorWrites) deployment(ctx context.Context, i int) error {
	return applyDeployment(ctx, w.c, w.apps[i])
}

func (w *operatorWrites) service(ctx context.Context, i int) error {
	return applyService(ctx, w.c, w.apps[i])
}

// getService and getDeployment read a new MyApp's child as the operator does on a cache
// miss, and expect to find none.
func (w *operatorWrites) getService(ctx context.Context, i int) error {
	return expectAbsent(ctx, w.c, w.apps[i], &corev1.Service{})
}

func (w *operatorWrites) getDeployment(ctx context.Context, i int) error {
	return expectAbsent(ctx, w.c, w.apps[i], &appsv1.Deployment{})
}

func expectAbsent(ctx context.Context, c client.Client, app *examplev1.MyApp, obj client.Object) error {
	err := c.Get(ctx, client.ObjectKeyFromObject(app), obj)
	if err == nil {
		return fmt.Errorf("reading %T %s: found one before it was applied", obj, app.Name)
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading %T %s: %w", obj, app.Name, err)
	}
	return nil
}

func (w *operatorWrites) statusPatch(ctx context.Context, i int) error {
	app := w.apps[i]
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	app.Status = *w.status.DeepCopy()
	app.Status.ObservedGeneration = app.Generation
	if err := w.c.Status().Patch(ctx, app, patch); err != nil {
		return fmt.Errorf("status of MyApp %s: %w", app.Name, err)
	}
	return nil
}

func (w *operatorWrites) event(ctx context.Context, i int) error {
	app := w.apps[i]
	now := metav1.Now()
	event := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.namespace, GenerateName: app.Name + "."},
		InvolvedObject: corev1.ObjectReference{APIVersion: examplev1.GroupVersion.String(), Kind: "MyApp",
			Namespace: w.namespace, Name: app.Name, UID: app.UID, ResourceVersion: app.ResourceVersion},
		Reason: "Created", Message: "Created Service " + app.Name + ", Deployment " + app.Name,
		Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: rawFieldOwner},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if err := w.c.Create(ctx, event); err != nil {
		return fmt.Errorf("event of MyApp %s: %w", app.Name, err)
	}
	return nil
}

// floorBaseline returns the floor's steps: the operator's writes for n new MyApps, sent one
// kind at a time, n of each. Timing each kind alone tells what each costs the API server.
func floorBaseline(c client.Client, namespace string, n int, status examplev1.MyAppStatus) []writeStep {
	w := newOperatorWrites(c, namespace, n, status)
	return []writeStep{
		{Name: "MyApp creates", Count: n, Job: w.create},
		{Name: "Deployment applies", Raw: true, Count: n, Job: w.deployment},
		{Name: "Service applies", Raw: true, Count: n, Job: w.service},
		{Name: "status patches", Count: n, Job: w.statusPatch},
		{Name: "events", Count: n, Job: w.event},
	}
}

// leastWrites is the one step of the least-writes phases: per MyApp, in the operator's order,
// the writes no operator that keeps an honest status can leave out (the user's create, the
// Service and Deployment applies, one status write; not the event), for n MyApps, 10 in flight
// like the raw baseline. With reads, each child's apply follows an uncached GET of it that finds
// nothing: the one GET per child issue 19 allows a new MyApp (the least requests). An operator
// sends at least these and does its own work besides. Where every core is busy in both phases
// (the CPU rows of the report), more requests in flight do not make them cheaper, and their time
// over the raw baseline's is about the lowest ratio any operator can reach in that run; where
// the cores are not all busy, an operator with more in flight can do better.
func leastWrites(c client.Client, namespace string, n int, status examplev1.MyAppStatus, reads bool) writeStep {
	w := newOperatorWrites(c, namespace, n, status)
	name, seq := "MyApps' least writes", []func(context.Context, int) error{w.create, w.service, w.deployment, w.statusPatch}
	if reads {
		name, seq = "MyApps' least requests", []func(context.Context, int) error{w.create, w.getService, w.service,
			w.getDeployment, w.deployment, w.statusPatch}
	}
	return writeStep{Name: name, Count: n, Job: func(ctx context.Context, i int) error {
		for _, write := range seq {
			if err := write(ctx, i); err != nil {
				return err
			}
		}
		return nil
	}}
}

// warmUpNamespace holds the warm-up's one real MyApp, out of every phase's namespace and
// so out of the manager's sight and of every count.
const warmUpNamespace = "bench-warm-up"

// warmUp sends one of each write the phases time: as dry runs in namespace, a MyApp create,
// the applies of a Deployment and a Service, and an event; and, since a status patch needs a
// MyApp that exists, the create of one in warmUpNamespace and a patch of its status. Each
// phase runs on a fresh API server, whose first requests of a kind pay one-time costs
// (caches, type converters, admission set-up); every phase pays them before its clock starts.
func warmUp(ctx context.Context, c client.Client, namespace string) error {
	app := newMyApp(namespace, 0)
	app.Name = "warm-up"
	if err := c.Create(ctx, app, client.DryRunAll); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	app.UID = uuid.NewUUID()
	if err := applyDeployment(ctx, c, app, client.DryRunAll); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if err := applyService(ctx, c, app, client.DryRunAll); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	event := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: namespace, GenerateName: app.Name + "."},
		InvolvedObject: corev1.ObjectReference{Kind: "MyApp", Namespace: namespace, Name: app.Name},
		Reason:         "WarmUp", Type: corev1.EventTypeNormal,
	}
	if err := c.Create(ctx, event, client.DryRunAll); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if err := createNamespace(ctx, c, warmUpNamespace); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	status := examplev1.MyAppStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse,
		Reason: "WarmUp", Message: "warming up", LastTransitionTime: metav1.Now()}}}
	w := newOperatorWrites(c, warmUpNamespace, 1, status)
	if err := w.create(ctx, 0); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if err := w.statusPatch(ctx, 0); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	return nil
}

// createMyApps creates n MyApps with the benchmark's concurrency.
func createMyApps(ctx context.Context, c client.Client, namespace string, n int) error {
	return parallel(ctx, n, func(ctx context.Context, i int) error {
		_, err := createMyApp(ctx, c, namespace, i)
		return err
	})
}

// createMyApp creates the benchmark's MyApp i, as a user would, and returns it as created.
func createMyApp(ctx context.Context, c client.Client, namespace string, i int) (*examplev1.MyApp, error) {
	app := newMyApp(namespace, i)
	if err := c.Create(ctx, app); err != nil {
		return nil, fmt.Errorf("creating MyApp %s: %w", app.Name, err)
	}
	return app, nil
}
