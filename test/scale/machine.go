package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/prometheus/procfs"
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
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return m, err
	}
	cpus, err := fs.CPUInfo()
	if err != nil {
		return m, err
	}
	if len(cpus) == 0 || cpus[0].ModelName == "" {
		return m, errors.New("/proc/cpuinfo names no CPU model")
	}
	m.Model = cpus[0].ModelName
	mem, err := fs.Meminfo()
	if err != nil {
		return m, err
	}
	if mem.MemTotalBytes == nil {
		return m, errors.New("/proc/meminfo has no MemTotal")
	}
	m.MemoryGiB = float64(*mem.MemTotalBytes) / (1 << 30)
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
