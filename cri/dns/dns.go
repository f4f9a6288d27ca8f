// Package dns makes a pod's resolver configuration for its sandbox, as
// the kubelet's pkg/kubelet/network/dns does: for ClusterFirst pods off the
// host network (and ClusterFirstWithHostNet pods), the cluster's DNS
// servers and search domains (--cluster-dns, --cluster-domain), or, with
// none configured, the node's resolv.conf and a MissingClusterDNS warning;
// the node's resolv.conf for Default (and ClusterFirst on the host
// network); nothing for None; then the pod's dnsConfig merged in, cut to
// the resolver's limits.
package dns

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/podlife/podlife/cri/events"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// NodeResolvConf is the node's resolver configuration, the kubelet's
// default --resolv-conf.
const NodeResolvConf = "/etc/resolv.conf"

// The resolver's limits, as the API server's validation and the kubelet
// apply them (pkg/apis/core/validation).
const (
	maxNameservers     = 3
	maxSearchPaths     = 32
	maxSearchListChars = 2048
	maxSearchPathLen   = 253
	// maxResolvConfLength is the most the kubelet reads of resolv.conf.
	maxResolvConfLength = 10 << 20
)

// Cluster is the cluster's DNS: its servers' IPs (the kubelet's
// clusterDNS) and domain (clusterDomain); none: ClusterFirst pods get the
// node's resolv.conf.
type Cluster struct {
	Servers []string
	Domain  string
}

// Warning is a warning event about the pod's DNS, as the kubelet records
// it.
type Warning struct{ Reason, Message string }

// The kubelet's cluster-first resolver options.
var clusterOptions = []string{"ndots:5"}

// Config is pod's DNS configuration for CRI: the cluster's for a pod whose
// policy asks for it when the cluster has DNS servers, else the node's
// resolv.conf (read from resolvConf), or nothing for None; with the pod's
// dnsConfig appended. warnings are the kubelet's events: MissingClusterDNS
// when a pod asks for the cluster's DNS and there is none, DNSConfigForming
// for what was cut to fit the resolver's limits.
func Config(pod *v1.Pod, resolvConf string, cluster Cluster) (cfg *runtimeapi.DNSConfig, warnings []Warning, err error) {
	cfg = &runtimeapi.DNSConfig{}
	if pod.Spec.DNSPolicy != v1.DNSNone {
		f, err := os.Open(resolvConf)
		if err != nil {
			return nil, nil, fmt.Errorf("node resolver configuration: %w", err)
		}
		defer f.Close()
		if cfg, err = parse(io.LimitReader(f, maxResolvConfLength)); err != nil {
			return nil, nil, fmt.Errorf("node resolver configuration %s: %w", resolvConf, err)
		}
	}
	switch {
	case !clusterFirst(pod):
	case len(cluster.Servers) > 0:
		cfg.Servers = slices.Clone(cluster.Servers)
		cfg.Searches = clusterSearches(pod.Namespace, cluster.Domain, cfg.Searches)
		cfg.Options = slices.Clone(clusterOptions)
	default:
		warnings = append(warnings, Warning{events.MissingClusterDNS, fmt.Sprintf(
			"pod: %q. kubelet does not have ClusterDNS IP configured and cannot create Pod using %q policy. Falling back to %q policy.",
			pod.Name+"_"+pod.Namespace+"("+string(pod.UID)+")", v1.DNSClusterFirst, v1.DNSDefault)})
	}
	if c := pod.Spec.DNSConfig; c != nil {
		cfg.Servers = uniq(append(cfg.Servers, c.Nameservers...))
		cfg.Searches = uniq(append(cfg.Searches, c.Searches...))
		cfg.Options = mergeOptions(cfg.Options, c.Options)
	}
	if len(cfg.Servers) > maxNameservers {
		cfg.Servers = cfg.Servers[:maxNameservers]
		warnings = append(warnings, Warning{events.DNSConfigForming, "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: " + strings.Join(cfg.Servers, " ")})
	}
	var cut bool
	if cfg.Searches, cut = fitSearches(cfg.Searches); cut {
		warnings = append(warnings, Warning{events.DNSConfigForming, "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " + strings.Join(cfg.Searches, " ")})
	}
	return cfg, warnings, nil
}

