// Package podtable prints a node agent's pods (agent/api's Lifecycle and
// PodInfo) as the table `podlife status` shows; `podlife demo` prints its
// final state with it, and the agent's tests their failures. It is the
// command line's rendering, kept out of the wire types; its kubectl
// counterpart is the table printer of `kubectl get pods`.
package podtable

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/agent/api"
)

// WriteStatus prints what `podlife status` shows: the pods' table, then
// the manifests the agent cannot use.
func WriteStatus(w io.Writer, l api.Lifecycle) error {
	if err := WriteTable(w, l.Pods); err != nil {
		return err
	}
	if len(l.ManifestErrors) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nMANIFEST\tERROR")
	for _, e := range l.ManifestErrors {
		fmt.Fprintf(tw, "%s\t%s\n", e.Path, e.Error)
	}
	return tw.Flush()
}

// WriteTable prints pods as the table `podlife status` shows. A pod
// waiting for its full name says for whom in the REASON column.
func WriteTable(w io.Writer, pods []api.PodInfo) error {
	uids := make([]types.UID, len(pods))
	for i, p := range pods {
		uids[i] = p.UID
	}
	short := shortUIDs(uids)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tUID\tCONFIG\tLIFECYCLE\tPHASE\tRESTARTS\tREASON\tCONTAINERS")
	for _, p := range pods {
		reason := p.Reason
		if h := p.WaitingFor; h != nil {
			reason = "waiting for its full name, held by " + short(h.UID) + " " + h.From()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", p.Namespace, p.Name, short(p.UID), p.Config,
			dash(p.Lifecycle), dash(string(p.Phase)), p.Restarts(), dash(reason), containersCell(p.InitContainers, p.Containers))
	}
	return tw.Flush()
}

// shortUIDs returns how the table shows a UID: the shortest prefix of at
// least 8 characters, or failing that "…" and the shortest such suffix,
// that tells the given UIDs apart (UIDs written by hand often share their
// start). Any other UID is cut as the given ones are.
func shortUIDs(uids []types.UID) func(types.UID) string {
	longest := 0
	for _, u := range uids {
		longest = max(longest, len(u))
	}
	for n := 8; n < longest; n++ {
		for _, cut := range []func(types.UID) string{
			func(u types.UID) string { return string(u[:min(n, len(u))]) },
			func(u types.UID) string { return "…" + string(u[max(0, len(u)-n):]) },
		} {
			if distinct(uids, cut) {
				return cut
			}
		}
	}
	return func(u types.UID) string { return string(u) }
}

// distinct reports whether cut keeps the distinct UIDs distinct.
func distinct(uids []types.UID, cut func(types.UID) string) bool {
	seen := map[string]types.UID{}
	for _, u := range uids {
		if other, ok := seen[cut(u)]; ok && other != u {
			return false
		}
		seen[cut(u)] = u
	}
	return true
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// containersCell is "name=state[(exit code)]" per container, init
// containers first as "init:name=...".
func containersCell(inits, cs []api.ContainerInfo) string {
	if len(inits)+len(cs) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(inits)+len(cs))
	for i, c := range append(slices.Clone(inits), cs...) {
		s := c.Name + "=" + c.State
		if i < len(inits) {
			s = "init:" + s
		}
		if c.ExitCode != nil {
			s += fmt.Sprintf("(%d)", *c.ExitCode)
		} else if c.Reason != "" {
			s += "(" + c.Reason + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}
