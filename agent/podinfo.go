package agent

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodInfo is one pod as the agent's /pods endpoint reports it.
type PodInfo struct {
	UID       types.UID `json:"uid"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Static    bool      `json:"static"`
	// Manifest is the file the pod came from; "" for a pod known only to
	// the runtime.
	Manifest string `json:"manifest,omitempty"`
	// Config is desired (in a manifest), orphan (its manifest is gone),
	// runtime-only (found in the runtime, unknown to the engine) or
	// rejected (refused by admission, never given to the engine).
	Config string `json:"config"`
	// Lifecycle is the engine's state of the pod (a state of the
	// lifecycle table, such as Running or Terminating), "" when the engine
	// holds no record.
	Lifecycle string `json:"lifecycle,omitempty"`
	// Worker is the engine's phase: sync, terminating or terminated.
	Worker  string      `json:"worker,omitempty"`
	Phase   v1.PodPhase `json:"phase,omitempty"`
	Reason  string      `json:"reason,omitempty"`
	Message string      `json:"message,omitempty"`
	// InitContainers are the init containers and sidecars, in order.
	InitContainers []ContainerInfo `json:"initContainers,omitempty"`
	Containers     []ContainerInfo `json:"containers,omitempty"`
	// WaitingFor is, for a static pod held back because another UID still
	// holds its full name, that pod (set by Lifecycle).
	WaitingFor *NameHolder `json:"waitingFor,omitempty"`
}

// NameHolder is the pod holding a full name another pod waits for.
type NameHolder struct {
	UID types.UID `json:"uid"`
	// Manifest is its file; "" when its manifest is gone.
	Manifest string `json:"manifest,omitempty"`
}

// from is "(FILE)", or "(its manifest is gone)" for an orphan.
func (h NameHolder) from() string {
	if h.Manifest == "" {
		return "(its manifest is gone)"
	}
	return "(" + h.Manifest + ")"
}

// Restarts is the pod's total container restart count.
func (p PodInfo) Restarts() int32 {
	var n int32
	for _, c := range append(slices.Clone(p.InitContainers), p.Containers...) {
		n += c.Restarts
	}
	return n
}

// ContainerInfo is one container of a PodInfo.
type ContainerInfo struct {
	Name     string `json:"name"`
	State    string `json:"state"` // running, waiting or terminated
	Reason   string `json:"reason,omitempty"`
	ExitCode *int32 `json:"exitCode,omitempty"`
	Restarts int32  `json:"restarts"`
}

// containerInfos summarises container statuses.
func containerInfos(statuses []v1.ContainerStatus) []ContainerInfo {
	out := make([]ContainerInfo, 0, len(statuses))
	for _, cs := range statuses {
		ci := ContainerInfo{Name: cs.Name, Restarts: cs.RestartCount}
		switch {
		case cs.State.Running != nil:
			ci.State = "running"
		case cs.State.Terminated != nil:
			ci.State, ci.Reason = "terminated", cs.State.Terminated.Reason
			code := cs.State.Terminated.ExitCode
			ci.ExitCode = &code
		case cs.State.Waiting != nil:
			ci.State, ci.Reason = "waiting", cs.State.Waiting.Reason
		}
		out = append(out, ci)
	}
	return out
}

// WriteStatus prints what `podlife status` shows: the pods' table, then
// the manifests the agent cannot use.
func WriteStatus(w io.Writer, l Lifecycle) error {
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
func WriteTable(w io.Writer, pods []PodInfo) error {
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
			reason = "waiting for its full name, held by " + short(h.UID) + " " + h.from()
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
func containersCell(inits, cs []ContainerInfo) string {
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
