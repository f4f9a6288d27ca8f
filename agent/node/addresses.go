package node

import (
	"errors"
	"fmt"
	"net"

	v1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// errNoAddress says the host has no address to report.
var errNoAddress = errors.New("the host has no non-loopback address; set Config.Addresses")

// hostAddresses are the addresses a node reports when none are configured:
// its InternalIP and its name as Hostname.
func hostAddresses(nodeName string, hostIP func() (net.IP, error)) ([]v1.NodeAddress, error) {
	ip, err := hostIP()
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", nodeName, err)
	}
	return []v1.NodeAddress{
		{Type: v1.NodeInternalIP, Address: ip.String()},
		{Type: v1.NodeHostName, Address: nodeName},
	}, nil
}

// HostAddresses are the addresses a node named nodeName reports by
// default: the InternalIP of the host and its name.
func HostAddresses(nodeName string) ([]v1.NodeAddress, error) {
	return hostAddresses(nodeName, defaultHostIP)
}

// defaultHostIP is the address of the interface of the default route, as
// the kubelet picks it, or else the host's first global unicast address.
func defaultHostIP() (net.IP, error) {
	if ip, err := utilnet.ChooseHostInterface(); err == nil {
		return ip, nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("listing the host's addresses: %w", err)
	}
	return firstGlobalUnicast(addrs)
}

// firstGlobalUnicast returns the first address that is neither loopback
// nor link-local, IPv4 before IPv6.
func firstGlobalUnicast(addrs []net.Addr) (net.IP, error) {
	var v6 net.IP
	for _, a := range addrs {
		ipnet, ok := a.(*net.IPNet)
		if !ok || !ipnet.IP.IsGlobalUnicast() {
			continue
		}
		if ipnet.IP.To4() != nil {
			return ipnet.IP, nil
		}
		if v6 == nil {
			v6 = ipnet.IP
		}
	}
	if v6 == nil {
		return nil, errNoAddress
	}
	return v6, nil
}

// HostIPs are the IPs a pod's status.hostIP and hostIPs give for a node
// of these addresses, as the kubelet picks them from its Node: the first
// InternalIP of each family, else the first ExternalIP, the first family
// found first.
func HostIPs(addresses []v1.NodeAddress) []string {
	var ips []string
	seen := map[bool]bool{} // by IPv4
	for _, kind := range []v1.NodeAddressType{v1.NodeInternalIP, v1.NodeExternalIP} {
		for _, a := range addresses {
			ip := net.ParseIP(a.Address)
			if a.Type != kind || ip == nil || seen[ip.To4() != nil] {
				continue
			}
			seen[ip.To4() != nil] = true
			ips = append(ips, ip.String())
		}
	}
	return ips
}
