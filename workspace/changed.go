package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"wilco/core"
)

// File statuses of Changed (core.FileState.Status).
const (
	StatusAdded    = "added"
	StatusModified = "modified"
	StatusDeleted  = "deleted"
)

// Changed lists the files of the working tree that differ from HEAD
// (staged or not), and the untracked files that are not ignored, each with
// its status (added, modified, deleted) and the number of lines added plus
// removed (0 for binary files). Paths are relative to Root, slash-separated,
// sorted. Renames are a deletion and an addition. The state directory
// (.wilco/) and untracked nested repositories are left out. In a
// repository with no commit yet, everything is added.
func (w *Workspace) Changed(ctx context.Context) ([]core.FileState, error) {
	fs, err := changed(ctx, w.root)
	if err != nil {
		return nil, fmt.Errorf("workspace: files changed: %w", err)
	}
	return fs, nil
}

// Paths returns the paths of files.
func Paths(files []core.FileState) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

func changed(ctx context.Context, dir string) ([]core.FileState, error) {
	b, err := base(ctx, dir)
	if err != nil {
		return nil, err
	}
	// One diff prints both the raw records (the statuses) and the numstat
	// records (the line counts).
	diff, err := git(ctx, dir, nil, nil, append([]string{"diff", "--no-renames", "--no-ext-diff", "--ignore-submodules=dirty",
		"--raw", "--numstat", "-z", b}, excludeState...)...)
	if err != nil {
		return nil, err
	}
	others, err := git(ctx, dir, nil, nil, append([]string{"ls-files", "--others", "--exclude-standard", "-z"}, excludeState...)...)
	if err != nil {
		return nil, err
	}

	var out []core.FileState
	seen := map[string]bool{}
	for _, c := range parseRawNumstat(splitZ(diff)) {
		status := StatusModified
		switch c.status {
		case 'A':
			status = StatusAdded
		case 'D':
			status = StatusDeleted
		}
		seen[c.path] = true
		out = append(out, core.FileState{Path: c.path, Status: status, LinesChanged: c.lines})
	}
	for _, path := range splitZ(others) {
		if strings.HasSuffix(path, "/") || seen[path] { // a nested repository
			continue
		}
		n, err := countLines(filepath.Join(dir, filepath.FromSlash(path)))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		out = append(out, core.FileState{Path: path, Status: StatusAdded, LinesChanged: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// rawChange is a file of `git diff --raw --numstat -z`: its status letter
// and its lines added plus removed.
type rawChange struct {
	path   string
	status byte
	lines  int
}

// parseRawNumstat reads the fields of `git diff --raw --numstat -z`: raw
// records ":modes shas status\0path\0" (a second path for a rename or a
// copy), then numstat records "added\tdeleted\tpath\0" (for a rename or a
// copy "added\tdeleted\t\0old\0new\0"). It returns the raw records' files
// in their order, each with its numstat line count (0 for binary files); a
// renamed or copied file is named by its new path.
func parseRawNumstat(f []string) []rawChange {
	var out []rawChange
	lines := map[string]int{}
	for i := 0; i < len(f); i++ {
		rec := f[i]
		if strings.HasPrefix(rec, ":") {
			// ":100644 100644 sha1 sha2 M": the status is the last field.
			st := rec[strings.LastIndexByte(rec, ' ')+1:]
			n := 1
			if st != "" && (st[0] == 'R' || st[0] == 'C') {
				n = 2
			}
			if st == "" || i+n >= len(f) {
				break
			}
			i += n
			out = append(out, rawChange{path: f[i], status: st[0]})
			continue
		}
		added, rest, _ := strings.Cut(rec, "\t")
		deleted, path, _ := strings.Cut(rest, "\t")
		if path == "" && i+2 < len(f) { // a rename or a copy: old, new
			path = f[i+2]
			i += 2
		}
		a, _ := strconv.Atoi(added) // "-" for binary files: 0
		d, _ := strconv.Atoi(deleted)
		lines[path] = a + d
	}
	for i := range out {
		out[i].lines = lines[out[i].path]
	}
	return out
}

// countLines counts the lines of a new file as git's numstat would: a last
// line without a newline counts, a symbolic link is one line, a binary
// file (a NUL in its first 8000 bytes) none.
func countLines(path string) (int, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return 1, nil
	}
	if !fi.Mode().IsRegular() {
		return 0, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 32<<10)
	n, read, last := 0, 0, byte('\n')
	for {
		k, err := f.Read(buf)
		if k > 0 {
			chunk := buf[:k]
			if read < 8000 && bytes.IndexByte(chunk[:min(k, 8000-read)], 0) >= 0 {
				return 0, nil
			}
			read += k
			n += bytes.Count(chunk, []byte{'\n'})
			last = chunk[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// ChangedPaths is Changed without the line counts, in one `git status`:
// the fast path for a summary, a baseline or a boundary check.
func (w *Workspace) ChangedPaths(ctx context.Context) ([]core.FileState, error) {
	args := append([]string{"status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=dirty"}, excludeState...)
	out, err := git(ctx, w.root, nil, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("workspace: files changed: %w", err)
	}
	var fs []core.FileState
	for _, rec := range splitZ(out) {
		switch {
		case strings.HasPrefix(rec, "1 "), strings.HasPrefix(rec, "u "):
			// "1 XY sub mH mI mW hH hI path" ("u" has three more fields).
			n := 9
			if rec[0] == 'u' {
				n = 11
			}
			fields := strings.SplitN(rec, " ", n)
			if len(fields) < n {
				continue
			}
			xy := fields[1]
			status := StatusModified
			switch {
			case xy[0] == 'A':
				status = StatusAdded
			case xy[0] == 'D' || len(xy) > 1 && xy[1] == 'D':
				status = StatusDeleted
			}
			fs = append(fs, core.FileState{Path: fields[n-1], Status: status})
		case strings.HasPrefix(rec, "? "):
			path := rec[2:]
			if !strings.HasSuffix(path, "/") {
				fs = append(fs, core.FileState{Path: path, Status: StatusAdded})
			}
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
	return fs, nil
}

// ChangedBetween lists the paths whose content differs between commits
// from and to, as the pull request of a branch forked at from and pushed
// at to shows them: relative to Root, slash-separated, sorted, a rename a
// deletion and an addition.
func (w *Workspace) ChangedBetween(ctx context.Context, from, to string) ([]string, error) {
	out, err := git(ctx, w.root, nil, nil, "diff", "--name-only", "--no-renames", "--no-ext-diff", "-z", from, to, "--")
	if err != nil {
		return nil, fmt.Errorf("workspace: files changed from %s to %s: %w", from, to, err)
	}
	files := splitZ(out)
	sort.Strings(files)
	return files, nil
}
