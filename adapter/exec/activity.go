package exec

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// toolActivity reads one line of an agent CLI's JSON output for the tool
// calls it reports, and says each as a milestone a person reads: "Reading
// calc.go", "Editing calc.go", "Running go test ./...". It knows the
// shapes of the presets' formats: Claude Code's assistant message with
// tool_use blocks, Codex's command_execution and file_change items, Gemini
// CLI's tool_use event (tool_name, parameters) and opencode's tool_use
// part (tool, state.input). Anything else says nothing.
func toolActivity(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "{") || !strings.Contains(line, "tool") && !strings.Contains(line, "command_execution") && !strings.Contains(line, "file_change") {
		return nil
	}
	var ev struct {
		Type    string `json:"type"`
		Message *struct {
			Content []struct {
				Type  string         `json:"type"`
				Name  string         `json:"name"`
				Input map[string]any `json:"input"`
			} `json:"content"`
		} `json:"message"`
		Item *struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Changes []struct {
				Path string `json:"path"`
				Kind string `json:"kind"`
			} `json:"changes"`
		} `json:"item"`
		ToolName   string         `json:"tool_name"`
		Parameters map[string]any `json:"parameters"`
		Part       *struct {
			Tool  string `json:"tool"`
			State *struct {
				Input map[string]any `json:"input"`
			} `json:"state"`
		} `json:"part"`
	}
	if json.Unmarshal([]byte(line), &ev) != nil {
		return nil
	}
	var out []string
	switch {
	case ev.Type == "assistant" && ev.Message != nil:
		for _, b := range ev.Message.Content {
			if b.Type == "tool_use" {
				out = append(out, describeTool(b.Name, b.Input))
			}
		}
	case ev.Type == "item.started" && ev.Item != nil && ev.Item.Type == "command_execution":
		out = append(out, describeTool("shell", map[string]any{"command": ev.Item.Command}))
	case ev.Type == "item.completed" && ev.Item != nil && ev.Item.Type == "file_change":
		for _, c := range ev.Item.Changes {
			out = append(out, describeTool("edit", map[string]any{"path": c.Path}))
		}
	case ev.Type == "tool_use" && ev.ToolName != "":
		out = append(out, describeTool(ev.ToolName, ev.Parameters))
	case ev.Type == "tool_use" && ev.Part != nil && ev.Part.Tool != "":
		var in map[string]any
		if ev.Part.State != nil {
			in = ev.Part.State.Input
		}
		out = append(out, describeTool(ev.Part.Tool, in))
	}
	return out
}

// describeTool says a tool call in a few words.
func describeTool(name string, input map[string]any) string {
	str := func(keys ...string) string {
		for _, k := range keys {
			switch v := input[k].(type) {
			case string:
				if v != "" {
					return v
				}
			case []any:
				var parts []string
				for _, p := range v {
					if s, ok := p.(string); ok {
						parts = append(parts, s)
					}
				}
				if len(parts) > 0 {
					return strings.Join(parts, " ")
				}
			}
		}
		return ""
	}
	file := str("file_path", "filePath", "path", "absolute_path", "notebook_path")
	if file != "" {
		file = filepath.Base(file)
	}
	what := func(verb string) string {
		if file == "" {
			return verb
		}
		return verb + " " + file
	}
	switch n := strings.ToLower(name); n {
	case "read", "read_file", "view", "read_many_files", "notebookread":
		return what("Reading")
	case "write", "write_file", "create", "create_file":
		return what("Writing")
	case "edit", "multiedit", "replace", "str_replace", "apply_patch", "patch", "notebookedit":
		return what("Editing")
	case "bash", "shell", "exec_command", "run_shell_command", "local_shell", "command":
		cmd := str("command", "cmd")
		// A shell wrapper says less than the command it runs.
		for _, p := range []string{"/bin/bash -lc ", "bash -lc ", "/bin/sh -c ", "sh -c "} {
			cmd = strings.TrimPrefix(cmd, p)
		}
		cmd = strings.Trim(strings.Join(strings.Fields(cmd), " "), `'"`)
		if len(cmd) > 60 {
			cmd = cmd[:59] + "…"
		}
		if cmd == "" {
			return "Running a command"
		}
		return "Running " + cmd
	case "grep", "glob", "grep_search", "search", "search_file_content", "list_directory", "ls", "find":
		if p := str("pattern", "query"); p != "" {
			if len(p) > 40 {
				p = p[:39] + "…"
			}
			return "Searching for " + p
		}
		return what("Searching")
	}
	return "Using " + name
}
