package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/spec"
)

func tableCommand() *cobra.Command {
	var diagramOnly, all bool
	cmd := &cobra.Command{
		Use:   "table",
		Short: "Print the lifecycle table and its state diagram",
		Long: `Print the lifecycle table of package spec: one line per transition (the rows
that change nothing are left out unless --all), then the Mermaid state diagram.
The engine runs the Go guards generated from this table; TLC checks the TLA+
operators generated from it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if !diagramOnly {
				if err := printTable(out, spec.Table, all); err != nil {
					return err
				}
				fmt.Fprintln(out)
			}
			fmt.Fprint(out, spec.Mermaid(spec.Table))
			return nil
		},
	}
	cmd.Flags().BoolVar(&diagramOnly, "diagram", false, "print only the Mermaid diagram")
	cmd.Flags().BoolVar(&all, "all", false, "include the rows that ignore their input")
	return cmd
}

func printTable(out io.Writer, rows []spec.Row, all bool) error {
	reach := spec.Reachable(rows)
	fmt.Fprintf(out, "podlife lifecycle table %s: %d rows, %d states, %d events, %d reachable records per pod\n\n",
		fsm.SpecHash, len(rows), len(spec.States()), len(spec.Events()), len(reach.Records))
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "REF\tFROM\tEVENT\tGUARD\tTO\tSETS\tEFFECTS")
	for _, r := range rows {
		if r.Ignores() && !all {
			continue
		}
		var sets []string
		for _, a := range r.Set {
			sets = append(sets, a.Var.Name+":="+a.Value.String())
		}
		if r.Reset {
			sets = append(sets, "(record deleted)")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Ref, r.From, r.Event, r.Guard, r.To, strings.Join(sets, " "), r.Effects)
	}
	return w.Flush()
}
