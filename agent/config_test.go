package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/config"
)

// New refuses an invalid configuration before it starts anything.
func TestNewRejectsInvalidConfig(t *testing.T) {
	cfg := config.Default()
	cfg.RootDir = t.TempDir()
	cfg.LogFormat = "xml"
	a, err := agent.New(context.Background(), cfg, agent.Options{})
	if err == nil || !strings.Contains(err.Error(), "logFormat") {
		t.Fatalf("New: %v, %v; want the logFormat error", a, err)
	}
}

// New refuses a root directory another user could tamper with, before it
// starts anything in it.
func TestNewRefusesUnsafeRootDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.RootDir = dir
	cfg.Address = "127.0.0.1"
	a, err := agent.New(context.Background(), cfg, agent.Options{})
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "writable by group or others") {
		t.Fatalf("New: %v, %v; want the root directory's error", a, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("New left %d entries in the refused directory", len(entries))
	}
}

// A node that must bootstrap its client certificate with a bootstrap
// kubeconfig it cannot read stops with an error naming that file, after
// preparing the cert directory <root-dir>/pki 0700.
func TestNewNamesABadBootstrapKubeconfig(t *testing.T) {
	root := t.TempDir()
	bootstrap := filepath.Join(root, "missing-bootstrap.kubeconfig")
	cfg := config.Default()
	cfg.RootDir = root
	cfg.Address = "127.0.0.1"
	cfg.Kubeconfig = filepath.Join(root, "kubelet.kubeconfig")
	cfg.BootstrapKubeconfig = bootstrap
	a, err := agent.New(context.Background(), cfg, agent.Options{})
	if err == nil || !strings.Contains(err.Error(), "bootstrap kubeconfig "+bootstrap) {
		t.Fatalf("New: %v, %v; want an error naming the bootstrap kubeconfig", a, err)
	}
	if fi, err := os.Stat(filepath.Join(root, "pki")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("cert directory: %v, mode %v; want <root-dir>/pki 0700", err, fi.Mode())
	}
}
