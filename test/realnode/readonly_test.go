package realnode

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

// expectReadOnlyRoot checks the running manager pod twice: its spec asks for a read-only root
// filesystem (what Pod Security admitted), and the kernel agrees. The manager process, found
// on this machine by its container's cgroup, has / mounted read-only in its mount namespace
// and /tmp (an emptyDir) writable.
func expectReadOnlyRoot(pod corev1.Pod) {
	c := pod.Spec.Containers[0]
	Expect(c.SecurityContext).NotTo(BeNil())
	Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()), "the manager pod's readOnlyRootFilesystem")
	Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
	_, id, ok := strings.Cut(pod.Status.ContainerStatuses[0].ContainerID, "://")
	Expect(ok).To(BeTrue(), "container ID %q", pod.Status.ContainerStatuses[0].ContainerID)

	pid := processOfContainer(id, "/manager")
	mounts, err := os.ReadFile(filepath.Join("/proc", pid, "mountinfo"))
	Expect(err).NotTo(HaveOccurred())
	options := map[string]string{}
	for _, line := range strings.Split(string(mounts), "\n") {
		// mountinfo: ID parent major:minor root mount-point options ...
		f := strings.Fields(line)
		if len(f) > 5 {
			options[f[4]] = f[5]
		}
	}
	Expect(options).To(HaveKey("/"), "the manager's mounts:\n%s", mounts)
	Expect(strings.Split(options["/"], ",")).To(ContainElement("ro"), "the manager's root mount is not read-only: %s", options["/"])
	Expect(options).To(HaveKey("/tmp"), "the manager's mounts:\n%s", mounts)
	Expect(strings.Split(options["/tmp"], ",")).To(ContainElement("rw"), "the manager's /tmp is not writable: %s", options["/tmp"])
}

// processOfContainer finds the pid of the process running program in the container with the
// given ID, from /proc: the kubelet's cgroupfs driver names the container's cgroup after its
// ID. It fails the test when there is none, so the check can never pass without looking.
func processOfContainer(id, program string) string {
	dirs, err := os.ReadDir("/proc")
	Expect(err).NotTo(HaveOccurred())
	var found []string
	for _, d := range dirs {
		cgroup, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cgroup"))
		if err != nil || !bytes.Contains(cgroup, []byte(id)) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && string(bytes.SplitN(cmdline, []byte{0}, 2)[0]) == program {
			found = append(found, d.Name())
		}
	}
	Expect(found).To(HaveLen(1), "processes running %s in container %s", program, id)
	return found[0]
}
