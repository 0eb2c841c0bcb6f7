package sim

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"wilco/core"
)

// gitModel is the simulated repository of tasks worked in parallel: the
// target branch, the tasks' branches and worktrees, the commits with
// their trees (file → content), and every value the target took (its
// reflog). It mirrors what workspace does with real git: a worktree on
// its own branch from the target's head, a commit of all its changes, a
// combination made as git merge-tree makes it, the target moved only from
// the head a combination was made on.
type gitModel struct {
	commits   map[string]*commit
	n         int
	target    string
	branches  map[string]string
	worktrees map[string]*worktree
	// verdicts are the checks' verdicts by tree: the same tree always
	// passes or always fails; verified the trees a verification
	// reported passing.
	verdicts map[uint64]bool
	verified map[uint64]bool
	reflog   []refEntry
	// checked is how many moves checkTargetVerified passed.
	checked int
	// combined is the combination a landing checked out on a task's
	// branch, to be verified before it lands (workspace's note of it).
	combined map[string]string
}

type commit struct {
	id      string
	gen     int
	parents []string
	tree    map[string]string
}

// worktree is a task's worktree: its branch, the commit it was made from
// and its files (what is committed and what is not).
type worktree struct {
	dir, branch, task string
	base              string
	files             map[string]string
	// detached: it holds a combination made on the one of the task
	// landing ahead (combineOn), not its branch; landing checks the
	// branch out again first, as workspace.Attach does.
	detached bool
}

// refEntry is one value the target took: the commit, and the task that
// moved it there ("" for the user's own commits).
type refEntry struct {
	commit, task string
}

func newGitModel() *gitModel {
	g := &gitModel{commits: map[string]*commit{}, branches: map[string]string{}, worktrees: map[string]*worktree{},
		verdicts: map[uint64]bool{}, verified: map[uint64]bool{}, combined: map[string]string{}}
	root := g.commit(map[string]string{"README": "wilco"})
	g.target = root
	g.reflog = append(g.reflog, refEntry{commit: root})
	return g
}

// commit makes a commit of tree on parents and returns its id.
func (g *gitModel) commit(tree map[string]string, parents ...string) string {
	g.n++
	id := fmt.Sprintf("%016x%024x", uint64(g.n)*0x9e3779b97f4a7c15, g.n)
	g.commits[id] = &commit{id: id, gen: g.n, parents: parents, tree: maps.Clone(tree)}
	return id
}

func (g *gitModel) tree(id string) map[string]string {
	if c := g.commits[id]; c != nil {
		return c.tree
	}
	return nil
}

// treeHash is the identity of a tree's content.
func treeHash(tree map[string]string) uint64 {
	h := fnv.New64a()
	for _, k := range slices.Sorted(maps.Keys(tree)) {
		fmt.Fprintf(h, "%s=%s\x00", k, tree[k])
	}
	return h.Sum64()
}

// ancestors are the commits reachable from id, itself included.
func (g *gitModel) ancestors(id string) map[string]bool {
	seen := map[string]bool{}
	stack := []string{id}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[c] || g.commits[c] == nil {
			continue
		}
		seen[c] = true
		stack = append(stack, g.commits[c].parents...)
	}
	return seen
}

func (g *gitModel) isAncestor(a, b string) bool { return g.ancestors(b)[a] }

// mergeBase is the newest common ancestor of a and b.
func (g *gitModel) mergeBase(a, b string) string {
	inA := g.ancestors(a)
	best := ""
	for c := range g.ancestors(b) {
		if inA[c] && (best == "" || g.commits[c].gen > g.commits[best].gen) {
			best = c
		}
	}
	return best
}

// between are the commits on onto since base, newest first.
func (g *gitModel) between(base, onto string) []core.TargetCommit {
	old := g.ancestors(base)
	var out []*commit
	for c := range g.ancestors(onto) {
		if !old[c] {
			out = append(out, g.commits[c])
		}
	}
	slices.SortFunc(out, func(a, b *commit) int { return b.gen - a.gen })
	var ids []core.TargetCommit
	for _, c := range out {
		ids = append(ids, core.TargetCommit{Hash: c.id[:7], Subject: "change"})
	}
	return ids
}

// mergeTrees merges ours and theirs from base as git merge-tree does:
// the files both changed differently are in conflict.
func mergeTrees(base, ours, theirs map[string]string) (map[string]string, []string) {
	out := map[string]string{}
	var conflict []string
	keys := map[string]bool{}
	for _, t := range []map[string]string{base, ours, theirs} {
		for k := range t {
			keys[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		b, o, t := base[k], ours[k], theirs[k]
		switch {
		case o == t || t == b:
			out[k] = o
		case o == b:
			out[k] = t
		default:
			conflict = append(conflict, k)
			continue
		}
		if out[k] == "" {
			delete(out, k)
		}
	}
	return out, conflict
}

// combine merges head into onto as git merge-tree does and makes the
// commit of their combination by how: a merge commit (merge), else one
// commit on onto. No commit, and the files in conflict, when they
// conflict.
func (g *gitModel) combine(onto, head, how string) (string, map[string]string, []string) {
	base := g.mergeBase(onto, head)
	tree, conflict := mergeTrees(g.tree(base), g.tree(head), g.tree(onto))
	if len(conflict) > 0 {
		return "", nil, conflict
	}
	parents := []string{onto}
	if how == core.LandMerge {
		parents = append(parents, head)
	}
	return g.commit(tree, parents...), tree, nil
}

// changed are the files that differ between two trees.
func changed(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// commitAll commits a worktree's changes on its branch (nothing when
// there are none) and returns the branch's head.
func (g *gitModel) commitAll(wt *worktree) string {
	head := g.branches[wt.branch]
	if len(changed(g.tree(head), wt.files)) == 0 {
		return head
	}
	c := g.commit(wt.files, head)
	g.branches[wt.branch] = c
	return c
}

// landedAs is the commit a branch at head already landed as on the
// target at onto, "" when it did not (workspace's landedAs): head when
// the target holds it; for squash, a commit on the target's first-parent
// line since base with exactly the branch's files.
func (g *gitModel) landedAs(head, onto, base, how string) string {
	if g.isAncestor(head, onto) {
		return head
	}
	if how != "squash" {
		return ""
	}
	want := treeHash(g.tree(head))
	for c := onto; c != "" && c != base; {
		if treeHash(g.tree(c)) == want {
			return c
		}
		if p := g.commits[c].parents; len(p) > 0 {
			c = p[0]
		} else {
			c = ""
		}
	}
	return ""
}

// move moves the target to c, for task ("" for the user).
func (g *gitModel) move(c, task string) {
	g.target = c
	g.reflog = append(g.reflog, refEntry{commit: c, task: task})
}

// describe is the target's history of moves, for failure reports.
func (g *gitModel) describe() string {
	var b strings.Builder
	for _, e := range g.reflog {
		fmt.Fprintf(&b, " %s(%s)", e.commit[:7], firstNonEmpty(e.task, "user"))
	}
	return b.String()
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
