package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/podlife/podlife/fsm"
)

func TestTablePrintsRowsAndDiagram(t *testing.T) {
	tests := []struct {
		args     []string
		want     []string
		dontWant []string
	}{
		// T20 rows (a finished record ignores updates) change nothing. A
		// removed record goes back to Absent: there is no state Removed.
		{[]string{"table"}, []string{fsm.SpecHash, "T8 ", "stateDiagram-v2", "Finished --> Absent : SyncKnownPods", "(record deleted)"}, []string{"T20", "Removed"}},
		{[]string{"table", "--all"}, []string{"T20"}, []string{"Removed"}},
		{[]string{"table", "--diagram"}, []string{"stateDiagram-v2"}, []string{"REF"}},
	}
	for _, tt := range tests {
		cmd := tableCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetArgs(tt.args[1:])
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: output lacks %q", tt.args, w)
			}
		}
		for _, w := range tt.dontWant {
			if strings.Contains(out.String(), w) {
				t.Errorf("%v: output has %q", tt.args, w)
			}
		}
	}
}
