package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// mountStep unmounts every mount point in scope, deepest first: containerd's snapshots and
// shm, network namespaces, the kubelet's volumes.
func mountStep(owns func(string) bool) cleanupStep {
	return func(dryRun bool) []leftover {
		b, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			return []leftover{{what: "mounts", err: err}}
		}
		var found []leftover
		for _, mp := range deepestFirst(mountPoints(string(b)), owns) {
			l := leftover{what: "mount " + mp}
			if !dryRun {
				l.err = unmount(mp)
			}
			found = append(found, l)
		}
		return found
	}
}

// mountPoints are the mount points /proc/<pid>/mountinfo lists (its fifth field), in its
// order, decoded. A mount point whose folder was removed is listed by the kernel with
// "//deleted" appended; it is given without it.
func mountPoints(mountinfo string) []string {
	lines := strings.Split(mountinfo, "\n")
	points := make([]string, 0, len(lines))
	for _, line := range lines {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		points = append(points, strings.TrimSuffix(unescapeMount(fields[4]), "//deleted"))
	}
	return points
}

// deepestFirst keeps the mount points that match, the deepest first (by their number of
// path components, in the listing's order among equals), so that each comes before any mount
// point above it: a mount point with mounts below it cannot be unmounted. Mounts stacked on one
// path stay as often as they are listed: each unmount removes the top one.
func deepestFirst(points []string, match func(string) bool) []string {
	var kept []string
	for _, mp := range points {
		if match(mp) {
			kept = append(kept, mp)
		}
	}
	depth := func(p string) int { return strings.Count(strings.TrimSuffix(p, "/"), "/") }
	sort.SliceStable(kept, func(i, j int) bool { return depth(kept[i]) > depth(kept[j]) })
	return kept
}

// unmount unmounts a mount point, lazily (MNT_DETACH) when it is busy: the kernel then drops
// it once its last user is gone. A path that is no longer a mount point, or no longer there
// (a lazily unmounted mount above took it along), is done.
func unmount(mp string) error {
	err := syscall.Unmount(mp, 0)
	if errors.Is(err, syscall.EBUSY) {
		err = syscall.Unmount(mp, syscall.MNT_DETACH)
	}
	if err == nil || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOENT) {
		return nil
	}
	return fmt.Errorf("unmounting %s: %w", mp, err)
}

// unescapeMount decodes the octal escapes (\040 for a space) of /proc/self/mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
