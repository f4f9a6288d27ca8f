package trace_test

import (
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/podlife/podlife/trace"
)

func load(t *testing.T, name string) []trace.Line {
	t.Helper()
	return readFile(t, filepath.Join("testdata", name+".ndjson"))
}

// renumber gives the lines consecutive seqs again, so that a corruption is
// found by what the lines say, not by a gap in the numbering.
func renumber(lines []trace.Line) []trace.Line {
	for i := range lines {
		lines[i].Seq = uint64(i + 1)
	}
	return lines
}

func TestCheckAcceptsEngineTraces(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.ndjson"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces in testdata (%v)", err)
	}
	for _, f := range files {
		if err := trace.Check(readFile(t, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestCheckRejectsCorruptions(t *testing.T) {
	for _, c := range []struct {
		name    string
		trace   string
		corrupt func([]trace.Line) []trace.Line
		step    int    // the step the error must name
		want    string // regexp the message must match
	}{
		{
			name: "wrong to", trace: "lifecycle",
			corrupt: func(l []trace.Line) []trace.Line { l[9].To = "Terminating"; return l },
			step:    10, want: `row RunningKillTerminate goes to TerminationRequested, the line says Terminating`,
		},
		{
			name: "changed variable", trace: "lifecycle",
			corrupt: func(l []trace.Line) []trace.Line { l[10].Vars.Grace = 4; return l },
			step:    11, want: `vars differ .*grace: line 4, table 5`,
		},
		{
			name: "changed enum variable", trace: "lifecycle",
			corrupt: func(l []trace.Line) []trace.Line { l[1].Vars.InFlight = "SyncTerminatingPod"; return l },
			step:    2, want: `inFlight: line SyncTerminatingPod, table SyncPod`,
		},
		{
			name: "unknown enum value", trace: "lifecycle",
			corrupt: func(l []trace.Line) []trace.Line { l[1].Vars.Pending = "Later"; return l },
			step:    2, want: `pending: "Later" is not a value of Pending`,
		},
		{
			name: "changed row", trace: "lifecycle",
			corrupt: func(l []trace.Line) []trace.Line { l[3].Row = "RunningUpdateTerminate"; return l },
			step:    4, want: `the table fires row RunningUpdate, the line says RunningUpdateTerminate`,
		},
		{
			name: "changed params", trace: "lifecycle",
			corrupt: func(l []trace.Line) []trace.Line { l[3].Params.Deleting = true; return l },
			step:    4, want: `the table fires row RunningUpdateTerminate, the line says RunningUpdate`,
		},
		{
			name: "dropped line", trace: "lifecycle",
			corrupt: func(l []trace.Line) []trace.Line { return renumber(slices.Delete(l, 4, 5)) }, // the Dequeue before SyncPodFailed
			step:    5, want: `no row of \(Running, SyncPodFailed\) is enabled .*inFlight=None`,
		},
		{
			name: "dropped line, seq kept", trace: "lifecycle",
			corrupt: func(l []trace.Line) []trace.Line { return slices.Delete(l, 4, 5) },
			step:    5, want: `seq is 6, want 5`,
		},
		{
			name: "two lines swapped", trace: "lifecycle",
			corrupt: func(l []trace.Line) []trace.Line { l[7], l[8] = l[8], l[7]; return renumber(l) }, // SyncPodDone before its Dequeue
			step:    8, want: `no row of \(Running, SyncPodDone\) is enabled`,
		},
		{
			name: "two pods' lines swapped", trace: "orphan",
			corrupt: func(l []trace.Line) []trace.Line { l[2], l[3] = l[3], l[2]; return renumber(l) }, // p2 Create before p1's SyncPodDone: legal
			step:    0,
		},
		{
			name: "wrong world fact slotFree", trace: "static",
			corrupt: func(l []trace.Line) []trace.Line { l[4].Params.SlotFree = true; return l }, // s2 parks: s1 holds the slot
			step:    5, want: `world facts slotFree=true firstInLine=true, but the records and the waiting order give slotFree=false firstInLine=true`,
		},
		{
			name: "wrong world fact firstInLine", trace: "static",
			corrupt: func(l []trace.Line) []trace.Line { l[11].Params.FirstInLine = false; return l }, // s2 starts
			step:    12, want: `world facts slotFree=true firstInLine=false, but .* give slotFree=true firstInLine=true`,
		},
		{
			name: "removed pod does not start from Absent", trace: "restart",
			corrupt: func(l []trace.Line) []trace.Line { l[10].From = "Finished"; return l },
			step:    11, want: `from Finished, but the pod is Absent \(its record was removed at step 10`,
		},
		{
			// There is no state Removed: a removed record is Absent.
			name: "removed pod claims Removed", trace: "runtime",
			corrupt: func(l []trace.Line) []trace.Line {
				l[3].From, l[3].To, l[3].Row = "Removed", "Removed", "RemovedRuntimeUpdateIgnored"
				return l
			},
			step: 4, want: `unknown from state "Removed"`,
		},
		{
			name: "removed pod claims its last state", trace: "runtime",
			corrupt: func(l []trace.Line) []trace.Line { l[3].From = "Terminating"; return l },
			step:    4, want: `from Terminating, but the pod is Absent \(its record was removed at step 3`,
		},
		{
			name: "batch interrupted", trace: "orphan",
			corrupt: func(l []trace.Line) []trace.Line { l[7], l[8] = l[8], l[7]; return renumber(l) }, // p1's Dequeue inside batch 1
			step:    7, want: `SyncKnownPods batch 1 \(steps 7-7\) has no line for p2 \(Running\)`,
		},
		{
			name: "batch reopened", trace: "orphan",
			corrupt: func(l []trace.Line) []trace.Line {
				l[12].Batch, l[13].Batch = 1, 1 // the second call numbered like the first
				return l
			},
			step: 13, want: `batch 1 after batch 1`,
		},
		{
			name: "batch without a record's line", trace: "orphan",
			corrupt: func(l []trace.Line) []trace.Line { return l[:13] }, // p2's line of batch 2 lost at the end
			step:    13, want: `batch 2 \(steps 13-13\) has no line for p2`,
		},
		{
			name: "batch out of UID order", trace: "orphan",
			corrupt: func(l []trace.Line) []trace.Line { l[12], l[13] = l[13], l[12]; return renumber(l) },
			step:    14, want: `not in UID order: p1 after p2`,
		},
		{
			name: "batch number on another event", trace: "lifecycle",
			corrupt: func(l []trace.Line) []trace.Line { l[0].Batch = 1; return l },
			step:    1, want: `batch 1 on a Create line`,
		},
		{
			name: "SyncKnownPods without batch", trace: "lifecycle",
			corrupt: func(l []trace.Line) []trace.Line { l[14].Batch = 0; return l },
			step:    15, want: `SyncKnownPods line without a batch number`,
		},
		{
			name: "full name changes", trace: "static",
			corrupt: func(l []trace.Line) []trace.Line { l[2].FullName = "other_kube-system"; return l },
			step:    3, want: `fullName "other_kube-system", but the record's is "etcd_kube-system"`,
		},
		{
			name: "static record without full name", trace: "static",
			corrupt: func(l []trace.Line) []trace.Line { l[0].FullName = ""; return l },
			step:    1, want: `a new static record has no fullName`,
		},
		{
			name: "unknown event", trace: "lifecycle",
			corrupt: func(l []trace.Line) []trace.Line { l[2].Event = "SyncPodOK"; return l },
			step:    3, want: `unknown event "SyncPodOK"`,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines := c.corrupt(load(t, c.trace))
			err := trace.Check(lines)
			if c.step == 0 {
				if err != nil {
					t.Fatalf("a legal reordering was rejected: %v", err)
				}
				return
			}
			var se *trace.StepError
			if !errors.As(err, &se) {
				t.Fatalf("Check = %v, want a *StepError", err)
			}
			if se.Step != c.step {
				t.Errorf("error names step %d, want %d: %v", se.Step, c.step, err)
			}
			l := lines[c.step-1]
			prefix := regexp.MustCompile(`^step \d+ \(seq \d+, pod \S+, \w+\): `)
			if !prefix.MatchString(err.Error()) || se.Pod != l.Pod || se.Event != l.Event || se.Seq != l.Seq {
				t.Errorf("message %q does not name the step's seq, pod and event (%d, %s, %s)", err, l.Seq, l.Pod, l.Event)
			}
			if !regexp.MustCompile(c.want).MatchString(se.Msg) {
				t.Errorf("message %q does not match %q", se.Msg, c.want)
			}
		})
	}
}
