package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "github.com/example/myapp-operator/api/v1"
)

// operatorWatches are the watches every informer-based operator of MyApps keeps open in its
// namespace, on the MyApps and on the two kinds of children, opened by the benchmark in the
// watched least phases, so that the API server sends and the client decodes what they would for
// an operator. Each counts the events it decoded.
type operatorWatches struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	kinds  []*watchedKind
}

type watchedKind struct {
	name   string
	want   int // events the phase's writes make: the count is checked against it
	events atomic.Int64
	err    atomic.Value // error
}

// openWatches opens the watches in namespace and returns once the API server has answered
// each. want gives, per kind, how many events the phase's writes make.
func openWatches(ctx context.Context, cfg *rest.Config, namespace string, wantApps, wantDeployments, wantServices int,
) (*operatorWatches, error) {
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &operatorWatches{cancel: cancel}
	for _, k := range []struct {
		name string
		list client.ObjectList
		want int
	}{
		{"MyApps", &examplev1.MyAppList{}, wantApps},
		{"Deployments", &appsv1.DeploymentList{}, wantDeployments},
		{"Services", &corev1.ServiceList{}, wantServices},
	} {
		wi, err := c.Watch(ctx, k.list, client.InNamespace(namespace))
		if err != nil {
			w.stop()
			return nil, fmt.Errorf("watching %s: %w", k.name, err)
		}
		kind := &watchedKind{name: k.name, want: k.want}
		w.kinds = append(w.kinds, kind)
		w.wg.Go(func() {
			defer wi.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-wi.ResultChan():
					if !ok {
						kind.err.Store(fmt.Errorf("the watch of %s ended early", kind.name))
						return
					}
					if ev.Type == watch.Error {
						kind.err.Store(fmt.Errorf("the watch of %s: %v", kind.name, ev.Object))
						return
					}
					kind.events.Add(1)
				}
			}
		})
	}
	return w, nil
}

// close waits, up to timeout, for every watch to have decoded the events the phase made, then
// closes them. A watch that ended early or fell short is an error: the phase then did not
// pay what it claims to.
func (w *operatorWatches) close(ctx context.Context, timeout time.Duration) error {
	defer w.stop()
	err := waitFor(ctx, timeout, "the watches to decode the events the writes made", func(context.Context) (bool, error) {
		for _, k := range w.kinds {
			if err, _ := k.err.Load().(error); err != nil {
				return false, err
			}
			if int(k.events.Load()) < k.want {
				return false, nil
			}
		}
		return true, nil
	})
	if err == nil || ctx.Err() != nil {
		return err
	}
	var short []string
	for _, k := range w.kinds {
		if got := int(k.events.Load()); got < k.want {
			short = append(short, fmt.Sprintf("%s %d of %d", k.name, got, k.want))
		}
	}
	return fmt.Errorf("%w (decoded: %s)", err, strings.Join(short, ", "))
}

// stop closes the watches at once.
func (w *operatorWatches) stop() {
	w.cancel()
	w.wg.Wait()
}
