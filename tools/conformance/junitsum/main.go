// Command junitsum summarizes the JUnit report of an e2e run of
// tools/conformance.sh: how many specs of the selection passed, failed,
// skipped themselves or did not run (the run's --timeout came first), the
// failed suite nodes, and each failure's one-line reason grouped by cause
// (the reason with names, UIDs, addresses, durations and numbers masked).
//
//	go run ./tools/conformance/junitsum [-node NAME] [-selection DRYRUN.xml] [-tsv OUT] REPORT.xml
//	go run ./tools/conformance/junitsum -list DRYRUN.xml
//
// -selection is the JUnit report of a `ginkgo --dry-run` of the same
// selection: its passed cases are the specs the run was asked for, so that
// a spec skipped without a reason counts as not run rather than filtered
// out. -tsv writes one line per spec (outcome, seconds, name, reason) to
// compare two runs, podlife's and the kubelet's, spec by spec. -list prints
// the specs a dry run selected, one a line, and their count to stderr.
//
// It exits 0 when every selected spec ran and passed (or skipped itself), 1
// otherwise, 2 on bad usage or an unreadable report.
//
// There is no kubelet counterpart: upstream CI reads the same reports with
// test-infra's Spyglass; this prints what a terminal or CI log needs.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	node := flag.String("node", "", "the node under test, shown in the first line")
	selection := flag.String("selection", "", "JUnit report of a dry run of the same selection (its passed cases are the selected specs)")
	tsv := flag.String("tsv", "", "also write one line per spec (outcome, seconds, name, reason) to this file")
	list := flag.Bool("list", false, "print the specs the dry-run report REPORT.xml selected")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: junitsum [-node NAME] [-selection DRYRUN.xml] [-tsv OUT] REPORT.xml\n       junitsum -list DRYRUN.xml")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if *list {
		if err := listSelected(os.Stdout, os.Stderr, flag.Arg(0)); err != nil {
			fmt.Fprintln(os.Stderr, "junitsum:", err)
			os.Exit(2)
		}
		return
	}
	ok, err := run(flag.Arg(0), *selection, *node, *tsv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "junitsum:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

// run summarizes report to stdout and reports whether the run succeeded.
func run(report, selection, node, tsv string) (bool, error) {
	cases, err := readJUnit(report)
	if err != nil {
		return false, err
	}
	var selected map[string]bool
	if selection != "" {
		if selected, err = selectedSpecs(selection); err != nil {
			return false, fmt.Errorf("-selection: %w", err)
		}
	}
	s := summarize(cases, selected)
	s.write(os.Stdout, node)
	if tsv != "" {
		f, err := os.Create(tsv)
		if err != nil {
			return false, fmt.Errorf("-tsv: %w", err)
		}
		s.writeTSV(f)
		if err := f.Close(); err != nil {
			return false, fmt.Errorf("-tsv: %w", err)
		}
	}
	return s.ok(), nil
}

// listSelected prints the specs of a dry run's report in name order to out
// and how many there are to info.
func listSelected(out, info io.Writer, dryRun string) error {
	selected, err := selectedSpecs(dryRun)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(selected))
	for name := range selected {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintln(out, name)
	}
	fmt.Fprintf(info, "%d specs selected\n", len(names))
	return nil
}

// selectedSpecs reads a dry run's report: in a dry run ginkgo marks every
// spec that would run passed and the filtered ones skipped.
func selectedSpecs(path string) (map[string]bool, error) {
	cases, err := readJUnit(path)
	if err != nil {
		return nil, err
	}
	selected := map[string]bool{}
	for _, c := range cases {
		if c.Status == "passed" && strings.HasPrefix(c.Name, leafPrefix) {
			selected[specName(c.Name)] = true
		}
	}
	if len(selected) == 0 {
		return nil, fmt.Errorf("%s: no spec passed in the dry run: nothing selected", path)
	}
	return selected, nil
}
