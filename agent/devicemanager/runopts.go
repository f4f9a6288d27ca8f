package devicemanager

import (
	"maps"
	"slices"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// applyResponses gives cfg what the plugins' Allocate answers for one
// container say, resource by resource in name order (the kubelet's
// deviceRunContainerOptions): the envs go before the container's own,
// which win over them; mounts and device nodes after the container's, one
// per container path (the first answer's); CDI devices once per name;
// annotations where cfg has none of that key (podlife's own win).
func applyResponses(cfg *runtimeapi.ContainerConfig, byResource map[string]*pluginapi.ContainerAllocateResponse) {
	envs := map[string]string{}
	var envKeys []string
	mountPaths := map[string]bool{}
	for _, m := range cfg.Mounts {
		mountPaths[m.ContainerPath] = true
	}
	devicePaths := map[string]bool{}
	for _, d := range cfg.Devices {
		devicePaths[d.ContainerPath] = true
	}
	cdi := map[string]bool{}
	for _, d := range cfg.CDIDevices {
		cdi[d.Name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(byResource)) {
		resp := byResource[name]
		for _, k := range slices.Sorted(maps.Keys(resp.Envs)) {
			if _, ok := envs[k]; !ok {
				envs[k] = resp.Envs[k]
				envKeys = append(envKeys, k)
			}
		}
		for _, m := range resp.Mounts {
			if !mountPaths[m.ContainerPath] {
				mountPaths[m.ContainerPath] = true
				cfg.Mounts = append(cfg.Mounts, &runtimeapi.Mount{ContainerPath: m.ContainerPath, HostPath: m.HostPath, Readonly: m.ReadOnly})
			}
		}
		for _, d := range resp.Devices {
			if !devicePaths[d.ContainerPath] {
				devicePaths[d.ContainerPath] = true
				cfg.Devices = append(cfg.Devices, &runtimeapi.Device{ContainerPath: d.ContainerPath, HostPath: d.HostPath, Permissions: d.Permissions})
			}
		}
		for _, d := range resp.CdiDevices {
			if !cdi[d.Name] {
				cdi[d.Name] = true
				cfg.CDIDevices = append(cfg.CDIDevices, &runtimeapi.CDIDevice{Name: d.Name})
			}
		}
		for _, k := range slices.Sorted(maps.Keys(resp.Annotations)) {
			if _, ok := cfg.Annotations[k]; !ok {
				if cfg.Annotations == nil {
					cfg.Annotations = map[string]string{}
				}
				cfg.Annotations[k] = resp.Annotations[k]
			}
		}
	}
	if len(envKeys) == 0 {
		return
	}
	kv := make([]*runtimeapi.KeyValue, 0, len(envKeys)+len(cfg.Envs))
	for _, k := range envKeys {
		kv = append(kv, &runtimeapi.KeyValue{Key: k, Value: []byte(envs[k])})
	}
	cfg.Envs = append(kv, cfg.Envs...)
}
