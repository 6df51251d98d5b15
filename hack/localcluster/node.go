package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// The kinds of node a cluster can have (--node).
const (
	// nodeKwok: only simulated nodes; no container runs. Fast: the default.
	nodeKwok = "kwok"
	// nodeReal: a real kubelet with containerd, CNI and kube-proxy, so pods run; simulated
	// nodes only if asked for (--nodes).
	nodeReal = "real"
)

// A nodeBackend runs some of the cluster's nodes: kwok's simulated ones or a real kubelet.
type nodeBackend interface {
	// components are the processes it runs, in start order.
	components() []string
	// prepare readies this machine before the control plane starts.
	prepare() error
	// apiserverAddress is the address the API server must serve on for these nodes' pods to
	// reach it, or "" when loopback will do.
	apiserverAddress() string
	// start runs its processes against the control plane and registers its nodes.
	start(ctx context.Context, c *cluster) error
	// ready tells whether its nodes take pods.
	ready(ctx context.Context, cs kubernetes.Interface) (bool, error)
	// String describes its nodes for a person.
	String() string
}

// nodeBackends are the backends of the kind of node asked for.
func nodeBackends(o Options) ([]nodeBackend, error) {
	kwokNodes := o.Nodes
	switch o.Node {
	case nodeKwok:
		if kwokNodes < 0 {
			kwokNodes = 2
		}
		return []nodeBackend{&kwokBackend{o: o, count: kwokNodes}}, nil
	case nodeReal:
		backends := []nodeBackend{newRealNode(o)}
		if kwokNodes > 0 {
			// Beside a real node, simulated ones take only the pods that tolerate them.
			backends = append(backends, &kwokBackend{o: o, count: kwokNodes, tainted: true})
		}
		return backends, nil
	}
	return nil, fmt.Errorf("--node %q: want %s or %s", o.Node, nodeKwok, nodeReal)
}

func nodeComponents(nodes []nodeBackend) []string {
	var names []string
	for _, n := range nodes {
		names = append(names, n.components()...)
	}
	return names
}

func describeNodes(nodes []nodeBackend) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = n.String()
	}
	return strings.Join(parts, " and ")
}

// nodeKindPath records the kind of node a cluster was started with, for down.
func nodeKindPath(o Options) string { return filepath.Join(o.StateDir, "node-kind") }

// recordedNodeKind is the kind of node of the cluster in the state folder, or "".
func recordedNodeKind(o Options) string {
	b, _ := os.ReadFile(nodeKindPath(o))
	return string(b)
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
