package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/agent/node"
)

// labelsFlag is a flag of the form key=value,key2=value2 (the kubelet's
// --node-labels).
type labelsFlag struct{ m *map[string]string }

func (f labelsFlag) String() string {
	if f.m == nil {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(*f.m)) {
		parts = append(parts, k+"="+(*f.m)[k])
	}
	return strings.Join(parts, ",")
}

func (f labelsFlag) Set(s string) error {
	m := map[string]string{}
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" {
			return fmt.Errorf("%q is not key=value", part)
		}
		m[k] = v
	}
	*f.m = m
	return nil
}

func (labelsFlag) Type() string { return "labels" }

// taintsFlag is a flag of the form key[=value]:Effect,... (the kubelet's
// --register-with-taints).
type taintsFlag struct{ taints *[]v1.Taint }

func (f taintsFlag) String() string {
	if f.taints == nil {
		return ""
	}
	return node.FormatTaints(*f.taints)
}

func (f taintsFlag) Set(s string) error {
	taints, err := node.ParseTaints(s)
	if err != nil {
		return err
	}
	*f.taints = taints
	return nil
}

func (taintsFlag) Type() string { return "taints" }
