package config

import (
	"fmt"
	"net"
	"strconv"
)

// Where the kubelet-compatible servers listen, as the kubelet's address,
// port and readOnlyPort say, and the forms podlife had before, still
// taken for one release with a warning (Deprecations): an address of
// host:port was the read-only endpoint's own address (and the only way
// to turn it on), and bindAddress was the kubelet API's IP.

// DefaultAddress is the kubelet's address: every interface.
const DefaultAddress = "0.0.0.0"

// ServingIP is the IP the kubelet API and the read-only port listen on:
// the deprecated BindAddress when set, else Address (DefaultAddress
// when Address is empty, as the kubelet defaults it, or the deprecated
// host:port).
func (c *Config) ServingIP() string {
	switch {
	case c.BindAddress != "":
		return c.BindAddress
	case c.Address == "" || c.legacyReadOnlyAddress():
		return DefaultAddress
	}
	return c.Address
}

// ReadOnlyAddress is the host:port the read-only endpoint listens on, ""
// when it is off: ServingIP and ReadOnlyPort, or the deprecated
// host:port Address.
func (c *Config) ReadOnlyAddress() string {
	switch {
	case c.legacyReadOnlyAddress():
		return c.Address
	case c.ReadOnlyPort == 0:
		return ""
	}
	return net.JoinHostPort(c.ServingIP(), strconv.Itoa(c.ReadOnlyPort))
}

// Deprecations are the warnings the agent logs at start for the settings
// given in a deprecated form, each saying what to write instead.
func (c *Config) Deprecations() []string {
	var out []string
	if c.legacyReadOnlyAddress() {
		host, port, _ := net.SplitHostPort(c.Address)
		out = append(out, fmt.Sprintf("address %q (--address) as host:port of the read-only endpoint is deprecated and will be refused in the next release: "+
			"address is the kubelet's, the IP every server listens on; write address %q (--address) and readOnlyPort %s (--read-only-port)", c.Address, host, port))
	}
	if c.BindAddress != "" {
		out = append(out, fmt.Sprintf("bindAddress %q (--bind-address) is deprecated and will be refused in the next release: write address %q (--address), the kubelet's name", c.BindAddress, c.BindAddress))
	}
	return out
}

// legacyReadOnlyAddress reports whether Address is the deprecated
// host:port of the read-only endpoint rather than an IP.
func (c *Config) legacyReadOnlyAddress() bool {
	if net.ParseIP(c.Address) != nil {
		return false
	}
	_, _, err := net.SplitHostPort(c.Address)
	return err == nil
}

func (c *Config) validateServing() []error {
	var errs []error
	legacy := c.legacyReadOnlyAddress()
	switch {
	case c.Address != "" && !legacy && net.ParseIP(c.Address) == nil:
		errs = append(errs, fmt.Errorf("address must be an IP address (the kubelet's: the IP the kubelet API and the read-only port listen on, e.g. %s), got %q", DefaultAddress, c.Address))
	case legacy && c.ReadOnlyPort != 0:
		errs = append(errs, fmt.Errorf("address %q is the deprecated host:port of the read-only endpoint, and readOnlyPort %d says where it is too: give address as an IP", c.Address, c.ReadOnlyPort))
	case c.BindAddress != "" && !legacy && c.Address != "" && c.Address != DefaultAddress && c.Address != c.BindAddress:
		errs = append(errs, fmt.Errorf("address %q and bindAddress %q (its deprecated name) disagree: give address only", c.Address, c.BindAddress))
	}
	if c.BindAddress != "" && net.ParseIP(c.BindAddress) == nil {
		errs = append(errs, fmt.Errorf("bindAddress must be an IP address, got %q", c.BindAddress))
	}
	if c.ReadOnlyPort < 0 || c.ReadOnlyPort > 65535 {
		errs = append(errs, fmt.Errorf("readOnlyPort must be 0 (off) to 65535, got %d", c.ReadOnlyPort))
	}
	return errs
}
