// Package stats is the node's resource usage as the kubelet's
// /stats/summary and /metrics/resource report it (kubelet:
// pkg/kubelet/stats, the CRI stats provider without cAdvisor, and
// pkg/kubelet/metrics/collectors/resource_metrics.go), from what podlife
// knows: the CRI runtime's container and sandbox stats, its image
// filesystem, and the node's own /proc and root directory.
//
// A Provider builds a k8s.io/kubelet stats/v1alpha1 Summary (the wire type
// metrics-server and kubectl read) and collects the resource metrics that
// metrics-server scrapes; it is the kubelet API's StatsProvider
// (agent/kubeletserver), which serves them with its authentication and
// authorization, the metrics in a registry of their own.
//
// What it reports, and whence:
//   - the node: its name, its start (the boot time, /proc/stat btime), its
//     CPU (/proc/stat) and memory (/proc/meminfo), its fs (the filesystem of
//     the agent's root directory) and the runtime's imageFs and
//     containerFs (ImageFsInfo, sized by statfs of their mount points);
//   - each pod with a ready sandbox: its reference (name, namespace, uid)
//     and start (the sandbox's creation), each running container's name,
//     start (its creation, as the kubelet's CRI provider has it), CPU,
//     memory and writable layer (ListContainerStats), and the pod's CPU and
//     memory from ListPodSandboxStats, or, where the runtime has none for it,
//     the sum of its containers' (containerd 1.6 fails ListPodSandboxStats
//     for sandboxes without a cgroup parent, which podlife's are).
//
// usageNanoCores is the runtime's when it gives one; otherwise it is
// computed from two samples of the cumulative usage, as the kubelet's CRI
// provider does: the provider keeps each container's, pod's and the node's
// previous sample, and the first sample has none.
//
// A runtime that keeps no stats (codes.Unimplemented: the embedded
// runtime, whose containers run no process) yields a summary of the node
// alone, and the resource metrics say so (resource_scrape_error 1). No
// number is invented.
package stats
