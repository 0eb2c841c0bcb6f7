// Package workspace is wilco's side of git: the repository wilco serves,
// seen through the git command line (git must be on PATH). It lists the
// files an attempt changed, makes the throw-away worktree of a dry run,
// takes its diff, applies a diff to the real working tree, discards the
// worktree, and tells which changed files cross a task's boundaries.
//
// Open takes any directory inside a git work tree; everything is relative
// to its top level (Root). wilco's state directory, .wilco/, is never part
// of a listing, a snapshot or a diff; when this package has to create it,
// it writes the same .wilco/.gitignore as `wilco init`, so that git status
// stays quiet about it. Git runs with messages in English, no
// prompt, and without the GIT_DIR-like variables of the caller's
// environment.
//
// # Files changed
//
// Changed compares the working tree with HEAD: staged and unstaged changes,
// deletions, and untracked files that are not ignored, each with a status
// (added, modified, deleted) and the lines added plus removed — what the
// success summary, the failure record's files_modified and files_state,
// and the boundary check use.
//
// # Dry runs
//
// Worktree(task) snapshots the working tree as it is — tracked changes,
// staged or not, deletions and untracked files that are not ignored —
// into a commit made through a temporary index (the real index is not
// touched; the commit's parent is HEAD; no ref points to it), and checks
// it out, detached, in .wilco/worktrees/<name>, where name is the task id
// made path-safe (WorktreeName: "03-01:task-3" becomes "03-01%3Atask-3").
// That commit is the base: it is recorded in .wilco/worktrees/.base/<name>,
// and Diff(task) is everything done in the worktree since — edits, new
// files, deletions, binary files, committed there or not — as a git diff
// with a/ and b/ prefixes and no rename detection. Ignored files are not
// carried into the worktree (an agent that needs node_modules must install
// them there) and are not part of the diff. Making the worktree runs no git
// hook. Worktree is idempotent: the worktree of a task that has one is
// returned as it is (with the agent's work in it).
//
// Apply(diff) writes a diff into the real working tree. It runs `git apply
// --check` first, so a diff that does not apply changes nothing; when the
// files have moved on since the dry run, a three-way merge is tried on a
// scratch index and written only when it has no conflict. A failure is an
// *ApplyError naming the first failing file. The index is left alone: new
// files are untracked, as an agent's would be.
//
// Discard(task) removes the worktree (git worktree remove --force, prune)
// and its base.
//
// # Commits
//
// Commit(paths, message) records exactly paths, as they are in the working
// tree (edits, new files, deletions; each path is literal, never a
// pattern), in a new commit on the branch checked out: `git add` of those
// paths, then `git commit --only` of them, so what the user staged of
// other files is neither committed nor touched. The repository's hooks
// run as for any commit; a refusal is a *CommitError with the output of
// git and its hooks (and whether a hook that can refuse is installed),
// and the index of paths is put back as it was. When git's configuration
// names no user, "wilco <wilco@localhost>" stands in for that commit only.
// FindCommit finds a commit on a branch by its trailers (Wilco-Run …),
// which is how a commit made just before wilco stopped is found again
// rather than made twice. Branch names the branch checked out ("" for a
// detached HEAD).
//
// # Boundaries
//
// What a task's boundaries (its "files or modules out of scope") match is
// package core's rule (core.OutsideBoundaries); the workspace only lists
// the files a task changed.
package workspace
