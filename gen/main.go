// Command gen renders the lifecycle table of package spec as Go guards and
// transitions (fsm/), TLA+ operators (tla/PodLifecycleTable.tla) and a
// Mermaid diagram (docs/lifecycle.mmd and README.md), and the container
// table as Go guards (fsm/container) and TLA+ operators and properties
// (tla/ContainerLifecycleTable.tla, tla/ContainerLifecycleProperties.tla). Run it with
// `go generate ./...` (the directive is in fsm/doc.go) or `go run ./gen`.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/podlife/podlife/spec"
)

func main() {
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(root string) error {
	read := func(path string) ([]byte, error) { return os.ReadFile(filepath.Join(root, path)) }
	files, err := Generate(spec.Table, read)
	if err != nil {
		return err
	}
	if err := removeStale(root, files); err != nil {
		return err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, files[p], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// removeStale deletes generated Go files of fsm/ that this run does not
// produce, so a renamed output leaves nothing behind.
func removeStale(root string, files map[string][]byte) error {
	old, err := filepath.Glob(filepath.Join(root, "fsm", "zz_generated.*.go"))
	if err != nil {
		return err
	}
	more, err := filepath.Glob(filepath.Join(root, "fsm", "container", "zz_generated*.go"))
	if err != nil {
		return err
	}
	old = append(old, more...)
	for _, f := range old {
		rel, _ := filepath.Rel(root, f)
		if _, ok := files[filepath.ToSlash(rel)]; !ok && strings.HasPrefix(filepath.Base(f), "zz_generated") {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}
