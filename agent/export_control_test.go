package agent

// ShutdownRequested reports whether anything asked for a node shutdown: a
// refused request must not have.
func (a *Agent) ShutdownRequested() bool {
	select {
	case <-a.shutdownRequested:
		return true
	default:
		return false
	}
}
