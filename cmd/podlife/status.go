package main

import (
	"encoding/json"
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
		address string
		wait    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "shutdown",
		Short: "Ask a running agent for a graceful node shutdown",
		Long: `shutdown asks the agent at --address to shut the node down gracefully, as SIGTERM does:
new pods are rejected and running ones are stopped band by band. With --wait it waits until the
agent has exited (its endpoint stops answering), at most that long.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := httpClient.Post("http://"+address+"/shutdown", "text/plain", nil)
			if err != nil {
				return fmt.Errorf("agent at %s: %w", address, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				return fmt.Errorf("agent at %s: %s: %s", address, resp.Status, body)
			}
			fmt.Fprint(cmd.OutOrStdout(), string(body))
			if wait <= 0 {
				return nil
			}
			deadline := time.Now().Add(wait)
			for time.Now().Before(deadline) {
				if _, err := httpClient.Get("http://" + address + "/healthz"); err != nil {
					fmt.Fprintln(cmd.OutOrStdout(), "agent exited")
					return nil
				}
				time.Sleep(200 * time.Millisecond)
			}
			return fmt.Errorf("agent at %s did not exit within %s", address, wait)
		},
	}
	cmd.Flags().StringVar(&address, "address", agent.DefaultConfig().Address, "the agent's HTTP endpoint")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait until the agent exited, at most this long")
	return cmd
}
