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

	"github.com/podlife/podlife/agent"
)

// httpClient talks to the agent's local endpoint.
var httpClient = &http.Client{Timeout: 10 * time.Second}

func statusCommand() *cobra.Command {
	var (
		address string
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print the pods of a running agent as a table",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pods, raw, err := fetchPods(address)
			if err != nil {
				return err
			}
			if asJSON {
				_, err = cmd.OutOrStdout().Write(raw)
				return err
			}
			return agent.WriteTable(cmd.OutOrStdout(), pods)
		},
	}
	cmd.Flags().StringVar(&address, "address", agent.DefaultConfig().Address, "the agent's HTTP endpoint")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the JSON of /pods")
	return cmd
}

// fetchPods reads /pods from the agent at address.
func fetchPods(address string) ([]agent.PodInfo, []byte, error) {
	resp, err := httpClient.Get("http://" + address + "/pods")
	if err != nil {
		return nil, nil, fmt.Errorf("agent at %s: %w", address, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("agent at %s: /pods: %s", address, resp.Status)
	}
	var pods []agent.PodInfo
	if err := json.Unmarshal(raw, &pods); err != nil {
		return nil, nil, fmt.Errorf("agent at %s: /pods: %w", address, err)
	}
	return pods, raw, nil
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
		Long: `shutdown asks the agent to shut the node down gracefully, as SIGTERM does: new pods are
rejected and running ones are stopped band by band. It talks to the agent's control socket,
podlife.sock in the agent's --root-dir (mode 0600: only the agent's user and root may use it; the
TCP endpoint is read-only). With --wait it waits until the agent has exited (its socket stops
answering), at most that long.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if socket == "" {
				socket = agent.ControlSocket(rootDir)
			}
			answer, err := agent.ShutdownNode(cmd.Context(), socket)
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), answer)
			if wait <= 0 {
				return nil
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), wait)
			defer cancel()
			if err := agent.WaitAgentExited(ctx, socket); err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					return fmt.Errorf("agent at %s did not exit within %s", socket, wait)
				}
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "agent exited")
			return nil
		},
	}
	cmd.Flags().StringVar(&rootDir, "root-dir", agent.DefaultRootDir(), "the agent's root directory, which holds its control socket")
	cmd.Flags().StringVar(&socket, "socket", "", "the agent's control socket (default: "+agent.ControlSocketName+" in --root-dir)")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait until the agent exited, at most this long")
	cmd.MarkFlagsMutuallyExclusive("root-dir", "socket")
	return cmd
}
