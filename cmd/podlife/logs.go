package main

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/client"
)

func logsCommand() *cobra.Command {
	var (
		rootDir, socket, namespace   string
		follow, previous, timestamps bool
		tail, limitBytes             int64
		since                        time.Duration
	)
	cmd := &cobra.Command{
		Use:   "logs POD [CONTAINER]",
		Short: "Print the log of a container of a running agent's pod",
		Long: `logs prints what a container of a pod wrote to stdout and stderr, from the CRI log files
the runtime writes (with their rotated files), as kubectl logs does. CONTAINER may be left out when
the pod has one container. With -f it follows the current instance, across log rotations, until
the container exits; with --previous it prints the instance before the current one.

It talks to the agent's control socket, podlife.sock in the agent's --root-dir (mode 0600: only
the agent's user and root may read logs, which can hold secrets; the TCP endpoint serves none).
The embedded runtime writes no logs.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if socket == "" {
				socket = api.ControlSocket(rootDir)
			}
			container := ""
			if len(args) == 2 {
				container = args[1]
			}
			q := url.Values{}
			if follow {
				q.Set("follow", "true")
			}
			if previous {
				q.Set("previous", "true")
			}
			if timestamps {
				q.Set("timestamps", "true")
			}
			if tail < -1 {
				return fmt.Errorf("--tail %d: must be -1 (all) or a number of lines from 0", tail)
			}
			if limitBytes < 0 {
				return fmt.Errorf("--limit-bytes %d: must be 0 (no limit) or a number of bytes from 1", limitBytes)
			}
			if tail >= 0 {
				q.Set("tailLines", strconv.FormatInt(tail, 10))
			}
			if limitBytes > 0 {
				q.Set("limitBytes", strconv.FormatInt(limitBytes, 10))
			}
			if since < 0 {
				return fmt.Errorf("--since %s: must not be negative", since)
			}
			if since > 0 {
				q.Set("sinceSeconds", strconv.FormatInt(int64(math.Ceil(since.Seconds())), 10))
			}
			return client.ContainerLogs(cmd.Context(), socket, namespace, args[0], container, q, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&rootDir, "root-dir", api.DefaultRootDir(), "the agent's root directory, which holds its control socket")
	f.StringVar(&socket, "socket", "", "the agent's control socket (default: "+api.ControlSocketName+" in --root-dir)")
	f.StringVarP(&namespace, "namespace", "n", "default", "the pod's namespace")
	f.BoolVarP(&follow, "follow", "f", false, "follow the log until the container exits")
	f.BoolVarP(&previous, "previous", "p", false, "print the log of the container's previous instance")
	f.BoolVar(&timestamps, "timestamps", false, "prefix each line with its RFC 3339 time")
	f.Int64Var(&tail, "tail", -1, "print only the last lines (-1: all)")
	f.Int64Var(&limitBytes, "limit-bytes", 0, "print at most this many bytes (0: no limit)")
	f.DurationVar(&since, "since", 0, "print only the lines of this last while (e.g. 5m)")
	cmd.MarkFlagsMutuallyExclusive("root-dir", "socket")
	return cmd
}
