package embedded

import (
	"context"
	"errors"
	"testing"
	"time"
)

// An exec hook runs outside the runtime's lock: while one ExecSync hangs
// in it until its deadline, other calls (another exec, a status) answer;
// the hung one ends with its deadline. Without a hook an exec succeeds.
func TestExecHookMayHang(t *testing.T) {
	c := start(t)
	_, id := c.runPod(t, "a", "u1")
	entered := make(chan struct{}, 1)
	c.rt.SetExecHook(func(ctx context.Context, _ string, cmd []string) error {
		if cmd[0] != "hang" {
			return nil
		}
		entered <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	hung := make(chan error, 1)
	go func() {
		_, _, err := c.rs.ExecSync(t.Context(), id, []string{"hang"}, time.Second)
		hung <- err
	}()
	<-entered
	if _, _, err := c.rs.ExecSync(t.Context(), id, []string{"true"}, time.Second); err != nil {
		t.Errorf("an exec while another hangs: %v", err)
	}
	c.containerStatus(t, id) // answers while the exec hangs
	if err := <-hung; err == nil {
		t.Error("the hung exec succeeded, want it ended by its deadline")
	}
	c.rt.SetExecHook(nil)
	if _, _, err := c.rs.ExecSync(t.Context(), id, []string{"hang"}, time.Second); err != nil {
		t.Errorf("an exec without a hook: %v", err)
	}
	c.rt.SetExecHook(func(context.Context, string, []string) error { return errors.New("scripted") })
	if _, _, err := c.rs.ExecSync(t.Context(), id, []string{"true"}, time.Second); err == nil {
		t.Error("an exec whose hook failed succeeded")
	}
}
