package test

// Black-box tests of the agent presets' command lines as the real binary
// starts them, with stand-ins for the agent CLIs that record how they were
// run.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// recorder writes a stand-in for an agent CLI named name into dir: it
// prints version for --version, else writes its arguments and the
// variables named in vars to dir/name.log and exits 1.
func recorder(t *testing.T, dir, name, version string, vars ...string) string {
	t.Helper()
	log := filepath.Join(dir, name+".log")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '" + version + "'; exit 0; fi\n" +
		"printf '%s\\n' \"$*\" > " + log + ".tmp\n"
	for _, v := range vars {
		script += "echo \"" + v + "=${" + v + "}\" >> " + log + ".tmp\n"
	}
	// The log appears whole, or not at all.
	script += "mv " + log + ".tmp " + log + "\nexit 1\n"
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// The presets start the CLIs as their current versions demand: Codex with
// --sandbox workspace-write (it refuses --full-auto), Gemini CLI with the
// folder trusted (it refuses to run in an untrusted one).
func TestPresetsStartTheCurrentCLIsAsTheyDemand(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	codex := recorder(t, bin, "codex", "codex-cli 0.169.0")
	gemini := recorder(t, bin, "gemini", "0.61.0", "GEMINI_CLI_TRUST_WORKSPACE")
	dir := blackbox.NewRepo(t, "agents:\n"+
		"  - {name: codex, adapter: exec, preset: codex, command: ["+blackbox.Quoted(codex)+"], timeout: 1m}\n"+
		"  - {name: gemini, adapter: exec, preset: gemini, command: ["+blackbox.Quoted(gemini)+"], timeout: 1m}\n"+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	// One at a time: a stand-in fails every turn the same way, so its task
	// is escalated and holds the queue until it is answered.
	in.Submit(map[string]any{"id": "P-1", "description": "Write the fix into file.txt", "agent": "codex"})
	waitFor(t, "codex to run", 30*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(bin, "codex.log"))
		return err == nil
	})
	in.WaitTask("P-1", 30*time.Second, "escalated")
	in.Cli("respond", "P-1", "abort")
	in.Submit(map[string]any{"id": "P-2", "description": "Write the fix into file.txt", "agent": "gemini"})
	waitFor(t, "gemini to run", 30*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(bin, "gemini.log"))
		return err == nil
	})
	if got := blackbox.ReadFile(t, filepath.Join(bin, "codex.log")); !strings.HasPrefix(got, "exec --sandbox workspace-write --json") || strings.Contains(got, "--full-auto") {
		t.Fatalf("codex ran as: %s", got)
	}
	if got := blackbox.ReadFile(t, filepath.Join(bin, "gemini.log")); !strings.Contains(got, "GEMINI_CLI_TRUST_WORKSPACE=true") {
		t.Fatalf("gemini ran without the folder trusted: %s", got)
	}
}

// `wilco init` notes an installed agent CLI newer than the version its
// preset is known to work with.
func TestInitNotesAnAgentNewerThanItsPresetKnows(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	recorder(t, bin, "claude", "9.0.0 (Claude Code)")
	for _, p := range []string{"git", "sh"} {
		path, err := exec.LookPath(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(path, filepath.Join(bin, p)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	cmd := exec.Command(blackbox.WilcoBin, "init")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + bin, "HOME=" + dir}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("wilco init: %v\n%s", err, out)
	}
	blackbox.MustContain(t, "wilco init", string(out), "agent:  claude (exec, preset claude-code)", "note: claude 9.0.0 is newer than 2.1.331")
}

// `wilco init` notes nothing of an agent CLI whose preset is known to work
// with no particular version (Aider's): no version is newer than none.
func TestInitNotesNoVersionOfAnAgentWhosePresetKnowsNone(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	recorder(t, bin, "aider", "aider 1.2.3")
	for _, p := range []string{"git", "sh"} {
		path, err := exec.LookPath(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(path, filepath.Join(bin, p)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	cmd := exec.Command(blackbox.WilcoBin, "init")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + bin, "HOME=" + dir}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("wilco init: %v\n%s", err, out)
	}
	blackbox.MustContain(t, "wilco init", string(out), "agent:  aider (exec, preset aider)")
	if strings.Contains(string(out), "note:") {
		t.Fatalf("wilco init notes a version of aider:\n%s", out)
	}
}
