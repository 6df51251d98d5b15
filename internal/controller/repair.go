package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/myapp-operator/internal/desired"
	"github.com/example/myapp-operator/internal/ssa"
)

// repairPortClash puts back the number and protocol of each of the operator's ports (http
// and spec.ports, by name) where someone changed them: in the Service's ports, or in the
// application container's ports. Server-side apply merges those lists by number and protocol,
// so the edited item and the operator's would both carry the port's name and the API server
// rejects the apply (ssa.RepairKeyClash). The patch is sent as RepairFieldOwner, whose
// managedFields entry applyChild removes once the apply owns the item again: an entry of the
// patch's own would keep the item alive after the spec drops the port. It reports whether it
// changed anything.
func (r *MyAppReconciler) repairPortClash(ctx context.Context, obj client.Object, cfg runtime.ApplyConfiguration) (bool, error) {
	switch o := obj.(type) {
	case *corev1.Service:
		l := ssa.KeyedList{Path: "/spec/ports", KeyField: "port"}
		for _, p := range o.Spec.Ports {
			l.Items = append(l.Items, ssa.KeyedItem{Name: p.Name, ItemKey: ssa.ItemKey{Number: p.Port, Protocol: string(p.Protocol)}})
		}
		return ssa.RepairKeyClash(ctx, r.Client, obj, RepairFieldOwner, wantedServicePorts(cfg), l)
	case *appsv1.Deployment:
		var lists []ssa.KeyedList
		for c, container := range o.Spec.Template.Spec.Containers {
			if container.Name != desired.ContainerName {
				continue
			}
			l := ssa.KeyedList{Path: fmt.Sprintf("/spec/template/spec/containers/%d/ports", c), KeyField: "containerPort"}
			for _, p := range container.Ports {
				l.Items = append(l.Items, ssa.KeyedItem{Name: p.Name, ItemKey: ssa.ItemKey{Number: p.ContainerPort, Protocol: string(p.Protocol)}})
			}
			lists = append(lists, l)
		}
		return ssa.RepairKeyClash(ctx, r.Client, obj, RepairFieldOwner, wantedContainerPorts(cfg), lists...)
	}
	return false, nil
}

// wantedServicePorts are the ports the Service apply configuration asks for, by name.
func wantedServicePorts(cfg runtime.ApplyConfiguration) map[string]ssa.ItemKey {
	want := map[string]ssa.ItemKey{}
	if s, ok := cfg.(*corev1ac.ServiceApplyConfiguration); ok && s.Spec != nil {
		for _, p := range s.Spec.Ports {
			if p.Name != nil && p.Port != nil {
				want[*p.Name] = ssa.ItemKey{Number: *p.Port, Protocol: protocolOr(p.Protocol)}
			}
		}
	}
	return want
}

// wantedContainerPorts are the application container's ports the Deployment apply
// configuration asks for, by name.
func wantedContainerPorts(cfg runtime.ApplyConfiguration) map[string]ssa.ItemKey {
	want := map[string]ssa.ItemKey{}
	d, ok := cfg.(*appsv1ac.DeploymentApplyConfiguration)
	if !ok || d.Spec == nil || d.Spec.Template == nil || d.Spec.Template.Spec == nil {
		return want
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == nil || *c.Name != desired.ContainerName {
			continue
		}
		for _, p := range c.Ports {
			if p.Name != nil && p.ContainerPort != nil {
				want[*p.Name] = ssa.ItemKey{Number: *p.ContainerPort, Protocol: protocolOr(p.Protocol)}
			}
		}
	}
	return want
}

// protocolOr is a port's protocol as the API server stores it: TCP when left out.
func protocolOr(p *corev1.Protocol) string {
	if p == nil {
		return string(corev1.ProtocolTCP)
	}
	return string(*p)
}
