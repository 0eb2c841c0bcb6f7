package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"wilco/atomicfile"
)

func TestWriteFileReplacesTheWholeFileWithItsPermissionsAndLeavesNoTemporaryFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := os.WriteFile(path, []byte("the old content, longer than the new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteFile(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "new" {
		t.Fatalf("content %q, %v", b, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d files in the directory, want only the written one", len(entries))
	}
}

func TestWriteFileThatFailsLeavesTheOldFileAndNoTemporaryFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A directory where the file should be: the rename fails.
	path := filepath.Join(dir, "taken")
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteFile(path, []byte("new"), 0o644); err == nil {
		t.Fatal("writing over a directory that is not empty succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].Name() != "taken" {
		t.Fatalf("left behind: %v", entries)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
}
