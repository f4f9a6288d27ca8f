package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/podlife/podlife/agent/demo"
)

func demoCommand() *cobra.Command {
	var (
		dir     string
		logs    bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a scripted scenario end to end on the embedded runtime",
		Long: `demo starts the node agent on its embedded CRI runtime (no containerd, no root) and plays a
script against it through static pod manifests: an orphan left by a previous run, pods created,
updated, completed, killed with a grace period, force-deleted, a static pod replaced under the
same full name, a runtime error during termination, and a graceful node shutdown. It prints each
step and every lifecycle state change as it happens, then the final table and metrics, and
checks the engine's trace against the lifecycle table.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := demo.Options{Dir: dir, StepTimeout: timeout}
			if logs {
				opts.Logs = os.Stderr
			}
			return demo.Run(cmd.Context(), cmd.OutOrStdout(), opts)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "keep manifests, socket and trace.ndjson here (default: a temporary directory, removed)")
	cmd.Flags().BoolVar(&logs, "logs", false, "print the agent's structured logs on stderr")
	cmd.Flags().DurationVar(&timeout, "step-timeout", 30*time.Second, "how long each step may take")
	return cmd
}
