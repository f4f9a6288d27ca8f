package kuberuntime

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/podfiles"
	"github.com/podlife/podlife/cri/volume"
)

// podFileMounts are the mounts of the pod's files into the attempt-th
// instance of container c: c's volumeMounts, the pod's /etc/hosts (unless
// a volume is mounted there) and c's termination message file, made now
// (the kubelet's makeMounts). None without PodsRoot.
func (s *Syncer) podFileMounts(ctx context.Context, ps *podSync, c *v1.Container, attempt uint32) ([]*runtimeapi.Mount, error) {
	if s.opts.PodsRoot == "" {
		return nil, nil
	}
	mounts, err := volume.Mounts(s.opts.PodsRoot, ps.pod, c, ps.vols, s.supportsRRO(ctx, ps.pod))
	if err != nil {
		return nil, err
	}
	if !volume.MountsAt(c, podfiles.EtcHostsPath) {
		hosts, err := s.hostsMount(ctx, ps)
		if err != nil {
			return nil, err
		}
		if hosts != nil {
			mounts = append(mounts, hosts)
		}
	}
	msg, err := podfiles.MessageMount(s.opts.PodsRoot, ps.pod, c, attempt)
	if err != nil {
		return nil, err
	}
	if msg != nil {
		mounts = append(mounts, msg)
	}
	return mounts, nil
}

// messages reads the termination messages of the files podFileMounts made
// and, as a fallback, of the container logs.
func (s *Syncer) messages() podfiles.MessageReader {
	return podfiles.MessageReader{PodsRoot: s.opts.PodsRoot, LogRoot: s.opts.LogRoot}
}

// hostsMount writes the pod's hosts file for the sandbox's IPs and returns
// its mount at /etc/hosts, read-write as the kubelet mounts it: for a pod
// on the host network the node's hosts file with the pod's hostAliases;
// nil for a sandbox without an IP (nothing to write: the kubelet mounts
// none either).
func (s *Syncer) hostsMount(ctx context.Context, ps *podSync) (*runtimeapi.Mount, error) {
	if ps.pod.Spec.HostNetwork {
		return podfiles.HostsMount(s.opts.PodsRoot, ps.pod, nil)
	}
	ips, err := ps.sandboxIPs(ctx, s.rt)
	if err != nil || len(ips) == 0 {
		return nil, err
	}
	return podfiles.HostsMount(s.opts.PodsRoot, ps.pod, ips)
}

// sandboxIPs are the IPs of the pod's sandbox, asked of the runtime once
// per sync.
func (ps *podSync) sandboxIPs(ctx context.Context, rt cri.Runtime) ([]string, error) {
	if ps.ips != nil {
		return ps.ips, nil
	}
	resp, err := rt.PodSandboxStatus(ctx, ps.sbID, false)
	if err != nil {
		return nil, fmt.Errorf("status of sandbox %s of pod %s/%s: %w", ps.sbID, ps.pod.Namespace, ps.pod.Name, err)
	}
	ps.ips = []string{}
	if n := resp.GetStatus().GetNetwork(); n.GetIp() != "" {
		ps.ips = append(ps.ips, n.GetIp())
		for _, ip := range n.GetAdditionalIps() {
			ps.ips = append(ps.ips, ip.GetIp())
		}
	}
	return ps.ips, nil
}
