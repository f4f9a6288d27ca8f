package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/client"
	"github.com/podlife/podlife/internal/podtable"
)

// httpClient talks to the agent's read-only endpoint (status --address).
var httpClient = &http.Client{Timeout: 10 * time.Second}

func statusCommand() *cobra.Command {
	var (
		rootDir, socket, address string
		asJSON                   bool
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print the pods of a running agent as a table, and its manifest errors",
		Long: `status reads the agent's /lifecycle and prints one line per pod: its engine state, phase,
container restarts, and why it is not running (a static pod waiting for its full name names the
pod holding it); then the manifest files, or the directory, the agent cannot use, with why. With
--json it prints the JSON as it came.

It asks the agent's control socket, podlife.sock in the agent's --root-dir (mode 0600: the agent's
user and root). With --address it reads the read-only TCP endpoint instead, which is off unless
the agent was started with --address.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var (
				status api.Lifecycle
				raw    []byte
				err    error
			)
			if address != "" {
				status, raw, err = fetchLifecycle(address)
			} else {
				if socket == "" {
					socket = api.ControlSocket(rootDir)
				}
				status, raw, err = client.Lifecycle(cmd.Context(), socket)
			}
			if err != nil {
				return err
			}
			if asJSON {
				_, err = cmd.OutOrStdout().Write(raw)
				return err
			}
			return podtable.WriteStatus(cmd.OutOrStdout(), status)
		},
	}
	cmd.Flags().StringVar(&rootDir, "root-dir", api.DefaultRootDir(), "the agent's root directory, which holds its control socket")
	cmd.Flags().StringVar(&socket, "socket", "", "the agent's control socket (default: "+api.ControlSocketName+" in --root-dir)")
	cmd.Flags().StringVar(&address, "address", "", "read the agent's read-only TCP endpoint at this host:port instead (on only if the agent was given --address)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the JSON of /lifecycle")
	cmd.MarkFlagsMutuallyExclusive("root-dir", "socket", "address")
	return cmd
}

// fetchLifecycle reads /lifecycle from the read-only endpoint at address.
func fetchLifecycle(address string) (api.Lifecycle, []byte, error) {
	var status api.Lifecycle
	resp, err := httpClient.Get("http://" + address + api.LifecyclePath)
	if err != nil {
		return status, nil, fmt.Errorf("agent at %s: %w", address, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return status, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return status, nil, fmt.Errorf("agent at %s: /lifecycle: %s", address, resp.Status)
	}
	if err := json.Unmarshal(raw, &status); err != nil {
		return status, nil, fmt.Errorf("agent at %s: /lifecycle: %w", address, err)
	}
	return status, raw, nil
}

func shutdownCommand() *cobra.Command {
	var (
		rootDir string
		socket  string
		wait    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "shutdown",
		Short: "Ask a running agent for a graceful node shutdown",
		Long: `shutdown asks the agent to shut the node down gracefully, as systemd-logind's announcement
of a shutdown does: new pods are rejected and running ones are stopped band by band; then the
agent exits (SIGTERM stops the agent and leaves the pods running). It talks to the agent's control socket,
podlife.sock in the agent's --root-dir (mode 0600: only the agent's user and root may use it; the
TCP endpoint is read-only). With --wait it waits until the agent has exited (its socket stops
answering), at most that long.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if socket == "" {
				socket = api.ControlSocket(rootDir)
			}
			answer, err := client.ShutdownNode(cmd.Context(), socket)
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), answer)
			if wait <= 0 {
				return nil
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), wait)
			defer cancel()
			if err := client.WaitAgentExited(ctx, socket); err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					return fmt.Errorf("agent at %s did not exit within %s", socket, wait)
				}
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "agent exited")
			return nil
		},
	}
	cmd.Flags().StringVar(&rootDir, "root-dir", api.DefaultRootDir(), "the agent's root directory, which holds its control socket")
	cmd.Flags().StringVar(&socket, "socket", "", "the agent's control socket (default: "+api.ControlSocketName+" in --root-dir)")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait until the agent exited, at most this long")
	cmd.MarkFlagsMutuallyExclusive("root-dir", "socket")
	return cmd
}
