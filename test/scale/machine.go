package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// machine names where the figures were measured.
type machine struct {
	CPUs      int
	Model     string
	MemoryGiB float64
	Kernel    string
	Go        string
	APIServer string
	Etcd      string
}

func describeMachine() (machine, error) {
	m := machine{CPUs: runtime.NumCPU(), Go: runtime.Version()}
	var err error
	if m.Model, err = procField("/proc/cpuinfo", "model name"); err != nil {
		return m, err
	}
	mem, err := procField("/proc/meminfo", "MemTotal")
	if err != nil {
		return m, err
	}
	kib, err := strconv.ParseFloat(strings.TrimSuffix(mem, " kB"), 64)
	if err != nil {
		return m, fmt.Errorf("MemTotal %q: %w", mem, err)
	}
	m.MemoryGiB = kib / (1 << 20)
	kernel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return m, err
	}
	m.Kernel = strings.TrimSpace(string(kernel))
	etcd, err := exec.Command(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "etcd"), "--version").Output()
	if err != nil {
		return m, fmt.Errorf("etcd --version: %w", err)
	}
	m.Etcd = strings.TrimPrefix(strings.SplitN(string(etcd), "\n", 2)[0], "etcd Version: ")
	return m, nil
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(path, key string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s has no %q", path, key)
}
