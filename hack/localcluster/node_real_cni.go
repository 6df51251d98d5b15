package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// cniResultsDir is where libcni caches each attachment's result, as
// <network>-<sandbox>-<interface>.
const cniResultsDir = "/var/lib/cni/results"

// netnsDirs are where network namespaces are mounted by name (/var/run is /run on Debian).
var netnsDirs = []string{"/run/netns", "/var/run/netns"}

// removeCNIResults removes what CNI cached for our pods.
func removeCNIResults(dryRun bool) []leftover {
	entries, _ := os.ReadDir(cniResultsDir)
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	ours := map[string]bool{}
	for _, n := range ourCNIResults(names) {
		ours[n] = true
	}
	return removeMatching(cniResultsDir, dryRun, func(name, _ string) bool { return ours[name] })
}

// ourCNIResults picks, from the names of CNI's cached results, those of our network,
// <network>-<sandbox>-<interface>, and the loopback's cni-loopback-<sandbox>-lo of the same
// sandboxes.
func ourCNIResults(names []string) []string {
	sandboxes := map[string]bool{}
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, cniNetwork+"-"); ok {
			sandbox, _, _ := strings.Cut(rest, "-")
			sandboxes[sandbox] = true
		}
	}
	var ours []string
	for _, n := range names {
		rest, loopback := strings.CutPrefix(n, "cni-loopback-")
		sandbox, _, _ := strings.Cut(rest, "-")
		if strings.HasPrefix(n, cniNetwork+"-") || loopback && sandboxes[sandbox] {
			ours = append(ours, n)
		}
	}
	return ours
}

// removeNetns unmounts and removes the named network namespaces (cni-<id> in /run/netns) that
// CNI's cached results of our network name. containerd keeps a real node's namespaces under
// its state folder (netns_mounts_under_state_dir), which mountStep covers; these are what a
// containerd that puts them in /run/netns leaves.
func removeNetns(dryRun bool) []leftover {
	entries, _ := os.ReadDir(cniResultsDir)
	seen := map[string]bool{}
	var found []leftover
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), cniNetwork+"-") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(cniResultsDir, e.Name()))
		if err != nil {
			continue
		}
		network, paths := cniResultNetns(b)
		if network != cniNetwork {
			continue
		}
		for _, p := range paths {
			if _, err := os.Stat(p); err != nil || !isNamedNetns(p) || seen[p] {
				continue
			}
			seen[p] = true
			l := leftover{what: "network namespace " + p}
			if !dryRun {
				if l.err = unmount(p); l.err == nil {
					if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
						l.err = fmt.Errorf("removing the network namespace %s: %w", p, err)
					}
				}
			}
			found = append(found, l)
		}
	}
	return found
}

// cniResultNetns reads a cached CNI result (libcni's cniCacheV1): the network it is of, and the
// network namespaces it names, in its netns field and as its interfaces' sandboxes.
func cniResultNetns(cached []byte) (network string, netns []string) {
	var c struct {
		NetworkName string `json:"networkName"`
		NetNS       string `json:"netns"`
		Result      struct {
			Interfaces []struct {
				Sandbox string `json:"sandbox"`
			} `json:"interfaces"`
		} `json:"result"`
	}
	if json.Unmarshal(cached, &c) != nil {
		return "", nil
	}
	add := func(p string) {
		if p != "" && !slices.Contains(netns, p) {
			netns = append(netns, p)
		}
	}
	add(c.NetNS)
	for _, i := range c.Result.Interfaces {
		add(i.Sandbox)
	}
	return c.NetworkName, netns
}

// isNamedNetns tells whether a path is a network namespace CNI's users name cni-<id> in one
// of netnsDirs.
func isNamedNetns(p string) bool {
	dir, name := filepath.Split(p)
	return strings.HasPrefix(name, "cni-") && slices.Contains(netnsDirs, filepath.Clean(dir))
}
