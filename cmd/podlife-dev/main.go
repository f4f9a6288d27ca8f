// Command podlife-dev holds podlife's developer verbs: the exhaustive
// explorer of the engine's core (check), the lifecycle table (table) and
// the scripted end-to-end demo on the embedded runtime (demo). They live
// apart from the node agent, cmd/podlife, so the daemon a node runs links
// no model checker, trace checker or lifecycle table.
package main

import (
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:          "podlife-dev",
		Short:        "podlife's developer tools: the explorer, the lifecycle table and the demo",
		SilenceUsage: true,
	}
	root.AddCommand(checkCommand(), tableCommand(), demoCommand())
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
