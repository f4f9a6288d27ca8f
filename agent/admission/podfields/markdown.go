package podfields

import (
	"fmt"
	"strings"
)

// Markdown is the README's list of the refused and the meaningless fields,
// made from the tables so that each fact is written once. Rows of one
// table that share their reason are one line.
func Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Refused at admission (reason `%s`, phase `Failed`, the message naming each field path and why):\n\n", Reason)
	writeGroups(&b, func(r Row) bool { return r.CheckedHere() })
	b.WriteString("\nRefused by other checks, each where it is made:\n\n")
	writeGroups(&b, func(r Row) bool { return r.Verdict == Refused && r.By != "" })
	b.WriteString("\nMeaningless on a node, and why:\n\n")
	writeGroups(&b, func(r Row) bool { return r.Verdict == Meaningless })
	return b.String()
}

// writeGroups writes one list item per run of selected rows of a table
// with the same reason.
func writeGroups(b *strings.Builder, selected func(Row) bool) {
	for _, tb := range tables {
		var paths []string
		var last Row
		flush := func() {
			if len(paths) == 0 {
				return
			}
			by := ""
			if last.By != "" {
				by = " (" + last.By + ")"
			}
			fmt.Fprintf(b, "- %s%s: %s.\n", strings.Join(paths, ", "), by, last.Why)
			paths = nil
		}
		for _, r := range tb.Rows[tb.Inherited:] {
			if !selected(r) {
				continue
			}
			if len(paths) > 0 && (r.Why != last.Why || r.By != last.By || r.Which != last.Which) {
				flush()
			}
			p := "`" + tb.Path + "." + r.Field + "`"
			if r.Which != "" {
				p += " (" + r.Which + ")"
			}
			paths = append(paths, p)
			last = r
		}
		flush()
	}
}
