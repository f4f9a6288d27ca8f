package agent

import (
	"context"
	"fmt"
	"log/slog"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// eventLog is the agent's one event recorder: each event is a structured
// log line about its pod and, in cluster mode, an Event in the API server
// through client-go's recorder (which aggregates repeats and drops events
// while the API server is away, as the kubelet's does).
type eventLog struct {
	log *slog.Logger
	// api is the API server's recorder; nil without an API server.
	api record.EventRecorder
}

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
	if e.api != nil && pod != nil {
		e.api.Eventf(pod, eventType, reason, messageFmt, args...)
	}
}
