// Package config is the node agent's configuration: the AgentConfiguration
// file that flags override, its defaults, its validation, and what the agent
// derives from it (CRI lanes, the container GC policy, shutdown bands,
// directories). It is the counterpart of the kubelet's
// pkg/kubelet/apis/config (KubeletConfiguration) and its validation.
package config
