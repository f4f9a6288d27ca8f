// Command dumpdiff compares two sets of states: a TLC state dump (written
// by `tlc2.TLC -dump FILE`, see tools/tlc.sh --dump) and the explorer's
// dump (`podlife-dev check --dump FILE`). The sets must be equal, state for
// state; where they differ it prints the first states found in only one.
// Values compare as TLA+ values (tlavalue.Value): a record and a function
// over the same strings (TLC prints the latter as the former) are equal,
// and field and entry order does not matter.
//
//	go run ./tools/dumpdiff [-n 5] TLC.dump EXPLORER.dump
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/podlife/podlife/explore/tlcstate"
)

func main() {
	n := flag.Int("n", 5, "how many differing states to print from each side")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: dumpdiff [-n N] A.dump B.dump")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	code, err := run(os.Stdout, flag.Arg(0), flag.Arg(1), *n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dumpdiff:", err)
	}
	os.Exit(code)
}

// run returns 0 when the sets are equal, 1 when they differ.
func run(out io.Writer, pathA, pathB string, n int) (int, error) {
	read := func(path string) ([]tlcstate.State, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		states, err := tlcstate.Read(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return states, nil
	}
	a, err := read(pathA)
	if err != nil {
		return 2, err
	}
	b, err := read(pathB)
	if err != nil {
		return 2, err
	}
	onlyA, onlyB, na, nb := tlcstate.Diff(a, b, n)
	fmt.Fprintf(out, "%s: %d distinct states\n%s: %d distinct states\n", pathA, na, pathB, nb)
	if len(onlyA) == 0 && len(onlyB) == 0 {
		fmt.Fprintln(out, "equal: the two dumps hold the same states")
		return 0, nil
	}
	for _, side := range []struct {
		path   string
		states []string
	}{{pathA, onlyA}, {pathB, onlyB}} {
		if len(side.states) > 0 {
			fmt.Fprintf(out, "\nfirst states only in %s:\n", side.path)
			for _, s := range side.states {
				fmt.Fprintln(out, "  "+s)
			}
		}
	}
	return 1, nil
}
