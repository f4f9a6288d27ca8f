// Command podlife is the podlife node agent and its tools.
package main

import (
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "podlife",
		Short:         "A pod lifecycle engine for node agents, with a formal model it cannot drift from",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(tableCommand(), checkCommand(), runCommand(), statusCommand(), shutdownCommand(), logsCommand(), demoCommand())
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
