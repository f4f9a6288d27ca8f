// Package explore model-checks podlife's engine itself: a breadth-first
// explorer drives worker.Core (the engine's synchronous core, not a second
// model) through every interleaving of the inputs that tla/PodLifecycle.tla's
// Next allows, under the bounds of a tla/MC*.cfg configuration. It checks
// the spec's invariants on every state and step, its liveness properties on
// the explored graph, and dumps the reachable states in the form TLC's -dump
// writes, so that the two sets can be compared state for state
// (tools/dumpdiff).
package explore

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/spec"
)

// Config is the bounds of one model-checking configuration; each shipped
// one mirrors a tla/MC*.tla module (TestShippedConfigsMatchTheTLA checks).
type Config struct {
	Name string
	// Pods are the pod UIDs; StaticPods the static ones, which all share
	// one full name.
	Pods       []types.UID
	StaticPods []types.UID
	// GraceOverrides are the grace periods kills and deletions may request.
	GraceOverrides []int64
	// SpecGrace is every pod's spec.terminationGracePeriodSeconds.
	SpecGrace int64
	// KillChannels bounds the kills: one is sent only while fewer of the
	// pod's completion channels are open.
	KillChannels int
	// RuntimePods: updates of runtime-only pods are sent; TerminalPhases:
	// updates may carry a terminal API phase. Turning them off keeps
	// liveness bounds small enough for TLC.
	RuntimePods, TerminalPhases bool
	// Properties names the spec.Properties to check, as the config's .cfg
	// lists them; nil checks them all.
	Properties []string
	// OutsideCI marks a configuration too large for CI (its .cfg says
	// "\* OUTSIDE CI"): `podlife-dev check` without --config and .ci/run's
	// TLC loop skip it; it is checked by hand (--config NAME).
	OutsideCI bool
}

// MaxPods bounds Config.Pods (the state key packs a fixed number of pods).
const MaxPods = 4

// Property lists of the shipped configurations, by kind: those TLC checks
// too; explorerChecks are the explorer's alone (Refinement, and the
// properties of its own shell variables), which every shipped
// configuration checks.
var (
	invariants     = propertyNames(invariant)
	stepProperties = propertyNames(stepProperty)
	leadsTos       = propertyNames(leadsTo)
	explorerChecks = func() []string {
		out := []string{errRefinement}
		for _, p := range properties {
			if p.explorer {
				out = append(out, p.name)
			}
		}
		return out
	}()
)

func propertyNames(k propertyKind) []string {
	var out []string
	for _, p := range properties {
		if p.kind == k && !p.explorer {
			out = append(out, p.name)
		}
	}
	return out
}

// ExplorerOnly reports whether the named check is the explorer's alone
// (no TLC configuration names it).
func ExplorerOnly(name string) bool { return slices.Contains(explorerChecks, name) }

func without(names []string, drop string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == drop })
}

