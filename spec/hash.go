package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Canonical renders a table as text that changes whenever anything the
// generators read changes: domains, variables, parameters, events and rows.
func Canonical(rows []Row) string {
	var b strings.Builder
	for _, d := range Domains {
		fmt.Fprintf(&b, "domain %s %d %v %d %d\n", d.Name, d.Kind, d.Values, d.Min, d.Max)
	}
	for _, v := range Vars {
		fmt.Fprintf(&b, "var %s %s\n", v.Name, v.Domain.Name)
	}
	for _, p := range Params {
		fmt.Fprintf(&b, "param %s %s %v\n", p.Name, p.Domain.Name, p.World)
	}
	for _, s := range States() {
		fmt.Fprintf(&b, "state %s\n", s)
	}
	for _, e := range Events() {
		info := e.Info()
		fmt.Fprintf(&b, "event %s %v", info.Name, info.Total)
		for _, p := range info.Params {
			fmt.Fprintf(&b, " %s", p.Name)
		}
		b.WriteByte('\n')
	}
	for _, p := range Properties {
		fmt.Fprintf(&b, "property %s %d %s [%s] [%s]\n", p.Name, p.Kind, p.Ref, p.From, p.Holds)
	}
	for _, v := range ShellVars {
		fmt.Fprintf(&b, "shell %s %s\n", v.Name, v.Domain.Name)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "row %s %s %s %s [%s] -> %s reset=%v effects=%s", r.ID, r.Ref, r.From, r.Event, r.Guard, r.To, r.Reset, r.Effects)
		for _, a := range r.Set {
			fmt.Fprintf(&b, " %s:=%s", a.Var.Name, a.Value)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Hash is a short digest of Canonical(rows); the generated Go and TLA+
// carry it so a test can tell that they come from this table.
func Hash(rows []Row) string {
	sum := sha256.Sum256([]byte(Canonical(rows)))
	return hex.EncodeToString(sum[:8])
}
