// Package tlcstate reads and writes the states TLC prints: the dump of
// -dump and the states of an error trace, as assignments of TLA+ values
// (package tlavalue) to a spec's variables, so that the explorers' states
// and TLC's can be compared state for state (tools/dumpdiff) and TLC's
// counterexamples replayed on the engine.
package tlcstate

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/podlife/podlife/explore/tlavalue"
)

// State is an assignment of TLC values to the spec's variables.
type State map[string]tlavalue.Value

// Canonical prints the state with its variables sorted, one line, each
// value in its canonical form (see Value.Canonical).
func (s State) Canonical() string {
	return strings.Join(s.conjuncts(), " /\\ ")
}

// Equal reports whether s and t give the same variables the same values.
func (s State) Equal(t State) bool { return s.Canonical() == t.Canonical() }

// conjuncts returns "var = value" for each variable, sorted by name.
func (s State) conjuncts() []string {
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + " = " + s[n].Canonical()
	}
	return out
}

var stateHeader = regexp.MustCompile(`^State \d+:`)

// Read reads the states of a TLC state dump (-dump FILE) or of a TLC
// error trace: blocks that start with a "State N:" line and list
// "/\ var = value" conjuncts (a value may span lines). Other lines are
// ignored, and so is a block without conjuncts (the "State N: Stuttering"
// of a liveness counterexample).
func Read(r io.Reader) ([]State, error) {
	var states []State
	var cur []string
	flush := func() error {
		if len(cur) == 0 {
			cur = nil
			return nil
		}
		s, err := parseConjuncts(strings.Join(cur, "\n"))
		if err != nil {
			return fmt.Errorf("state %d: %w", len(states)+1, err)
		}
		states = append(states, s)
		cur = nil
		return nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case stateHeader.MatchString(trimmed):
			if err := flush(); err != nil {
				return nil, err
			}
			cur = []string{}
		case cur != nil && trimmed == "":
			if err := flush(); err != nil {
				return nil, err
			}
		case cur != nil:
			cur = append(cur, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return states, nil
}

// parseConjuncts parses "/\ x = v /\ y = w" (one variable alone may omit
// the leading /\).
func parseConjuncts(text string) (State, error) {
	s := State{}
	text = strings.TrimSpace(text)
	parts := strings.Split(text, "/\\ ")
	for _, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, " = ")
		if !ok {
			return nil, fmt.Errorf("want \"var = value\", have %q", part)
		}
		v, err := tlavalue.ParseValue(val)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		s[strings.TrimSpace(name)] = v
	}
	return s, nil
}

// WriteDump writes states as TLC's -dump does: "State N:", then one
// "/\ var = value" line per variable, then an empty line. Values are in
// the form TLC prints them (records for functions over strings, see
// Value.Canonical), on one line each; variables are sorted by name and
// states by their canonical form, so that two dumps of the same set are
// equal text and Read reads them back.
func WriteDump(w io.Writer, states []State) error {
	type dumped struct {
		key       string
		conjuncts []string
	}
	ds := make([]dumped, len(states))
	for i, s := range states {
		c := s.conjuncts()
		ds[i] = dumped{strings.Join(c, " /\\ "), c}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].key < ds[j].key })
	bw := bufio.NewWriter(w)
	for i, d := range ds {
		fmt.Fprintf(bw, "State %d:\n", i+1)
		for _, c := range d.conjuncts {
			fmt.Fprintf(bw, "/\\ %s\n", c)
		}
		bw.WriteString("\n")
	}
	return bw.Flush()
}

// Diff compares two sets of states; it returns up to max canonical
// states found only in a and only in b, and the sizes of both sets.
func Diff(a, b []State, max int) (onlyA, onlyB []string, sizeA, sizeB int) {
	set := func(ss []State) map[string]bool {
		m := make(map[string]bool, len(ss))
		for _, s := range ss {
			m[s.Canonical()] = true
		}
		return m
	}
	ma, mb := set(a), set(b)
	pick := func(from, other map[string]bool) []string {
		var out []string
		for k := range from {
			if !other[k] {
				out = append(out, k)
			}
		}
		sort.Strings(out)
		return out[:min(len(out), max)]
	}
	return pick(ma, mb), pick(mb, ma), len(ma), len(mb)
}
