// Package prober runs the startup, liveness and readiness probes of running
// containers on a schedule, as the kubelet's prober does, and keeps their
// results. It is a package of its own because the probes outlive any one
// sync: they start when a container is seen running, go on while the pod
// terminates (readiness only), and stop when the container exits or the
// pod is removed, on their own timers rather than on a sync's context (the
// kubelet's v1.35 bug #140881, where readiness stopped updating during a
// long grace period because its workers shared the pod's cancelled
// context, cannot happen here).
//
// An idle probe costs one timer (Clock.AfterFunc), no goroutine; a
// goroutine exists only while a probe runs. What a probe does (exec through
// the runtime, an HTTP GET, a TCP connect, a gRPC health check) is the
// Runner's business: package cri/lifecycle implements it beside the
// lifecycle hooks.
//
// The results act on the pod through the caller: a liveness or startup
// failure is reported to OnChange, and the agent asks the engine for a sync
// in which SyncPod kills and restarts the container; readiness and startup
// results are applied to the pod's status by Apply.
package prober
