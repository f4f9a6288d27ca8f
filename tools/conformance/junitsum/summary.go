package main

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// outcome is what became of one spec of the selection.
type outcome string

const (
	passed  outcome = "passed"
	failed  outcome = "failed"  // failed, timed out, panicked, aborted, interrupted
	skipped outcome = "skipped" // the spec skipped itself (e2eskipper: not this provider, ...)
	notRun  outcome = "not-run" // selected, but the run ended first (--timeout)
)

// result is one spec's outcome and, for a failure or a skip, its reason.
type result struct {
	Name    string
	Outcome outcome
	Reason  string // one line
	// NodeEvent is the first failure event the node posted in the spec's
	// namespace ("Failed: Error: ..."), often the cause behind a timeout.
	NodeEvent string
	// EventIsCause is whether NodeEvent is a refusal or error, the cause.
	EventIsCause bool
	Seconds      float64
}

// summary is a run's results, the specs of the selection in name order, and
// the suite nodes (BeforeSuite, ReportAfterSuite, ...) that failed.
type summary struct {
	Specs       []result
	SuiteFailed []result
}

// summarize classifies the cases of a run. selected, when not nil, names
// the specs the run was asked for (a dry run's passed specs): a case
// skipped without a reason is then "not run" if selected and left out if
// not. Without it, such a case is taken to be filtered out.
func summarize(cases []junitCase, selected map[string]bool) summary {
	var s summary
	seen := map[string]bool{}
	for _, c := range cases {
		if !strings.HasPrefix(c.Name, leafPrefix) {
			if o, reason := classify(c); o == failed {
				s.SuiteFailed = append(s.SuiteFailed, result{Name: c.Name, Outcome: o, Reason: reason, Seconds: c.Time})
			}
			continue
		}
		name := specName(c.Name)
		o, reason := classify(c)
		if o == skipped && reason == "" {
			if selected == nil || !selected[name] {
				continue // filtered out by the selection
			}
			o = notRun
		}
		if selected != nil && !selected[name] {
			continue
		}
		seen[name] = true
		r := result{Name: name, Outcome: o, Reason: reason, Seconds: c.Time}
		if o == failed {
			r.NodeEvent, r.EventIsCause = nodeEvent(c.SystemErr)
		}
		s.Specs = append(s.Specs, r)
	}
	// A selected spec missing from the report altogether did not run either.
	for name := range selected {
		if !seen[name] {
			s.Specs = append(s.Specs, result{Name: name, Outcome: notRun})
		}
	}
	sort.Slice(s.Specs, func(i, j int) bool { return s.Specs[i].Name < s.Specs[j].Name })
	return s
}

// classify maps ginkgo's status of a case (types.SpecState's names) to an
// outcome and the one-line reason of a failure or skip.
func classify(c junitCase) (outcome, string) {
	switch c.Status {
	case "passed":
		return passed, ""
	case "skipped", "pending":
		if c.Skipped == nil {
			return skipped, ""
		}
		// "skipped - <why>" for a Skip() in the spec, "skipped" for a spec
		// the filters or an interrupt left out, "pending" for a pending one.
		msg := strings.TrimSpace(c.Skipped.Message)
		if reason, ok := strings.CutPrefix(msg, "skipped - "); ok {
			return skipped, firstLine(reason)
		}
		return skipped, ""
	}
	// failed, timedout, panicked, aborted, interrupted, or anything newer.
	m := c.Failure
	if m == nil {
		m = c.Error
	}
	if m == nil {
		return failed, c.Status
	}
	return failed, failureReason(c.Status, *m)
}

// failureTag matches the "[FAILED] " (or [TIMEDOUT], [PANICKED], ...) that
// ginkgo's text of a failure starts with.
var failureTag = regexp.MustCompile(`^\[[A-Z]+\] `)

