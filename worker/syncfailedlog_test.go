package worker

import (
	"log/slog"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestSyncFailureLogNamesPod: a failed sync's log line names the pod by
// namespace/name as well as by UID, for a pod with a config and for one
// known only to the runtime.
func TestSyncFailureLogNamesPod(t *testing.T) {
	tests := []struct {
		name, uid, fn string
		op            UpdatePodOptions
		want          string
	}{
		{"config pod", "a", "SyncPod", createOp(newPod("a", "web", false)), "pod=default/web uid=a func=SyncPod"},
		{"runtime-only pod", "r", "SyncTerminatingRuntimePod", runtimeKillOp("r", "ghost", nil), "pod=default/ghost uid=r func=SyncTerminatingRuntimePod"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &logSink{}
			e := start(t, Options{Logger: slog.New(sink)})
			e.syncer.script(types.UID(tt.uid), tt.fn, outcome{err: errSync})
			e.update(tt.op)
			if sink.count("sync failed") != 1 || sink.count(tt.want) != 1 {
				t.Fatalf("want one sync failure logged with %q, got %v", tt.want, sink.all())
			}
		})
	}
}