// clusterFirst holds when the pod asks for the cluster's DNS: ClusterFirst
// off the host network (on it, the kubelet falls back to Default), or
// ClusterFirstWithHostNet, or a policy the kubelet does not know (it falls
// back to ClusterFirst; the API server defaults an empty one).
func clusterFirst(pod *v1.Pod) bool {
	switch pod.Spec.DNSPolicy {
	case v1.DNSClusterFirst:
		return !pod.Spec.HostNetwork
	case v1.DNSDefault, v1.DNSNone:
		return false
	}
	return true
}

// clusterSearches are the cluster's search domains for a pod of namespace
// ns, then the node's (the kubelet's generateSearchesForDNSClusterFirst).
func clusterSearches(ns, domain string, node []string) []string {
	if domain == "" {
		return node
	}
	return uniq(append([]string{ns + ".svc." + domain, "svc." + domain, domain}, node...))
}

// parse reads a resolv.conf as the kubelet's parseResolvConf does:
// nameservers accumulate, the last search line wins (its names without a
// trailing dot, "." dropped), options accumulate, a later one of a name
// replacing an earlier one.
func parse(r io.Reader) (*runtimeapi.DNSConfig, error) {
	cfg := &runtimeapi.DNSConfig{}
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), maxResolvConfLength)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "nameserver":
			if len(fields) < 2 {
				return nil, fmt.Errorf("nameserver list is empty")
			}
			cfg.Servers = append(cfg.Servers, fields[1])
		case "search":
			cfg.Searches = nil
			for _, d := range fields[1:] {
				if d != "." {
					cfg.Searches = append(cfg.Searches, strings.TrimSuffix(d, "."))
				}
			}
		case "options":
			cfg.Options = setOptions(cfg.Options, fields[1:]...)
		}
	}
	return cfg, s.Err()
}

// setOptions sets each option ("name" or "name:value") in options,
// replacing one of the same name, and returns them sorted (the kubelet's
// order is a map's, so any order is its).
func setOptions(options []string, set ...string) []string {
	byName := map[string]string{}
	for _, o := range slices.Concat(options, set) {
		name, _, _ := strings.Cut(o, ":")
		byName[name] = o
	}
	out := make([]string, 0, len(byName))
	for _, o := range byName {
		out = append(out, o)
	}
	slices.Sort(out)
	return out
}

// mergeOptions sets the pod's dnsConfig options in the node's.
func mergeOptions(options []string, pod []v1.PodDNSConfigOption) []string {
	set := make([]string, 0, len(pod))
	for _, o := range pod {
		if o.Value != nil && *o.Value != "" {
			set = append(set, o.Name+":"+*o.Value)
		} else {
			set = append(set, o.Name)
		}
	}
	return setOptions(options, set...)
}

// uniq drops repeated entries, keeping the first.
func uniq(s []string) []string {
	var out []string
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// fitSearches cuts the search list to the resolver's limits, as the
// kubelet's formDNSSearchFitsLimits: at most 32 paths, none over 253
// characters, the line at most 2048 characters (dropping from the end).
// cut says whether anything was dropped.
func fitSearches(searches []string) (fit []string, cut bool) {
	if len(searches) > maxSearchPaths {
		searches, cut = searches[:maxSearchPaths], true
	}
	for _, s := range searches {
		if len(s) > maxSearchPathLen {
			cut = true
			continue
		}
		fit = append(fit, s)
	}
	for len(fit) > 0 && len(strings.Join(fit, " ")) > maxSearchListChars {
		fit, cut = fit[:len(fit)-1], true
	}
	return fit, cut
}
