package exec

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"wilco/proc"
)

// PidFileName holds, in a turn's run directory, the process group id of
// the agent process while it runs.
const PidFileName = "agent.pid"

// KillOrphans stops the agent processes a previous wilco started and did
// not stop (it was killed): every run directory with a pid file whose
// process still runs with that run directory in its environment. The pid
// files are removed. It returns how many process groups it stopped. Call it
// once at start, before any turn. Where a process's environment cannot be
// read (proc.Environ: Linux only), nothing is stopped.
func (a *Adapter) KillOrphans() int {
	files, _ := filepath.Glob(filepath.Join(a.opts.RunsDir, "*", PidFileName))
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		_ = os.Remove(f)
		if err != nil {
			continue
		}
		pgid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pgid <= 1 {
			continue
		}
		// A pid is reused: stop it only if it is still the agent of that
		// run, which wilco gave WILCO_RUN_DIR.
		env, err := proc.Environ(pgid)
		if err != nil || !slices.Contains(env, "WILCO_RUN_DIR="+filepath.Dir(f)) {
			continue
		}
		a.opts.Logger.Warn("stopping an agent left running by a wilco that stopped", "pgid", pgid, "run", filepath.Base(filepath.Dir(f)))
		_ = proc.KillGroup(pgid)
		n++
	}
	return n
}
