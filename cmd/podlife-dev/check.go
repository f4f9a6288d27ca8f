package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/explore"
	"github.com/podlife/podlife/explore/tlcstate"
)

func checkCommand() *cobra.Command {
	var (
		config, dump, replay, fromTLC, counterexample string
		pods, static, killChannels                    int
		graces                                        string
		specGrace                                     int64
		strict, noLiveness                            bool
		only                                          []string
	)
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Model-check the engine's core and the container table on the bounds of tla/MC*.cfg",
		Long: `check explores the engine's synchronous core (worker.Core) breadth-first through every
interleaving of the inputs tla/PodLifecycle.tla's Next allows, checks the spec's invariants on
every state and step and its liveness properties on the state graph, and prints the counts
TLC must reproduce on the same configuration. On a violation it prints the shortest behaviour
and writes it as a replayable counterexample (JSON inputs).

By default it checks every shipped configuration CI checks (all but MCThreePods, which
takes minutes: --config MCThreePods), then the container table's configurations
(tla/MCContainer*.cfg, package explore/container: the model of tla/ContainerLifecycle.tla,
every container step through fsm/container's generated Fire; --config MCContainerSandbox
checks one). --pods, --static, --grace-overrides and
--spec-grace check other bounds instead (pods p1..pN, the first --static of them static).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			containers, err := containerConfigs(cmd, config, only)
			if err != nil {
				return err
			}
			if strings.HasPrefix(config, "MCContainer") {
				if replay != "" || fromTLC != "" {
					return errors.New("--replay and --from-tlc take a pod configuration, not a container one")
				}
				return checkContainers(out, containers, dump)
			}
			cfgs, err := selectConfigs(cmd, config, pods, static, killChannels, graces, specGrace)
			if err != nil {
				return err
			}
			if len(only) > 0 {
				for i := range cfgs {
					cfgs[i].Properties = only
					if err := cfgs[i].Validate(); err != nil {
						return err
					}
				}
			}
			switch {
			case replay != "":
				return replayFile(out, cfgs[0], replay)
			case fromTLC != "":
				return convertTLC(out, cfgs[0], fromTLC, counterexample)
			}
			tuneGC()
			failed := false
			for _, cfg := range cfgs {
				fmt.Fprintf(out, "checking %s: pods %v, static %v, grace overrides %v, spec grace %d\n",
					cfg.Name, cfg.Pods, cfg.StaticPods, cfg.GraceOverrides, cfg.SpecGrace)
				res, err := explore.Explore(cfg, explore.Options{Strict: strict, SkipLiveness: noLiveness,
					Progress: func(p explore.Progress) { fmt.Fprintln(errOut, p) }})
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%s: %d distinct states, %d transitions, depth %d, %.1fs, %.0f states/s\n",
					cfg.Name, res.States, res.Transitions, res.Depth, res.Elapsed.Seconds(), res.StatesPerSecond())
				if dump != "" {
					path := dump
					if len(cfgs) > 1 {
						path = strings.TrimSuffix(dump, ".dump") + "-" + cfg.Name + ".dump"
					}
					if err := writeDump(res, path); err != nil {
						return err
					}
					fmt.Fprintf(out, "wrote the reachable states to %s\n", path)
				}
				if v := res.Violation; v != nil {
					failed = true
					if err := reportViolation(out, cfg, v, counterexample); err != nil {
						return err
					}
					continue
				}
				checked := res.Checked()
				fmt.Fprintf(out, "%s: all %d properties hold: %s\n", cfg.Name, len(checked), strings.Join(checked, " "))
			}
			switch err := checkContainers(out, containers, dump); {
			case errors.Is(err, errViolated):
				failed = true
			case err != nil:
				return err
			}
			if failed {
				return errViolated
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&config, "config", "", "a shipped configuration (MCPodLifecycle, MCContainerSandbox, ...); default: all but those outside CI (MCThreePods)")
	f.IntVar(&pods, "pods", 0, "check pods p1..pN instead of a shipped configuration")
	f.IntVar(&static, "static", 0, "with --pods: how many of them (the first ones) are static")
	f.StringVar(&graces, "grace-overrides", "1", "with --pods: comma-separated grace periods kills and deletions request")
	f.Int64Var(&specGrace, "spec-grace", 2, "with --pods: every pod's terminationGracePeriodSeconds")
	f.IntVar(&killChannels, "kill-channels", 1, "with --pods: send a kill only while fewer of the pod's completion channels are open")
	f.StringVar(&dump, "dump", "", "write the reachable states to this file in TLC's -dump form (compare with tools/dumpdiff)")
	f.StringVar(&replay, "replay", "", "replay a counterexample file (JSON inputs) instead of exploring")
	f.StringVar(&fromTLC, "from-tlc", "", "turn a TLC error trace (text) into a counterexample file and replay it")
	f.StringVar(&counterexample, "counterexample", "", "where to write a counterexample (default: <config>-<property>.json)")
	f.BoolVar(&strict, "strict", false, "clone the core after every input that fired (slower; see explore.Options)")
	f.BoolVar(&noLiveness, "no-liveness", false, "skip the liveness check")
	f.StringSliceVar(&only, "property", nil, "check only these properties (repeat or separate with commas; default: the config's own)")
	return cmd
}

func selectConfigs(cmd *cobra.Command, name string, pods, static, killChannels int, graces string, specGrace int64) ([]explore.Config, error) {
	if cmd.Flags().Changed("pods") {
		cfg := explore.Config{Name: fmt.Sprintf("pods%d-static%d", pods, static), SpecGrace: specGrace, KillChannels: killChannels,
			RuntimePods: true, TerminalPhases: true}
		for i := 1; i <= pods; i++ {
			uid := types.UID("p" + strconv.Itoa(i))
			cfg.Pods = append(cfg.Pods, uid)
			if i <= static {
				cfg.StaticPods = append(cfg.StaticPods, uid)
			}
		}
		for _, g := range strings.Split(graces, ",") {
			if g = strings.TrimSpace(g); g == "" {
				continue
			}
			n, err := strconv.ParseInt(g, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("--grace-overrides: %q is not a number", g)
			}
			cfg.GraceOverrides = append(cfg.GraceOverrides, n)
		}
		return []explore.Config{cfg}, cfg.Validate()
	}
	if name == "" {
		return explore.InCI(), nil
	}
	cfg, err := explore.ShippedConfig(name)
	return []explore.Config{cfg}, err
}

func writeDump(res *explore.Result, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := res.Dump(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func reportViolation(out io.Writer, cfg explore.Config, v *explore.Violation, path string) error {
	fmt.Fprintf(out, "VIOLATION %s\n%s\nbehaviour (%d steps", v.Property, v.Message, len(v.Trace))
	if len(v.Cycle) > 0 {
		fmt.Fprintf(out, ", then %d steps repeated forever", len(v.Cycle))
	}
	fmt.Fprintln(out, "):")
	for i, s := range v.States {
		if i > 0 {
			steps := append(v.Trace, v.Cycle...)
			fmt.Fprintf(out, "  %3d. %s\n", i, steps[i-1])
		}
		fmt.Fprintf(out, "       %s\n", s)
	}
	if path == "" {
		path = cfg.Name + "-" + v.Property + ".json"
	}
	data, err := json.MarshalIndent(counterexampleFile{Config: cfg.Name, Property: v.Property, Inputs: v.Trace, Cycle: v.Cycle}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote the counterexample to %s (replay: podlife-dev check --config %s --replay %s)\n", path, cfg.Name, path)
	return nil
}

// counterexampleFile is a replayable behaviour.
type counterexampleFile struct {
	Config   string          `json:"config"`
	Property string          `json:"property,omitempty"`
	Inputs   []explore.Input `json:"inputs"`
	Cycle    []explore.Input `json:"cycle,omitempty"`
}

func replayFile(out io.Writer, cfg explore.Config, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var ce counterexampleFile
	if err := json.Unmarshal(data, &ce); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := explore.Replay(cfg, append(ce.Inputs, ce.Cycle...)); err != nil {
		return fmt.Errorf("replaying %s: %w", path, err)
	}
	fmt.Fprintf(out, "replayed %d steps of %s on %s: every invariant and step property holds\n", len(ce.Inputs)+len(ce.Cycle), path, cfg.Name)
	return nil
}

func convertTLC(out io.Writer, cfg explore.Config, tracePath, path string) error {
	f, err := os.Open(tracePath)
	if err != nil {
		return err
	}
	defer f.Close()
	states, err := tlcstate.Read(f)
	if err != nil {
		return err
	}
	inputs, err := explore.FromTLC(cfg, states)
	if err != nil {
		return err
	}
	if path == "" {
		path = strings.TrimSuffix(tracePath, ".txt") + ".json"
	}
	data, err := json.MarshalIndent(counterexampleFile{Config: cfg.Name, Inputs: inputs}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "TLC's %d states are %d engine steps; wrote %s\n", len(states), len(inputs), path)
	return replayFile(out, cfg, path)
}

// gcHeadroom is how far the heap may grow past its live part before the
// collector runs, while check explores.
const gcHeadroom = 2 << 30

// tuneGC makes the collector run on a fixed headroom over the live heap
// instead of GOGC's ratio (unless GOGC or GOMEMLIMIT is set): the
// exploration allocates a core clone (about 2 KB) per step that changes the
// state while it keeps little alive, so GOGC=100 collects every few
// megabytes and even 400 spends a quarter of the time marking; with the
// visited set and node table pointer-free, the live heap is mostly the
// frontier's cores. A 2 GiB headroom collects a few times a minute and
// keeps the peak RSS at the live heap plus 2 GiB, also when large bounds
// grow the live heap (the limit follows it).
func tuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(gcHeadroom)
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for range time.Tick(100 * time.Millisecond) {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				debug.SetMemoryLimit(int64(sample[0].Value.Uint64()) + gcHeadroom)
			}
		}
	}()
}
