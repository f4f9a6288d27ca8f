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

// WriteTable prints pods as the table `podlife status` shows.
func WriteTable(w io.Writer, pods []PodInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tUID\tCONFIG\tLIFECYCLE\tPHASE\tREASON\tCONTAINERS")
	for _, p := range pods {
		uid := string(p.UID)
		if len(uid) > 8 {
			uid = uid[:8]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Namespace, p.Name, uid, p.Config,
			dash(p.Lifecycle), dash(string(p.Phase)), dash(p.Reason), containersCell(p.InitContainers, p.Containers))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// containersCell is "name=state[(exit code)][xrestarts]" per container,
// init containers first as "init:name=...".
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
		if c.Restarts > 0 {
			s += fmt.Sprintf("x%d", c.Restarts)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}
