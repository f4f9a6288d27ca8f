// Command podlife is the podlife node agent (run) and its operator verbs
// (status, shutdown, logs). The developer verbs (check, table, demo) are in
// cmd/podlife-dev, so this binary links no model or trace checker.
package main

import (
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "podlife",
		Short:         "The podlife node agent: a pod lifecycle engine with a formal model it cannot drift from",
		SilenceUsage:  true,
		SilenceErrors: false,
		Version:       kubernetesVersion(debug.ReadBuildInfo()),
	}
	root.SetVersionTemplate("Kubernetes {{.Version}}\n") // the kubelet's --version
	root.AddCommand(runCommand(), statusCommand(), shutdownCommand(), logsCommand())
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
