package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"wilco/atomicfile"
)

// geminiHome registers wilco's MCP server with Gemini CLI.
//
// Gemini CLI reads MCP servers only from its settings files: the user's
// (~/.gemini/settings.json), the project's (.gemini/settings.json in the
// working tree) and the system's, whose files it ignores unless root owns
// them and every folder above them. wilco changes none of those. Instead it
// keeps a home of its own for the agent (dir) and points Gemini CLI at it
// with GEMINI_CLI_HOME, which replaces the home Gemini CLI takes its .gemini
// folder from (packages/core/src/utils/paths.ts, homedir()):
//
//   - dir/.gemini/settings.json is the user's settings with
//     mcpServers.wilco added — trusted, so that its tools are offered in
//     headless mode without a confirmation nobody can give, and with wilco's
//     variables passed on explicitly ($VAR is expanded by Gemini CLI), since
//     Gemini CLI gives MCP servers an environment without tokens;
//   - every other entry of the user's ~/.gemini is a symbolic link to it, so
//     the user's credentials, accounts and trusted folders are the ones
//     Gemini CLI sees, and what it writes through them lands in the user's
//     folder;
//   - among them tmp, where Gemini CLI keeps the records of its
//     conversations, made in the user's ~/.gemini when it is not there
//     yet: they are where the user's own Gemini CLI (its --resume) and
//     wilco's reading of them (package chatlog, from HOME) find them.
//
// Settings that do not read as JSON (Gemini CLI also takes comments) are
// read with the comments removed; if they still do not, they are linked
// like the rest and no server is registered.
func geminiHome(command []string, home, dir string) error {
	if len(command) == 0 {
		return nil
	}
	src := filepath.Join(home, ".gemini")
	dst := filepath.Join(dir, ".gemini")
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return fmt.Errorf("gemini home: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(src, "tmp"), 0o700); err != nil {
		return fmt.Errorf("gemini home: %w", err)
	}
	entries, err := os.ReadDir(src)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gemini home: read %s: %w", src, err)
	}
	settings := map[string]any{}
	registered := true
	for _, e := range entries {
		name := e.Name()
		if name == "settings.json" {
			b, err := os.ReadFile(filepath.Join(src, name))
			if err == nil {
				if err = json.Unmarshal(b, &settings); err != nil {
					settings = map[string]any{}
					err = json.Unmarshal([]byte(stripJSONComments(string(b))), &settings)
				}
			}
			if err != nil {
				registered = false
				if err := relink(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
					return err
				}
			}
			continue
		}
		if err := link(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			return err
		}
	}
	if registered {
		servers, _ := settings["mcpServers"].(map[string]any)
		if servers == nil {
			servers = map[string]any{}
		}
		env := map[string]string{}
		for _, v := range mcpVars {
			env[v] = "$" + v
		}
		servers["wilco"] = map[string]any{"command": command[0], "args": command[1:], "trust": true, "env": env}
		settings["mcpServers"] = servers
		b, err := json.MarshalIndent(settings, "", "  ")
		if err != nil {
			return fmt.Errorf("gemini home: %w", err)
		}
		path := filepath.Join(dst, "settings.json")
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			_ = os.Remove(path)
		}
		if err := atomicfile.WriteFile(path, b, 0o600); err != nil {
			return fmt.Errorf("gemini home: %w", err)
		}
	}
	return nil
}

// link makes dst a symbolic link to src unless something is there already
// (a link made earlier, or a file Gemini CLI wrote in wilco's home).
func link(src, dst string) error {
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	if err := os.Symlink(src, dst); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("gemini home: %w", err)
	}
	return nil
}

// relink makes dst a symbolic link to src, replacing what is there.
func relink(src, dst string) error {
	if target, err := os.Readlink(dst); err == nil && target == src {
		return nil
	}
	_ = os.Remove(dst)
	return link(src, dst)
}

// stripJSONComments removes // and /* */ comments outside strings.
func stripJSONComments(s string) string {
	var b strings.Builder
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			b.WriteByte(c)
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			b.WriteByte(c)
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			if i < len(s) {
				b.WriteByte('\n')
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return b.String()
			}
			i += end + 3
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
