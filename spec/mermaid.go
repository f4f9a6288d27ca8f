package spec

import (
	"fmt"
	"sort"
	"strings"
)

// Mermaid renders the transitions that can fire and change the state, one
// edge per (from, to) labelled with its events, sorted.
func Mermaid(rows []Row) string {
	fired := Reachable(rows).Fired
	type edge struct{ from, to State }
	labels := map[edge][]string{}
	for _, r := range rows {
		if r.From == r.To || !fired[r.ID] {
			continue
		}
		k := edge{r.From, r.To}
		if !contains(labels[k], r.Event.String()) {
			labels[k] = append(labels[k], r.Event.String())
		}
	}
	edges := make([]edge, 0, len(labels))
	for k := range labels {
		edges = append(edges, k)
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].from != edges[j].from {
			return edges[i].from < edges[j].from
		}
		return edges[i].to < edges[j].to
	})
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n    [*] --> Absent\n")
	for _, e := range edges {
		fmt.Fprintf(&b, "    %s --> %s : %s\n", e.from, e.to, strings.Join(labels[e], ", "))
	}
	return b.String()
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
