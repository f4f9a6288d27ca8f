package agent

import (
	"context"
	"fmt"
	"log/slog"

	v1 "k8s.io/api/core/v1"
)

// eventLog is the agent's one event recorder: with no API server to send
// events to, each event is a structured log line about its pod.
type eventLog struct{ log *slog.Logger }

// Eventf records an event about pod; Warning events log at warning level.
func (e eventLog) Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any) {
	level := slog.LevelInfo
	if eventType == v1.EventTypeWarning {
		level = slog.LevelWarn
	}
	attrs := []any{"type", eventType, "reason", reason}
	if pod != nil {
		attrs = append(attrs, "pod", pod.Namespace+"/"+pod.Name, "uid", pod.UID)
	}
	e.log.Log(context.Background(), level, "event: "+fmt.Sprintf(messageFmt, args...), attrs...)
}
