package agent

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/podlife/podlife/agent/admission"
)

// machineCapacity is the machine's CPUs and memory (MemTotal): the Node's
// capacity, and allocatable where none is configured. Without a readable
// /proc/meminfo the memory is left out and err says why.
func machineCapacity() (v1.ResourceList, error) {
	capacity := v1.ResourceList{v1.ResourceCPU: *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI)}
	mem, err := machineMemory()
	if err != nil {
		return capacity, fmt.Errorf("the machine's memory is unknown: %w", err)
	}
	capacity[v1.ResourceMemory] = *resource.NewQuantity(mem, resource.BinarySI)
	return capacity, nil
}

// machineMemory is MemTotal from /proc/meminfo, in bytes.
func machineMemory() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kib, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo: %w", err)
			}
			return kib * 1024, nil
		}
	}
	return 0, fmt.Errorf("/proc/meminfo has no MemTotal")
}

// downwardAllocatable is what a container's resourceFieldRef gets for a
// limit it does not set, as the kubelet gives it the node's allocatable:
// the CPU and memory pods may request, and the ephemeral storage of the
// filesystem under rootDir (left out when it cannot be read).
func downwardAllocatable(alloc admission.Resources, rootDir string) v1.ResourceList {
	list := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(alloc.MilliCPU, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(alloc.Memory, resource.BinarySI),
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(rootDir, &st); err == nil {
		list[v1.ResourceEphemeralStorage] = *resource.NewQuantity(int64(st.Blocks)*st.Bsize, resource.BinarySI)
	}
	return list
}

// hostIPs are the node's IPs for status.hostIP in env, and a host-network
// pod's IPs: the address of the default route's interface, as the kubelet
// picks it; none when the host has no route.
func hostIPs() []string {
	ip, err := utilnet.ChooseHostInterface()
	if err != nil {
		return nil
	}
	return []string{ip.String()}
}