// Shipped are the configurations of tla/, each with the properties its
// .cfg checks (see tla/README.md for why each has the bounds it has).
var Shipped = []Config{
	{Name: "MCPodLifecycle", Pods: []types.UID{"p1", "p2"}, StaticPods: []types.UID{"p1", "p2"}, GraceOverrides: []int64{1}, SpecGrace: 2,
		KillChannels: 1, RuntimePods: true, TerminalPhases: true, Properties: slices.Concat(invariants, stepProperties, explorerChecks)},
	{Name: "MCPodLifecycleMixed", Pods: []types.UID{"p1", "p2"}, StaticPods: []types.UID{"p1"}, SpecGrace: 2,
		KillChannels: 1, RuntimePods: true, TerminalPhases: true, Properties: slices.Concat(invariants, explorerChecks)},
	{Name: "MCOnePod", Pods: []types.UID{"p1"}, GraceOverrides: []int64{1}, SpecGrace: 2,
		KillChannels: 2, RuntimePods: true, TerminalPhases: true, Properties: slices.Concat(invariants, stepProperties, without(leadsTos, "StaticPodsStart"), explorerChecks)},
	{Name: "MCGrace", Pods: []types.UID{"p1"}, GraceOverrides: []int64{0, 1, 3}, SpecGrace: 2,
		KillChannels: 2, RuntimePods: true, TerminalPhases: true, Properties: slices.Concat(invariants, stepProperties, without(leadsTos, "StaticPodsStart"), explorerChecks)},
	{Name: "MCOneStaticPod", Pods: []types.UID{"p1"}, StaticPods: []types.UID{"p1"}, GraceOverrides: []int64{1}, SpecGrace: 2,
		KillChannels: 2, RuntimePods: true, TerminalPhases: true, Properties: slices.Concat(invariants, stepProperties, without(leadsTos, "DesiredPodsStart"), explorerChecks)},
	{Name: "MCLiveness", Pods: []types.UID{"p1", "p2"}, StaticPods: []types.UID{"p1", "p2"}, SpecGrace: 2,
		KillChannels: 1, Properties: slices.Concat(invariants, without(leadsTos, "DesiredPodsStart"), explorerChecks)},
	{Name: "MCThreePods", Pods: []types.UID{"p1", "p2", "p3"}, StaticPods: []types.UID{"p1", "p2", "p3"}, SpecGrace: 2,
		KillChannels: 0, Properties: slices.Concat(invariants, stepProperties, explorerChecks), OutsideCI: true},
}

// InCI are the shipped configurations CI checks: all but those marked
// OutsideCI.
func InCI() []Config {
	return slices.DeleteFunc(slices.Clone(Shipped), func(c Config) bool { return c.OutsideCI })
}

// ShippedConfig returns the shipped configuration with the given name.
func ShippedConfig(name string) (Config, error) {
	for _, c := range Shipped {
		if c.Name == name {
			return c, nil
		}
	}
	names := make([]string, len(Shipped))
	for i, c := range Shipped {
		names[i] = c.Name
	}
	return Config{}, fmt.Errorf("no configuration %q (have %s)", name, strings.Join(names, ", "))
}

// Validate rejects bounds the explorer cannot represent.
func (c Config) Validate() error {
	switch {
	case len(c.Pods) == 0 || len(c.Pods) > MaxPods:
		return fmt.Errorf("config %s: %d pods; the explorer takes 1 to %d", c.Name, len(c.Pods), MaxPods)
	case !spec.GraceDomain.Contains(int(c.SpecGrace)):
		return fmt.Errorf("config %s: spec grace %d outside %d..%d", c.Name, c.SpecGrace, spec.GraceDomain.Min, spec.GraceDomain.Max)
	case c.KillChannels < 0 || c.KillChannels > spec.ChannelsDomain.Max:
		return fmt.Errorf("config %s: kill channels %d outside 0..%d", c.Name, c.KillChannels, spec.ChannelsDomain.Max)
	}
	for _, name := range c.Properties {
		if _, ok := spec.PropertyNamed(name); !ok && name != errRefinement {
			return fmt.Errorf("config %s: no property %s in spec.Properties", c.Name, name)
		}
	}
	for _, s := range c.StaticPods {
		if !slices.Contains(c.Pods, s) {
			return fmt.Errorf("config %s: static pod %s is not a pod", c.Name, s)
		}
	}
	for _, g := range c.GraceOverrides {
		if !spec.GraceDomain.Contains(int(g)) {
			return fmt.Errorf("config %s: grace override %d outside %d..%d", c.Name, g, spec.GraceDomain.Min, spec.GraceDomain.Max)
		}
	}
	seen := map[types.UID]bool{}
	for _, p := range c.Pods {
		if seen[p] {
			return fmt.Errorf("config %s: pod %s twice", c.Name, p)
		}
		seen[p] = true
	}
	return nil
}

func (c Config) isStatic(i int) bool { return slices.Contains(c.StaticPods, c.Pods[i]) }

// checks reports whether the configuration checks the named property.
func (c Config) checks(name string) bool {
	return c.Properties == nil || slices.Contains(c.Properties, name)
}
