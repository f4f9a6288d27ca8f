package agent

import (
	"net"
	"strconv"

	"github.com/podlife/podlife/agent/server"
)

// listenHealthz opens the kubelet's healthz port (Config.HealthzPort on
// HealthzBindAddress), unless the port is 0. A port already taken fails
// New, as the other listeners do: a node whose health nobody can read is
// not started quietly.
func (a *Agent) listenHealthz(opts Options) error {
	port := a.cfg.HealthzPort
	if port == 0 {
		return nil
	}
	if opts.healthzAnyPort {
		port = 0
	}
	h, err := server.ListenHealthz(a, net.JoinHostPort(a.cfg.HealthzBindAddress, strconv.Itoa(port)), a.log)
	if err != nil {
		return err
	}
	a.healthz = h
	return nil
}

// HealthzAddr is the address the healthz port listens on, "" when it is
// off.
func (a *Agent) HealthzAddr() string {
	if a.healthz == nil {
		return ""
	}
	return a.healthz.Addr()
}
