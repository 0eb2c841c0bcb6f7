package blackbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// OwnFilesCheck is the verify step of the parallel tests: the task's own
// file holds its id, and every file of files/ holds its own name.
const OwnFilesCheck = `for f in files/*.txt; do
	[ -e "$f" ] || continue
	want=$(basename "$f" .txt)
	[ "$(cat "$f")" = "$want" ] || { echo "check: $f holds \"$(cat "$f")\", want \"$want\""; exit 1; }
done
if [ -n "$WILCO_TASK_ID" ]; then
	[ "$(cat "files/$WILCO_TASK_ID.txt" 2>/dev/null)" = "$WILCO_TASK_ID" ] || { echo "check: files/$WILCO_TASK_ID.txt does not hold $WILCO_TASK_ID"; exit 1; }
fi
`

// ParallelRepo makes a repository (newRepo) on branch main with the
// check script given as par.sh, committed, the verify step running it.
func ParallelRepo(t *testing.T, yaml, check string) string {
	t.Helper()
	dir := NewRepo(t, yaml+"verify:\n  steps:\n    - {name: check, run: \"sh par.sh\", timeout: 20s}\n")
	if err := os.WriteFile(filepath.Join(dir, "par.sh"), []byte(check), 0o644); err != nil {
		t.Fatal(err)
	}
	GitRun(t, dir, "branch", "-M", "main")
	GitRun(t, dir, "add", "par.sh")
	GitRun(t, dir, "-c", "user.name=wilco test", "-c", "user.email=test@wilco.invalid", "commit", "-qm", "the check")
	return dir
}

// FirstParents are the commits main pointed at since the check was
// committed, newest first (its reflog), the check's commit last.
func FirstParents(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, c := range strings.Fields(GitRun(t, dir, "log", "-g", "--format=%H", "main")) {
		out = append(out, c)
		if strings.TrimSpace(GitRun(t, dir, "log", "-1", "--format=%s", c)) == "the check" {
			break
		}
	}
	return out
}

// CheckTreeOf runs par.sh on a commit's tree alone, with no task id: what
// the target holds passes the checks.
func CheckTreeOf(t *testing.T, dir, commit string) error {
	t.Helper()
	tree := t.TempDir()
	cmd := exec.Command("sh", "-c", "git -C \"$1\" archive \"$2\" | tar -x -C \"$3\"", "sh", dir, commit, tree)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("archive %s: %v\n%s", commit, err, out)
	}
	check := exec.Command("sh", "par.sh")
	check.Dir = tree
	check.Env = append(os.Environ(), "WILCO_TASK_ID=")
	if out, err := check.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}
