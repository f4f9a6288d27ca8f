package kuberuntime

import (
	"context"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri/envvars"
	"github.com/podlife/podlife/cri/volume"
)

// setEnv gives cfg the container's environment, with the ConfigMaps and
// Secrets it names read through the volumes' getters and the Services'
// variables from Options.Services, a fileKeyRef's env file read from the
// pod's emptyDir as it is now, and expands $(VAR) in its
// command and args with it (the kubelet's ExpandContainerCommandAndArgs).
// The pod's IPs are its sandbox's, asked only when a variable needs them
// (a sandbox without a status runs containers all the same), or the
// node's on the host network.
func (s *Syncer) setEnv(ctx context.Context, ps *podSync, c *v1.Container, cfg *runtimeapi.ContainerConfig) error {
	var ips []string
	switch {
	case ps.pod.Spec.HostNetwork:
		ips = s.opts.HostIPs
	case envvars.NeedsPodIPs(c):
		var err error
		if ips, err = ps.sandboxIPs(ctx, s.rt); err != nil {
			return err
		}
	}
	api := s.opts.VolumeAPI
	envs, err := envvars.ContainerEnv(ctx, envvars.Input{
		Pod: ps.pod, Container: c, PodIPs: ips, HostIPs: s.opts.HostIPs, Allocatable: s.allocatable(),
		ConfigMaps: api.ConfigMaps, Secrets: api.Secrets, Services: s.opts.Services,
		EmptyDirs: volume.EmptyDirs(ps.pod, ps.vols),
	})
	if err != nil {
		return err
	}
	vars := envvars.Vars(envs)
	cfg.Envs = envs
	cfg.Command = envvars.ExpandAll(c.Command, vars)
	cfg.Args = envvars.ExpandAll(c.Args, vars)
	return nil
}
