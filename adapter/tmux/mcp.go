package tmux

import (
	"maps"
	"os"
	"path/filepath"

	execadapter "wilco/adapter/exec"
)

// wilco's MCP server (Options.MCP) is registered with the interactive
// program of each preset as the exec adapter's preset registers it with
// the same CLI: Claude Code's and Codex's by arguments
// (execadapter.MCPArgs), opencode's by its configuration variable
// (execadapter.MCPEnv), Gemini CLI's in a home of wilco's whose settings
// add it (execadapter.MCPHome). Aider has no MCP client.
//
// The program starts the server once, when it starts, with its own
// environment: WILCO_TASK_ID and WILCO_MESSAGE_ID are those of the turn it
// starts for, and a later turn's tool calls name their task (the task_id
// argument; the prompt names it, "[ACK] T-3").

// mcpArgs are the arguments that register wilco's MCP server with the
// agent's program.
func (ag *agent) mcpArgs() []string {
	if ag.preset == nil {
		return nil
	}
	return execadapter.MCPArgs(ag.preset.Name, ag.a.opts.MCP)
}

// mcpEnv are the variables that register wilco's MCP server with the
// agent's program, with the ids of the turn it starts for; none that the
// agent's env or wilco's environment sets (the user's are kept).
func (ag *agent) mcpEnv() map[string]string {
	if ag.preset == nil || len(ag.a.opts.MCP) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range execadapter.MCPEnv(ag.preset.Name, ag.a.opts.MCP) {
		if _, set := ag.cfg.Env[k]; set {
			continue
		}
		if _, set := os.LookupEnv(k); !set {
			out[k] = v
		}
	}
	home, err := execadapter.MCPHome(ag.preset.Name, ag.a.opts.MCP, ag.cfg.Env, filepath.Join(ag.a.runsDir, "homes", ag.cfg.Name))
	if err != nil {
		ag.logger().Warn("wilco's MCP server is not registered with the agent", "err", err)
	}
	maps.Copy(out, home)
	if len(execadapter.MCPArgs(ag.preset.Name, ag.a.opts.MCP)) == 0 && len(out) == 0 {
		return nil // the program has no server of wilco's to tell the ids to
	}
	ag.mu.Lock()
	j := ag.cur
	if j == nil && len(ag.queue) > 0 {
		j = ag.queue[0]
	}
	ag.mu.Unlock()
	if j != nil && j.msg.TaskID != "" {
		out["WILCO_TASK_ID"], out["WILCO_MESSAGE_ID"] = j.msg.TaskID, j.msg.ID
	}
	return out
}
