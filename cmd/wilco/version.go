package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

// version is wilco's version. Empty: it is read from the build
// information (the module's version, else the commit it was built from);
// a release sets it with -ldflags "-X main.version=v1.2.3".
var version = ""

// versionText is what `wilco version` prints: the version, the commit
// (with "+dirty" when the tree had uncommitted changes), its time and the
// Go version.
func versionText(info *debug.BuildInfo, ok bool) string {
	v := version
	var rev, when, goVersion string
	dirty := false
	if ok {
		goVersion = info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
	}
	if v == "" {
		v = "devel"
	}
	var parts []string
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "+dirty"
		}
		parts = append(parts, "commit "+rev)
	}
	if when != "" {
		parts = append(parts, when)
	}
	if goVersion != "" {
		parts = append(parts, goVersion)
	}
	if len(parts) == 0 {
		return "wilco " + v
	}
	return "wilco " + v + " (" + strings.Join(parts, ", ") + ")"
}

// shortVersion is the version and its commit: what a node of several
// shows of itself in the cluster's view.
func shortVersion(info *debug.BuildInfo, ok bool) string {
	text := strings.TrimPrefix(versionText(info, ok), "wilco ")
	v, rest, _ := strings.Cut(text, " (")
	if commit, ok := strings.CutPrefix(rest, "commit "); ok {
		commit, _, _ = strings.Cut(strings.TrimSuffix(commit, ")"), ", ")
		return v + " " + commit
	}
	return v
}

func cmdVersion(_ context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	info, ok := debug.ReadBuildInfo()
	fmt.Fprintln(c.stdout, versionText(info, ok))
	return exitOK
}
