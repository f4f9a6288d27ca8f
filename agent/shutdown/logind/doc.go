// Package logind learns of a node shutdown from systemd-logind over the
// system D-Bus, as the kubelet's graceful node shutdown does
// (pkg/kubelet/nodeshutdown/systemd and nodeshutdown_manager_linux.go).
//
// Start takes a delay inhibitor lock for "shutdown" (Manager.Inhibit):
// logind then waits, up to its InhibitDelayMaxSec, before the shutdown
// proceeds. When logind announces the shutdown (PrepareForShutdown(true)),
// the Handler stops the pods (the priority bands of agent/shutdown) and
// the lock is released, so that the shutdown goes on. When logind says the
// shutdown was cancelled (PrepareForShutdown(false)), the Handler returns
// the node to service and the lock is taken again. A lost bus connection
// is opened again every second, as the kubelet's is.
//
// Differences from the kubelet: when InhibitDelayMaxSec is shorter than
// the grace period asked for, the kubelet writes a logind drop-in
// (/etc/systemd/logind.conf.d/99-kubelet.conf) and reloads logind; podlife
// writes nothing under /etc and logs a warning naming both durations and
// the drop-in to write. And a PrepareForShutdown is believed only from the
// owner of org.freedesktop.login1: any client of the bus may send a signal
// to another, and the kubelet's match rule names no sender.
package logind
