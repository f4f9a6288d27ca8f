package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strings"
)

// junitSuites is the JUnit XML that `ginkgo --junit-report` writes (ginkgo
// v2's reporters.JUnitTestSuites): only the fields the summary reads.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name  string      `xml:"name,attr"`
	Cases []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Status  string        `xml:"status,attr"`
	Time    float64       `xml:"time,attr"`
	Skipped *junitMessage `xml:"skipped"`
	Failure *junitMessage `xml:"failure"`
	Error   *junitMessage `xml:"error"`
	// SystemErr is the spec's timeline: its steps and log, with the
	// events of its namespace the framework dumps after a failure.
	SystemErr string `xml:"system-err"`
}

// junitMessage is a <failure>, <error> or <skipped>: ginkgo puts the
// failure's message in the attribute (left out by the e2e framework's own
// report) and "[FAILED] message\nIn [It] at: file:line" in the text.
type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// readJUnit parses the JUnit XML file at path.
func readJUnit(path string) ([]junitCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cases, err := parseJUnit(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cases, nil
}

// parseJUnit reads a <testsuites> document and returns every test case of
// every suite in it.
func parseJUnit(r io.Reader) ([]junitCase, error) {
	var doc junitSuites
	if err := xml.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("not a JUnit <testsuites> report: %w", err)
	}
	var cases []junitCase
	for _, s := range doc.Suites {
		cases = append(cases, s.Cases...)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("no <testcase> in the report")
	}
	return cases, nil
}

// leafPrefix is what ginkgo puts before a spec's text: the type of its leaf
// node. Suite nodes have other types ([SynchronizedBeforeSuite], ...).
const leafPrefix = "[It] "

// specName is the case's spec text as `ginkgo --dry-run -v` and the
// [Tags] in it show it: without the leaf node type in front and without the
// list of labels ginkgo appends (" [sig-node, NodeConformance]"), which
// repeats the tags.
func specName(junitName string) string {
	name := strings.TrimPrefix(junitName, leafPrefix)
	if !strings.HasSuffix(name, "]") {
		return name
	}
	i := strings.LastIndex(name, " [")
	if i < 0 {
		return name
	}
	labels := name[i+2 : len(name)-1]
	rest := name[:i]
	// Several labels are joined by ", ", which no [Tag] of a spec's text
	// holds; a single one is also a [Tag] earlier in the text.
	if strings.Contains(labels, ", ") || strings.Contains(rest, "["+labels+"]") {
		return rest
	}
	return name
}
