package main

import "fmt"

// containerdConfig keeps containerd to itself: its own root, state, sockets and plugin
// folder under dir, so a system containerd is never touched. The settings this needs beyond
// containerd's defaults:
//   - restrict_oom_score_adj: runc cannot lower a sandbox's oom_score_adj where the process
//     lacks CAP_SYS_RESOURCE (it fails with "can't get final child's PID from pipe: EOF");
//   - netns_mounts_under_state_dir: pod network namespaces stay under dir, not /run/netns;
//   - SystemdCgroup = false: the kubelet uses cgroupfs;
//   - registry.config_path: certs.d/<registry>/hosts.toml lets it pull over plain HTTP.
func containerdConfig(dir, socket, pauseImage string) string {
	return fmt.Sprintf(`version = 2
root = "%[1]s/containerd/root"
state = "%[1]s/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "%[2]s"

[ttrpc]
  address = "%[2]s.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "%[1]s/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "%[3]s"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "%[1]s/containerd/runc"

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "%[4]s"
    conf_dir = "%[1]s/cni"
    max_conf_num = 1

  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "%[1]s/containerd/certs.d"
`, dir, socket, pauseImage, cniBinDir)
}

// cniConfig is a bridge network on our bridge, addresses from host-local with its state under
// ipamDir, and portmap for hostPorts. No IP masquerade: pods talk only to this machine and
// each other, so CNI adds no NAT chains per pod.
func cniConfig(ipamDir string) string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": %q,
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %q,
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, cniNetwork, bridgeName, ipamDir, podCIDR, nodeIP)
}

// kubeletConfig: cgroup v1 allowed (1.35+ refuses it by default), cgroupfs under our own
// cgroup root, containerd's socket, the pod CIDR of our bridge, ports picked free, pod logs in
// the state folder, client certificates of the cluster's CA accepted, and eviction only when
// the disk is really full (the state folder shares a disk with everything else).
func kubeletConfig(r *realNode, caCert string, port, healthzPort int) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
failSwapOn: false
cgroupDriver: cgroupfs
cgroupRoot: %q
containerRuntimeEndpoint: unix://%s
podCIDR: %q
address: %q
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
podLogsDir: %q
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %q
authorization:
  mode: Webhook
serializeImagePulls: false
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
`, cgroupRoot, r.socket(), podCIDR, nodeIP, port, healthzPort, r.path("pod-logs"), caCert)
}

// kubeProxyConfig: iptables mode, its own ports on loopback, NodePorts only on the node's
// address, and no conntrack sysctl changed on this machine.
func kubeProxyConfig(kubeconfig string, healthzPort, metricsPort int) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %q
hostnameOverride: %q
mode: iptables
clusterCIDR: %q
bindAddress: %q
healthzBindAddress: 127.0.0.1:%d
metricsBindAddress: 127.0.0.1:%d
nodePortAddresses: [%q]
iptables:
  localhostNodePorts: false
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, kubeconfig, realNodeName, podCIDR, nodeIP, healthzPort, metricsPort, nodeIP+"/32")
}
