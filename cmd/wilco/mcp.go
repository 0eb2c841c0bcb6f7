package main

import (
	"context"
	"errors"

	"wilco/mcpserver"
)

// cmdMCP serves wilco's MCP tools to the agent that runs it, on standard
// input and output: acknowledge, clarify, report a checkpoint, report
// completion, for the task in WILCO_TASK_ID.
func cmdMCP(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	cl, err := c.agentClient()
	if err != nil {
		return c.fail(err)
	}
	task := mcpserver.Task{ID: c.getenv("WILCO_TASK_ID"), MessageID: c.getenv("WILCO_MESSAGE_ID")}
	if err := mcpserver.Serve(ctx, c.stdin, c.stdout, cl, task, version); err != nil && !errors.Is(err, context.Canceled) {
		return c.fail(err)
	}
	return exitOK
}
