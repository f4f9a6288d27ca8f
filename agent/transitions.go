package agent

import (
	"log/slog"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/fsm"
)

// engineObserver is the engine's observer: the embedder's, and at
// verbosity 1 or more a log of every transition at debug level, so that
// `-v 1` shows what the engine does with each pod.
func engineObserver(given fsm.Observer, log *slog.Logger, verbosity int) fsm.Observer {
	if verbosity < 1 {
		return given
	}
	if given == nil {
		return transitionLog{log}
	}
	return fsm.Observers{given, transitionLog{log}}
}

// transitionLog logs transitions; states, events and rows are logged as
// their names, in text and JSON logs alike. Rows that change nothing (a
// record ignoring an event, as every housekeeping's SyncKnownPods does
// for a desired pod) are left out, as `podlife-dev table` leaves them out.
type transitionLog struct{ log *slog.Logger }

func (l transitionLog) Transition(t fsm.Transition) {
	if t.Ignores {
		return
	}
	attrs := []any{"uid", t.Pod, "event", t.Event.String(), "from", t.From.String(), "to", t.To.String(), "row", t.Ref + " " + t.Row}
	if t.FullName != "" {
		attrs = append(attrs, "fullName", t.FullName)
	}
	l.log.Debug("engine transition", attrs...)
}

// Rejected logs an event the lifecycle table refused in the pod's state.
func (l transitionLog) Rejected(uid types.UID, state fsm.State, event fsm.Event, err error) {
	l.log.Debug("engine rejected an event", "uid", uid, "event", event.String(), "state", state.String(), "err", err)
}
