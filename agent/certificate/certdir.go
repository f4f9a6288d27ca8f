package certificate

import "github.com/podlife/podlife/internal/owndir"

// PrepareCertDir creates the certificate directory (mode 0700, with its
// missing parents) and returns its absolute path. It holds the node's
// private keys, and whoever could write it could make the agent present
// their certificate or lose its own: one that is not the agent's own, or
// is open to group or others at all, is refused.
func PrepareCertDir(dir string) (string, error) {
	return owndir.Prepare("cert directory", dir, true)
}
