package main

import (
	"bytes"
	"context"
	"flag"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// Every flag a verb's flag set defines, and every listed verb, is offered
// by the completion, which is derived from the verb table.
func TestCompletionOffersEveryVerbAndFlag(t *testing.T) {
	t.Parallel()
	words := completionWords()
	byName := map[string]verbWords{}
	for _, w := range words {
		byName[w.name] = w
	}
	for _, v := range verbs {
		if v.group == "" {
			continue
		}
		w, ok := byName[v.name]
		if !ok {
			t.Errorf("verb %s is not completed", v.name)
			continue
		}
		for _, fs := range verbFlagSets(v, "") {
			fs.VisitAll(func(f *flag.Flag) {
				if !slices.Contains(w.flags, "--"+f.Name) {
					t.Errorf("wilco %s --%s is not completed", v.name, f.Name)
				}
			})
		}
	}
	if !slices.Contains(byName["agents"].words, "add") || !slices.Contains(byName["agents"].flags, "--preset") {
		t.Errorf("agents: the subcommand add and its flags are not completed: %+v", byName["agents"])
	}
	if !slices.Equal(byName["respond"].words, []string{"abort", "fix", "retry", "skip"}) {
		t.Errorf("respond's actions: %v", byName["respond"].words)
	}
	if !slices.Equal(byName["notify"].words, []string{"log"}) || !slices.Contains(byName["notify"].flags, "--state") || !slices.Contains(byName["notify"].flags, "--limit") {
		t.Errorf("notify: the subcommand log and its flags are not completed: %+v", byName["notify"])
	}
	if !slices.Equal(byName["config"].words, []string{"check"}) {
		t.Errorf("config's subcommand: %v", byName["config"].words)
	}
	if _, ok := byName["demo-agent"]; ok {
		t.Error("an unlisted verb is completed")
	}
}

func TestCompletionRefusesAnUnknownShell(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"completion", "tcsh"}, &out, &errb); code != exitUsage {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(errb.String(), `unknown shell "tcsh"`) || !strings.Contains(errb.String(), "bash, zsh, fish") {
		t.Fatalf("stderr %q", errb.String())
	}
}

func TestVersionNamesTheCommit(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := versionText(info, true), "wilco devel (commit 0123456789ab+dirty, 2026-01-02T03:04:05Z, go1.26.0)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	info.Main.Version = "v1.4.0"
	if got := versionText(info, true); !strings.HasPrefix(got, "wilco v1.4.0 (commit ") {
		t.Errorf("module version: %q", got)
	}
	if got := versionText(nil, false); got != "wilco devel" {
		t.Errorf("no build information: %q", got)
	}
	if got := shortVersion(info, true); got != "v1.4.0 0123456789ab+dirty" {
		t.Errorf("the version a node shows: %q", got)
	}
	if got := shortVersion(nil, false); got != "devel" {
		t.Errorf("the version a node shows without build information: %q", got)
	}
}
