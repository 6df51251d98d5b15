package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// kwokNodeLabel marks the nodes kwok simulates; kwok manages only nodes that carry it, never
// a real node beside them.
const kwokNodeLabel = "type=kwok"

// kwokTaint keeps pods off the simulated nodes when a real node runs beside them.
var kwokTaint = corev1.Taint{Key: "kwok.x-k8s.io/node", Value: "fake", Effect: corev1.TaintEffectNoSchedule}

// kwokBackend runs kwok, which plays the kubelet of count simulated nodes: pods become Ready
// with fake IPs and no container runs.
type kwokBackend struct {
	o       Options
	count   int
	tainted bool
}

func (k *kwokBackend) components() []string {
	if k.count == 0 {
		return nil
	}
	return []string{"kwok"}
}

func (k *kwokBackend) prepare() error           { return nil }
func (k *kwokBackend) apiserverAddress() string { return "" }

func (k *kwokBackend) String() string {
	if k.tainted {
		return fmt.Sprintf("%d simulated nodes (tainted %s)", k.count, kwokTaint.ToString())
	}
	return fmt.Sprintf("%d simulated nodes", k.count)
}

func (k *kwokBackend) start(ctx context.Context, c *cluster) error {
	if k.count == 0 {
		return nil
	}
	stages := filepath.Join(k.o.StateDir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, []byte(kwokStages), 0o644); err != nil {
		return err
	}
	// Fake pod IPs come from a range no real pod uses. The nodes' heartbeat is a Lease that
	// kwok renews, as kubelets do: on a busy machine, with thousands of simulated pods, kwok's
	// node status updates alone fell more than the controller manager's 2-minute grace apart
	// (seen in make bench-scale's churn run), the node lifecycle controller then marked every
	// pod not ready, and kwok never makes a pod ready again.
	if err := start(k.o, "kwok", k.o.Kwok, "--kubeconfig="+kubeconfigPath(k.o), "--config="+stages,
		"--manage-all-nodes=false", "--manage-nodes-with-label-selector="+kwokNodeLabel,
		"--node-lease-duration-seconds=40",
		"--node-port=0", "--cidr=10.250.0.1/16", "--node-ip=127.0.0.1"); err != nil {
		return err
	}
	return k.createNodes(ctx, c.cs)
}

// createNodes registers the simulated nodes, with the label kwok selects them by.
func (k *kwokBackend) createNodes(ctx context.Context, cs kubernetes.Interface) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("128Gi"),
		corev1.ResourcePods:   resource.MustParse("250"),
	}
	for i := range k.count {
		name := fmt.Sprintf("kwok-node-%d", i)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Labels:      map[string]string{"type": "kwok", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux"},
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			},
			Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
		}
		if k.tainted {
			node.Spec.Taints = []corev1.Taint{kwokTaint}
		}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
	}
	return nil
}

// ready holds once every simulated node is Ready with no taint but ours.
func (k *kwokBackend) ready(ctx context.Context, cs kubernetes.Interface) (bool, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: kwokNodeLabel})
	if err != nil || len(nodes.Items) < k.count {
		return false, nil
	}
	for _, n := range nodes.Items {
		if !nodeReady(n) {
			return false, nil
		}
		for _, t := range n.Spec.Taints {
			if t.Key != kwokTaint.Key {
				return false, nil
			}
		}
	}
	return true, nil
}
