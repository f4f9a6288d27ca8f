package api

import (
	"os"
	"path/filepath"
)

// The routes of the read-only TCP endpoint (GET and HEAD only), off by
// default (as the kubelet's read-only port 10255, which its configuration
// file turns off); the control socket serves LifecyclePath too.
const (
	MetricsPath   = "/metrics"
	HealthzPath   = "/healthz"
	PodsPath      = "/pods"
	LifecyclePath = "/lifecycle"
)

// The routes of the control socket (and GET LifecyclePath).
const (
	// ShutdownPath is POST /shutdown: a graceful node shutdown.
	ShutdownPath = "/shutdown"
	// ContainerLogsPath is GET
	// /containerLogs/{namespace}/{pod}[/{container}], in the kubelet's
	// shape (the TCP endpoint refuses it).
	ContainerLogsPath = "/containerLogs"
)

// ControlSocketName is the control socket's name in the root directory.
const ControlSocketName = "podlife.sock"

// ControlSocket is the path of the control socket of the agent whose root
// directory is rootDir: HTTP on it serves the verbs that change the node
// (POST /shutdown), which the TCP endpoint does not.
func ControlSocket(rootDir string) string { return filepath.Join(rootDir, ControlSocketName) }

// DefaultRootDir is /var/lib/podlife for root, and the user's state
// directory otherwise: never a shared directory such as /tmp, where another
// user could create it first.
func DefaultRootDir() string {
	home, _ := os.UserHomeDir()
	return defaultRootDir(os.Geteuid(), os.Getenv("XDG_STATE_HOME"), home)
}

// defaultRootDir is DefaultRootDir for a user: $XDG_STATE_HOME/podlife,
// else ~/.local/state/podlife; "" for a user with neither.
func defaultRootDir(euid int, stateHome, home string) string {
	switch {
	case euid == 0:
		return "/var/lib/podlife"
	case filepath.IsAbs(stateHome): // the XDG specification ignores a relative one
		return filepath.Join(stateHome, "podlife")
	case home != "":
		return filepath.Join(home, ".local", "state", "podlife")
	}
	return ""
}