// failureReason is the first line of a failure's message: the attribute
// if ginkgo wrote it, else the text after its tag.
func failureReason(status string, m junitMessage) string {
	msg := m.Message
	if strings.TrimSpace(msg) == "" {
		msg = failureTag.ReplaceAllString(strings.TrimSpace(m.Text), "")
	}
	if r := firstLines(msg); r != "" {
		return r
	}
	return status
}

// timeoutLine is the first line of gomega's Eventually failing: what
// timed out is on the next line.
var timeoutLine = regexp.MustCompile(`^(Timed out after [0-9.]+s\.|Told to stop trying after [0-9.]+s\.)$`)

// gomegaFrame is a line of gomega's failure text that says nothing of the
// cause: "Expected", a value's type ("<*errors.errorString | 0xc0>: "), a
// brace.
var gomegaFrame = regexp.MustCompile(`^(Expected|<.*>:?|\{|\})$`)

// firstLines is firstLine, with the first telling line after a bare gomega
// timeout ("Timed out after 300s." then "Expected" then "<*errors...>:"
// then the error).
func firstLines(s string) string {
	var lines []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || len(lines) == 1 && gomegaFrame.MatchString(line) {
			continue
		}
		lines = append(lines, line)
		if len(lines) == 2 {
			break
		}
	}
	switch {
	case len(lines) == 0:
		return ""
	case len(lines) == 2 && timeoutLine.MatchString(lines[0]):
		return cut(lines[0] + " " + lines[1])
	}
	return cut(lines[0])
}

// eventLine is a line of the framework's event dump (e2edebug) for an event
// a node (source podlife or kubelet, and the node's name) posted with a
// reason that says something failed.
var eventLine = regexp.MustCompile(`event for [^:]+: \{(podlife|kubelet) [^}]*\} ((Failed|Error|BackOff|Unhealthy|Evicted|OutOf|CreateContainer)[A-Za-z]*: .*)$`)

// nodeEvent is the first failure event of the node in a spec's timeline,
// bounded to one line, and whether it is a refusal or error (Failed...,
// CreateContainer..., Evicted, ...) rather than a probe failure or a
// back-off: a server's startup probe fails until it listens and a back-off
// follows some other failure, so those are shown only when there is no
// other, and are not taken as the cause.
func nodeEvent(timeline string) (string, bool) {
	var weak string
	for _, line := range strings.Split(timeline, "\n") {
		m := eventLine.FindStringSubmatch(strings.TrimSpace(line))
		switch {
		case m == nil:
		case m[3] == "Unhealthy" || m[3] == "BackOff":
			if weak == "" {
				weak = cut(m[2])
			}
		default:
			return cut(m[2]), true
		}
	}
	return weak, false
}

// maxReason bounds a one-line reason as kept; causes are made from that,
// so that the names in it do not move where it is cut. maxShown bounds it
// as printed.
const (
	maxReason = 1000
	maxShown  = 200
)

// firstLine is the first non-empty line of s, trimmed and bounded.
func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return cut(line)
		}
	}
	return ""
}

func cut(s string) string { return cutAt(s, maxReason) }

// shown is s cut to be printed on a line.
func shown(s string) string { return cutAt(s, maxShown) }

