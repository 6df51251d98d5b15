package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestUnescapeMount(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"plain":           {"/work/a/.localcluster/node", "/work/a/.localcluster/node"},
		"space and a tab": {`/work/my\040dir/x\011y`, "/work/my dir/x\ty"},
		"backslash":       {`/a\134b`, `/a\b`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := unescapeMount(c.in); got != c.want {
				t.Errorf("unescapeMount(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// A real node's mounts as /proc/self/mountinfo lists them (proc(5)): id, parent, major:minor,
// root, mount point, options, optional fields, "-", type, source, super options.
const realNodeMountinfo = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
25 22 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw
310 22 0:55 / /work/a/.localcluster-realnode/node/containerd/state/io.containerd.runtime.v2.task/k8s.io/3f1e/rootfs rw,relatime shared:160 - overlay overlay rw,lowerdir=/x,upperdir=/y,workdir=/z
311 22 0:56 / /work/a/.localcluster-realnode/node/containerd/state/io.containerd.grpc.v1.cri/sandboxes/3f1e/shm rw,nosuid,nodev,noexec,relatime shared:161 - tmpfs shm rw,size=65536k
312 22 0:4 net:[4026532777] /work/a/.localcluster-realnode/node/containerd/state/netns/cni-6b1c rw shared:162 - nsfs nsfs rw
313 22 0:57 / /work/a/.localcluster-realnode/node/kubelet/pods/9d2e/volumes/kubernetes.io~projected/kube-api-access-x rw,relatime shared:163 - tmpfs tmpfs rw,size=1048576k
314 313 0:58 / /work/a/.localcluster-realnode/node/kubelet/pods/9d2e/volumes/kubernetes.io~projected/kube-api-access-x/sub rw shared:164 - tmpfs tmpfs rw
320 22 0:59 / /work/old\040clone/.localcluster/node/kubelet/pods/1a/volumes/v rw shared:170 - tmpfs tmpfs rw
321 22 0:60 / /gone/.localcluster/node/kubelet/pods/2b/volumes/v//deleted rw shared:171 - tmpfs tmpfs rw
330 22 0:61 / /work/a/localcluster/x rw shared:172 - tmpfs tmpfs rw
331 22 0:4 net:[4026532888] /run/netns/cni-1234 rw shared:173 - nsfs nsfs rw
`

func TestMountPoints(t *testing.T) {
	points := mountPoints(realNodeMountinfo)
	if len(points) != 11 || points[0] != "/" || points[1] != "/sys/fs/cgroup" {
		t.Fatalf("mountPoints = %q", points)
	}
	if points[7] != "/work/old clone/.localcluster/node/kubelet/pods/1a/volumes/v" {
		t.Errorf("an escaped mount point reads %q", points[8])
	}
	if points[8] != "/gone/.localcluster/node/kubelet/pods/2b/volumes/v" {
		t.Errorf("a mount point whose folder was removed reads %q", points[9])
	}
}

func TestDeepestFirst(t *testing.T) {
	cases := map[string]struct {
		points []string
		want   []string
	}{
		"a mount below another, listed after it": {
			[]string{"/s/.localcluster/a", "/s/.localcluster/a/b"},
			[]string{"/s/.localcluster/a/b", "/s/.localcluster/a"}},
		"a deeper mount beside a longer one": {
			[]string{"/s/.localcluster/volumes-of-a-long-name", "/s/.localcluster/a/b/c"},
			[]string{"/s/.localcluster/a/b/c", "/s/.localcluster/volumes-of-a-long-name"}},
		"two mounts stacked on one path, and equals in the listing's order": {
			[]string{"/s/.localcluster/x", "/s/.localcluster/shm", "/s/.localcluster/x"},
			[]string{"/s/.localcluster/x", "/s/.localcluster/shm", "/s/.localcluster/x"}},
		"out of scope": {[]string{"/", "/run/netns/cni-1", "/s/localcluster/a"}, nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := deepestFirst(c.points, inStateFolder); !reflect.DeepEqual(got, c.want) {
				t.Errorf("deepestFirst = %q, want %q", got, c.want)
			}
		})
	}

	t.Run("a real node's mounts", func(t *testing.T) {
		got := deepestFirst(mountPoints(realNodeMountinfo), inStateFolder)
		want := []string{
			"/work/a/.localcluster-realnode/node/kubelet/pods/9d2e/volumes/kubernetes.io~projected/kube-api-access-x/sub",
			"/work/a/.localcluster-realnode/node/containerd/state/io.containerd.runtime.v2.task/k8s.io/3f1e/rootfs",
			"/work/a/.localcluster-realnode/node/containerd/state/io.containerd.grpc.v1.cri/sandboxes/3f1e/shm",
			"/work/a/.localcluster-realnode/node/kubelet/pods/9d2e/volumes/kubernetes.io~projected/kube-api-access-x",
			"/work/old clone/.localcluster/node/kubelet/pods/1a/volumes/v",
			"/work/a/.localcluster-realnode/node/containerd/state/netns/cni-6b1c",
			"/gone/.localcluster/node/kubelet/pods/2b/volumes/v",
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("deepestFirst =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		down := deepestFirst(mountPoints(realNodeMountinfo), func(p string) bool { return isUnder(p, "/work/a/.localcluster-realnode") })
		if len(down) != 5 {
			t.Errorf("down's scope holds %d mount points, want the 5 of its state folder: %q", len(down), down)
		}
	})
}
