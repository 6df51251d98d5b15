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

// repairPortClash puts back the number of the operator's port (desired.PortName) where
// someone changed it: in the Service's ports, or in the application container's ports. Server-
// side apply merges those lists by number, so the edited item and the operator's would both
// carry the port's name and the API server rejects the apply (ssa.RepairKeyClash). It
// reports whether it changed anything.
func (r *MyAppReconciler) repairPortClash(ctx context.Context, obj client.Object, cfg runtime.ApplyConfiguration) (bool, error) {
	switch o := obj.(type) {
	case *corev1.Service:
		l := ssa.KeyedList{Path: "/spec/ports", KeyField: "port"}
		for _, p := range o.Spec.Ports {
			l.Names, l.Keys = append(l.Names, p.Name), append(l.Keys, p.Port)
		}
		return ssa.RepairKeyClash(ctx, r.Client, obj, FieldOwner, desired.PortName, wantedServicePort(cfg), l)
	case *appsv1.Deployment:
		var lists []ssa.KeyedList
		for c, container := range o.Spec.Template.Spec.Containers {
			if container.Name != desired.ContainerName {
				continue
			}
			l := ssa.KeyedList{Path: fmt.Sprintf("/spec/template/spec/containers/%d/ports", c), KeyField: "containerPort"}
			for _, p := range container.Ports {
				l.Names, l.Keys = append(l.Names, p.Name), append(l.Keys, p.ContainerPort)
			}
			lists = append(lists, l)
		}
		return ssa.RepairKeyClash(ctx, r.Client, obj, FieldOwner, desired.PortName, wantedContainerPort(cfg), lists...)
	}
	return false, nil
}

// wantedServicePort is the port number the Service apply configuration asks for.
func wantedServicePort(cfg runtime.ApplyConfiguration) int32 {
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
func wantedContainerPort(cfg runtime.ApplyConfiguration) int32 {
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
