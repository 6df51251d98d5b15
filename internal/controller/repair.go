package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/myapp-operator/internal/desired"
)

// repairListKeyClash handles the one rejection a forced apply cannot overcome by itself.
// Server-side apply merges list items by key: when someone changes the key of a port we own
// (a Service port's number, a container port's number), the edited item becomes theirs and
// ours is added beside it; both carry our port name, and the API server rejects the
// duplicate. The repair puts our key back into the clashing item (and removes any further
// item with our name), with a JSON patch whose first operation tests the resourceVersion it
// was computed from; the forced apply that follows then owns the item again. Every other
// item (an injected sidecar, an extra port) stays. It reports whether it changed anything.
func (r *MyAppReconciler) repairListKeyClash(ctx context.Context, obj client.Object, cfg any) (bool, error) {
	var ops []map[string]any
	fix := func(list string, key string, want int32, names []string, keys []int32) {
		first := true
		for i := len(names) - 1; i >= 0; i-- {
			if names[i] != desired.PortName || keys[i] == want {
				continue
			}
			if slices.Contains(keys, want) || !first {
				ops = append(ops, testOp(fmt.Sprintf("%s/%d/name", list, i), desired.PortName), map[string]any{"op": "remove", "path": fmt.Sprintf("%s/%d", list, i)})
				continue
			}
			ops = append(ops, testOp(fmt.Sprintf("%s/%d/name", list, i), desired.PortName),
				map[string]any{"op": "replace", "path": fmt.Sprintf("%s/%d/%s", list, i, key), "value": want})
			first = false
		}
	}
	switch o := obj.(type) {
	case *corev1.Service:
		var names []string
		var keys []int32
		for _, p := range o.Spec.Ports {
			names, keys = append(names, p.Name), append(keys, p.Port)
		}
		fix("/spec/ports", "port", wantedServicePort(cfg), names, keys)
	case *appsv1.Deployment:
		for c, container := range o.Spec.Template.Spec.Containers {
			if container.Name != desired.ContainerName {
				continue
			}
			var names []string
			var keys []int32
			for _, p := range container.Ports {
				names, keys = append(names, p.Name), append(keys, p.ContainerPort)
			}
			fix(fmt.Sprintf("/spec/template/spec/containers/%d/ports", c), "containerPort", wantedContainerPort(cfg), names, keys)
		}
	}
	if len(ops) == 0 {
		return false, nil
	}
	ops = append([]map[string]any{testOp("/metadata/resourceVersion", obj.GetResourceVersion())}, ops...)
	body, err := json.Marshal(ops)
	if err != nil {
		return false, err
	}
	if err := r.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, body), client.FieldOwner(FieldOwner)); err != nil {
		return false, fmt.Errorf("repairing the clashing list items: %w", err)
	}
	return true, nil
}

func testOp(path string, value any) map[string]any {
	return map[string]any{"op": "test", "path": path, "value": value}
}

// wantedServicePort is the port number the Service apply configuration asks for.
func wantedServicePort(cfg any) int32 {
	if s, ok := cfg.(*corev1ac.ServiceApplyConfiguration); ok && s.Spec != nil {
		for _, p := range s.Spec.Ports {
			if p.Name != nil && *p.Name == desired.PortName && p.Port != nil {
				return *p.Port
			}
		}
	}
	return 0
}

// wantedContainerPort is the container port the Deployment apply configuration asks for.
func wantedContainerPort(cfg any) int32 {
	d, ok := cfg.(*appsv1ac.DeploymentApplyConfiguration)
	if !ok || d.Spec == nil || d.Spec.Template == nil || d.Spec.Template.Spec == nil {
		return 0
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == nil || *c.Name != desired.ContainerName {
			continue
		}
		for _, p := range c.Ports {
			if p.Name != nil && *p.Name == desired.PortName && p.ContainerPort != nil {
				return *p.ContainerPort
			}
		}
	}
	return 0
}
