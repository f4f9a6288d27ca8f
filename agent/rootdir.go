package agent

import "github.com/podlife/podlife/internal/owndir"

// prepareRootDir creates the root directory (mode 0700, with its missing
// parents) and returns its absolute path. Whoever controls the root
// directory decides where the agent, often root, writes pod logs and who
// can reach its sockets, so one that is not the agent's own is refused.
func prepareRootDir(dir string) (string, error) {
	return owndir.Prepare("root directory", dir, false)
}
