package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/podlife/podlife/explore/container"
)

// errViolated: a configuration has a violated property (reported above it).
var errViolated = errors.New("a property is violated")

// containerConfigs are the container table's configurations check
// explores: the one --config names, or all of them when it checks the
// shipped pod configurations too (no --config, no --pods).
func containerConfigs(cmd *cobra.Command, name string, only []string) ([]container.Config, error) {
	var cfgs []container.Config
	switch {
	case strings.HasPrefix(name, "MCContainer"):
		cfg, err := container.ShippedConfig(name)
		if err != nil {
			return nil, err
		}
		cfgs = []container.Config{cfg}
	case name == "" && !cmd.Flags().Changed("pods"):
		cfgs = append(cfgs, container.Shipped...)
	}
	if len(only) == 0 {
		return cfgs, nil
	}
	var out []container.Config
	for _, cfg := range cfgs {
		cfg.Properties = only
		if err := cfg.Validate(); err == nil {
			out = append(out, cfg)
		} else if name != "" {
			return nil, err // a pod property asked of a container config
		}
	}
	return out, nil
}

// checkContainers explores the container configurations, printing the
// same lines as for a pod configuration (CI's compare-counts reads the
// counts); it returns errViolated when a property fails.
func checkContainers(out io.Writer, cfgs []container.Config, dump string) error {
	failed := false
	for _, cfg := range cfgs {
		fmt.Fprintf(out, "checking %s: containers %v, policies %v, max sandbox %d\n", cfg.Name, cfg.Kinds, cfg.Policies, cfg.MaxSandbox)
		res, err := container.Explore(cfg)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %d distinct states, %d transitions, depth %d, %.2fs, %.0f states/s\n",
			cfg.Name, res.States, res.Transitions, res.Depth, res.Elapsed.Seconds(), float64(res.States)/max(res.Elapsed.Seconds(), 1e-9))
		if dump != "" {
			path := strings.TrimSuffix(dump, ".dump") + "-" + cfg.Name + ".dump"
			if len(cfgs) == 1 {
				path = dump
			}
			if err := writeContainerDump(res, path); err != nil {
				return err
			}
			fmt.Fprintf(out, "wrote the reachable states to %s\n", path)
		}
		if v := res.Violation; v != nil {
			failed = true
			fmt.Fprintf(out, "VIOLATION %s\n%s\nbehaviour (%d steps", v.Property, v.Message, len(v.Trace))
			if len(v.Cycle) > 0 {
				fmt.Fprintf(out, ", then %d steps repeated forever", len(v.Cycle))
			}
			fmt.Fprintln(out, "):")
			steps := append(append([]container.Input(nil), v.Trace...), v.Cycle...)
			for i, s := range v.States {
				if i > 0 {
					fmt.Fprintf(out, "  %3d. %s\n", i, steps[i-1])
				}
				fmt.Fprintf(out, "       %s\n", s)
			}
			continue
		}
		fmt.Fprintf(out, "%s: all %d properties hold: %s\n", cfg.Name, len(res.Checked), strings.Join(res.Checked, " "))
	}
	if failed {
		return errViolated
	}
	return nil
}

func writeContainerDump(res *container.Result, path string) error {
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
