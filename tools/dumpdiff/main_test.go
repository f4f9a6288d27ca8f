package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("tlc.dump", "State 1:\n/\\ x = 1\n/\\ y = <<\"p1\">>\n\nState 2:\n/\\ x = 2\n/\\ y = <<>>\n")
	same := write("same.dump", "State 1:\n/\\ y = <<>> /\\ x = 2\n\nState 2:\n/\\ y = <<\"p1\">> /\\ x = 1\n")
	other := write("other.dump", "State 1:\n/\\ x = 1 /\\ y = <<\"p1\">>\n\nState 2:\n/\\ x = 3 /\\ y = <<>>\n")

	var out strings.Builder
	if code, err := run(&out, a, same, 5); code != 0 || err != nil {
		t.Fatalf("equal dumps: code %d, %v\n%s", code, err, out.String())
	}
	out.Reset()
	code, err := run(&out, a, other, 5)
	if code != 1 || err != nil || !strings.Contains(out.String(), "x = 2") || !strings.Contains(out.String(), "x = 3") {
		t.Fatalf("differing dumps: code %d, %v\n%s", code, err, out.String())
	}
	// TLC prints a function over strings as a record, over lines; the
	// same value as a function is the same state.
	tlcRec := write("tlc-rec.dump", "State 1:\n/\\ rec = [ p1 |->\n      [ state |-> \"Absent\",\n        grace |-> 0 ] ]\n/\\ waiting = <<>>\n\n")
	fnRec := write("fn-rec.dump", "State 1:\n/\\ waiting = <<>> /\\ rec = (\"p1\" :> [grace |-> 0, state |-> \"Absent\"])\n")
	out.Reset()
	if code, err := run(&out, tlcRec, fnRec, 5); code != 0 || err != nil {
		t.Fatalf("a record and the same function: code %d, %v\n%s", code, err, out.String())
	}
	if code, err := run(&out, a, filepath.Join(dir, "missing"), 5); code != 2 || err == nil {
		t.Fatalf("missing file: code %d, %v", code, err)
	}
}
