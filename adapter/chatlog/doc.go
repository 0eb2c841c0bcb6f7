// Package chatlog reads what an interactive agent program said from the
// record it keeps of its own conversation, not from what it draws: Claude
// Code's session JSONL, Codex's rollout JSONL, Gemini CLI's chat files,
// opencode's session storage, Aider's chat history. A record holds the
// exact text of the agent's messages, its tool calls and their results,
// and the prompts it was sent — no wrapping, no decoration, no echo — so
// a turn is read from the prompt that began it to the end the record
// gives it, and nothing of another turn.
//
// Each Format knows where its program writes (given the program's
// environment, its folder and the conversation id) and how to turn the
// record into Entries. The tmux adapter reads the pane only for what only
// the pane shows: ready, busy, a permission question, a dialog, a dead
// program.
package chatlog
