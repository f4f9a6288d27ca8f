package container

import (
	"fmt"
	"slices"
	"strings"

	fc "github.com/podlife/podlife/fsm/container"
	sc "github.com/podlife/podlife/spec/container"
)

// Config is one tla/MCContainer*.tla configuration: the constants of
// tla/ContainerLifecycle.tla and the properties its .cfg checks.
// TestShippedConfigsMatchTheTLA compares Shipped with the files.
type Config struct {
	Name string
	// Kinds, Policies, Rules and ExitCodes are per container, in order
	// (the init order first).
	Kinds     []fc.ContainerKind
	Policies  []fc.RestartPolicy
	Rules     []bool
	ExitCodes [][]fc.ExitCode
	PodNever  bool
	// MaxSandbox is the last sandbox generation.
	MaxSandbox                        int
	SpecChanges, Probes, Terminations bool
	// Properties names the container.Properties to check; nil checks all.
	Properties []string
}

// MaxContainers bounds a configuration's containers.
const MaxContainers = 4

const (
	initK, sidecarK, regularK = fc.ContainerKindInit, fc.ContainerKindSidecar, fc.ContainerKindRegular
	never, onFailure, always  = fc.RestartPolicyNever, fc.RestartPolicyOnFailure, fc.RestartPolicyAlways
	zero, rule, other         = fc.ExitCodeZero, fc.ExitCodeRule, fc.ExitCodeOther
)

// The property lists of the .cfg files.
var (
	invariants = []string{"CTypeOK", "InitOneAtATime", "PhaseTerminalOnlyWhenDone"}
	safety     = []string{"InitInOrder", "RegularsAfterInit", "NothingOfThePreviousSandboxCounts", "NeverIsNeverRestarted",
		"OnFailureOnlyAfterFailure", "SidecarsStopLast", "BackoffGrowsToCap", "PhaseNeverLeft"}
)

func all() []string {
	var out []string
	for _, p := range sc.Properties {
		out = append(out, p.Name)
	}
	return out
}

// Shipped are the configurations of tla/MCContainer*.tla (see tla/README.md
// for what each is about).
var Shipped = []Config{
	{Name: "MCContainerLifecycle", Kinds: []fc.ContainerKind{initK, sidecarK, regularK}, Policies: []fc.RestartPolicy{onFailure, always, always},
		Rules: []bool{false, false, false}, ExitCodes: [][]fc.ExitCode{{zero, other}, {other}, {other}}, MaxSandbox: 1, Terminations: true,
		Properties: slices.Concat(invariants, safety)},
	{Name: "MCContainerNever", Kinds: []fc.ContainerKind{sidecarK, initK, regularK}, Policies: []fc.RestartPolicy{always, never, never},
		Rules: []bool{false, false, true}, PodNever: true, ExitCodes: [][]fc.ExitCode{{other}, {zero, other}, {zero, rule, other}}, MaxSandbox: 1,
		Probes: true, Terminations: true,
		Properties: slices.Concat(invariants, safety[:5], []string{"RulesAsWritten"}, safety[5:], []string{"TerminationStopsEveryContainer"})},
	{Name: "MCContainerNeverEnds", Kinds: []fc.ContainerKind{initK, sidecarK, regularK}, Policies: []fc.RestartPolicy{never, always, never},
		Rules: []bool{false, false, false}, PodNever: true, ExitCodes: [][]fc.ExitCode{{zero, other}, {other}, {zero, other}}, MaxSandbox: 1},
	{Name: "MCContainerProbes", Kinds: []fc.ContainerKind{sidecarK, regularK}, Policies: []fc.RestartPolicy{always, always},
		Rules: []bool{false, false}, ExitCodes: [][]fc.ExitCode{{other}, {other}}, SpecChanges: true, Probes: true, Terminations: true},
	{Name: "MCContainerSandbox", Kinds: []fc.ContainerKind{initK, regularK}, Policies: []fc.RestartPolicy{onFailure, always},
		Rules: []bool{false, false}, ExitCodes: [][]fc.ExitCode{{zero, other}, {other}}, MaxSandbox: 1, Terminations: true},
	{Name: "MCContainerSidecars", Kinds: []fc.ContainerKind{sidecarK, sidecarK, regularK}, Policies: []fc.RestartPolicy{always, always, always},
		Rules: []bool{false, false, false}, ExitCodes: [][]fc.ExitCode{{other}, {other}, {other}}, Terminations: true,
		Properties: slices.Concat(invariants, safety, []string{"TerminationStopsEveryContainer"})},
}

// ShippedConfig returns the shipped configuration called name.
func ShippedConfig(name string) (Config, error) {
	var names []string
	for _, c := range Shipped {
		if c.Name == name {
			return c, nil
		}
		names = append(names, c.Name)
	}
	return Config{}, fmt.Errorf("no container configuration %q (have %s)", name, strings.Join(names, ", "))
}

// Validate refuses what tla/ContainerLifecycle.tla's ASSUME refuses, and
// bounds the explorer cannot hold.
func (c Config) Validate() error {
	n := len(c.Kinds)
	switch {
	case n == 0 || n > MaxContainers:
		return fmt.Errorf("config %s: %d containers; the explorer takes 1 to %d", c.Name, n, MaxContainers)
	case len(c.Policies) != n || len(c.Rules) != n || len(c.ExitCodes) != n:
		return fmt.Errorf("config %s: %d kinds but %d policies, %d rules and %d exit code sets", c.Name, n, len(c.Policies), len(c.Rules), len(c.ExitCodes))
	case c.MaxSandbox < sc.GenDomain.Min || c.MaxSandbox > sc.GenDomain.Max:
		return fmt.Errorf("config %s: MaxSandbox %d outside %d..%d", c.Name, c.MaxSandbox, sc.GenDomain.Min, sc.GenDomain.Max)
	}
	for i := range n {
		if i > 0 && !inInitOrder(c.Kinds[i-1]) && inInitOrder(c.Kinds[i]) {
			return fmt.Errorf("config %s: container %d (%s) follows a container outside the init order", c.Name, i+1, c.Kinds[i])
		}
		if len(c.ExitCodes[i]) == 0 {
			return fmt.Errorf("config %s: container %d has no exit code", c.Name, i+1)
		}
		for _, code := range c.ExitCodes[i] {
			if code != zero && code != rule && code != other {
				return fmt.Errorf("config %s: container %d exits with %s; the runtime reports Zero, Rule or Other", c.Name, i+1, code)
			}
		}
	}
	for _, name := range c.Properties {
		if _, ok := sc.PropertyNamed(name); !ok {
			return fmt.Errorf("config %s: no property %s in container.Properties", c.Name, name)
		}
	}
	return nil
}

func inInitOrder(k fc.ContainerKind) bool { return k == initK || k == sidecarK }

// checked lists the properties the configuration checks, in table order.
func (c Config) checked() []string {
	if c.Properties == nil {
		return all()
	}
	return slices.DeleteFunc(all(), func(n string) bool { return !slices.Contains(c.Properties, n) })
}