// cutAt is s cut to at most max bytes on a rune boundary, with an ellipsis.
func cutAt(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// What differs between two failures of one cause: the framework's random
// namespace and object names, UIDs, IP addresses and ports, durations and
// counts. The order matters: UIDs before plain numbers.
var causeRewrites = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<uid>"},
	{regexp.MustCompile(`\b[a-z0-9]+(-[a-z0-9]+)*-<uid>`), "<name>"},
	{regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b`), "<ip>"},
	{regexp.MustCompile(`\b[a-z0-9]+(-[a-z0-9]+)*-[0-9]{3,5}\b`), "<name>"},
	{regexp.MustCompile(`\b[a-z0-9]+(-[a-z0-9]+)*-[a-z0-9]{5}\b`), "<name>"},
	{regexp.MustCompile(`\d+(\.\d+)?(ms|s|m|h)\b`), "<duration>"},
	{regexp.MustCompile(`\d+`), "N"},
}

// cause is a failure reason with what varies from spec to spec replaced,
// so that failures of one cause share it.
func cause(reason string) string {
	for _, r := range causeRewrites {
		reason = r.re.ReplaceAllString(reason, r.with)
	}
	return reason
}

// count is how many specs have outcome o.
func (s summary) count(o outcome) int {
	n := 0
	for _, r := range s.Specs {
		if r.Outcome == o {
			n++
		}
	}
	return n
}

// group is the failures of one cause.
type group struct {
	Cause    string
	Failures []result
}

// failureGroups groups the failed specs by cause, the largest group first
// (ties by cause), the specs of a group by name. A node's failure event is
// the cause when there is one: a refused pod times out the spec's wait, and
// the timeout alone says nothing.
func (s summary) failureGroups() []group {
	byCause := map[string][]result{}
	for _, r := range s.Specs {
		if r.Outcome == failed {
			c := cause(r.Reason)
			if r.EventIsCause {
				c = "node: " + cause(r.NodeEvent)
			}
			byCause[c] = append(byCause[c], r)
		}
	}
	groups := make([]group, 0, len(byCause))
	for c, rs := range byCause {
		groups = append(groups, group{Cause: c, Failures: rs})
	}
	sort.Slice(groups, func(i, j int) bool {
		if len(groups[i].Failures) != len(groups[j].Failures) {
			return len(groups[i].Failures) > len(groups[j].Failures)
		}
		return groups[i].Cause < groups[j].Cause
	})
	return groups
}

// write prints the counts, the failed suite nodes, the failures grouped by
// cause (each spec with its own one-line reason) and the skipped specs.
func (s summary) write(w io.Writer, node string) {
	label := "conformance"
	if node != "" {
		label += " (" + node + ")"
	}
	fmt.Fprintf(w, "%s: %d specs: %d passed, %d failed, %d skipped, %d not run\n",
		label, len(s.Specs), s.count(passed), s.count(failed), s.count(skipped), s.count(notRun))
	for _, r := range s.SuiteFailed {
		fmt.Fprintf(w, "suite node failed: %s: %s\n", r.Name, shown(r.Reason))
	}
	groups := s.failureGroups()
	if len(groups) > 0 {
		fmt.Fprintf(w, "\nfailures by cause (%d causes):\n", len(groups))
	}
	for _, g := range groups {
		fmt.Fprintf(w, "%4d  %s\n", len(g.Failures), shown(g.Cause))
		for _, r := range g.Failures {
			fmt.Fprintf(w, "        %s\n          %s\n", r.Name, shown(r.Reason))
			if r.NodeEvent != "" {
				fmt.Fprintf(w, "          node: %s\n", shown(r.NodeEvent))
			}
		}
	}
	first := true
	for _, r := range s.Specs {
		if r.Outcome != skipped {
			continue
		}
		if first {
			fmt.Fprintf(w, "\nskipped:\n")
			first = false
		}
		fmt.Fprintf(w, "        %s\n          %s\n", r.Name, shown(r.Reason))
	}
}

// writeTSV writes one line per spec: outcome, seconds, name, reason; for
// comparing two runs (podlife and the kubelet) spec by spec.
func (s summary) writeTSV(w io.Writer) {
	clean := strings.NewReplacer("\t", " ", "\n", " ")
	for _, r := range s.Specs {
		reason := r.Reason
		if r.NodeEvent != "" {
			reason += " (node: " + r.NodeEvent + ")"
		}
		fmt.Fprintf(w, "%s\t%.1f\t%s\t%s\n", r.Outcome, r.Seconds, clean.Replace(r.Name), clean.Replace(reason))
	}
}

// ok is whether the run is a success: every selected spec ran, none
// failed, and no suite node failed.
func (s summary) ok() bool {
	return s.count(failed) == 0 && s.count(notRun) == 0 && len(s.SuiteFailed) == 0
}
