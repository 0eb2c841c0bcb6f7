package wire

import "time"

// Agent is a named worker and where it stands. Its token is never shown.
type Agent struct {
	Name                string        `json:"name"`
	Adapter             Adapter       `json:"adapter"`
	Capabilities        []string      `json:"capabilities"`
	Status              AgentStatus   `json:"status"`
	Pull                bool          `json:"pull" doc:"The agent fetches its messages (GET /v1/inbox); the others are handed them."`
	HasToken            bool          `json:"has_token" doc:"The agent has a token (POST /v1/agents/{name}/token gives one)."`
	Waiting             int           `json:"waiting" doc:"The messages and instructions waiting for the agent's next dispatch cycle."`
	Unacknowledged      int           `json:"unacknowledged" doc:"The instructions sent and not yet acknowledged."`
	Polling             bool          `json:"polling" doc:"The agent is long-polling its inbox right now."`
	FromConfig          bool          `json:"from_config" doc:"The agent comes from wilco.yaml."`
	Removed             bool          `json:"removed" doc:"The agent was taken out of service: no more work, its token refused."`
	Conversation        string        `json:"conversation,omitempty" doc:"The conversation a hibernated agent resumes at its wake."`
	Pane                *Pane         `json:"pane,omitempty" doc:"What a tmux agent's pane shows."`
	LastSeen            *time.Time    `json:"last_seen" doc:"When wilco last heard from the agent: a poll, an answer, the end of its turn."`
	CurrentTask         string        `json:"current_task,omitempty" doc:"The task the agent holds now."`
	FinishedTasks       int           `json:"finished_tasks" doc:"The tasks it ended."`
	FirstAttemptSuccess int           `json:"first_attempt_success" doc:"Of finished_tasks, those that succeeded at the first attempt."`
	Usage               Usage         `json:"usage" doc:"What its turns cost, as its CLI reported it."`
	Role                Role          `json:"role,omitempty" doc:"scout: a read-only helper agents consult; it takes no task."`
	Context             *AgentContext `json:"context,omitempty" doc:"What the last context probe learned of the agent's side."`
}

// Pane is what a tmux agent's pane shows: its state, its session and the
// command that attaches to it, the prompts waiting for it, the message it
// works on.
type Pane struct {
	State        PaneState `json:"state"`
	Session      string    `json:"session"`
	Attach       []string  `json:"attach"`
	Queued       int       `json:"queued"`
	Working      string    `json:"working,omitempty"`
	Conversation string    `json:"conversation,omitempty"`
	Instances    []PaneOf  `json:"instances,omitempty" doc:"The sessions of the tasks worked in parallel the agent works on, one per task, each in the task's worktree."`
}

// PaneOf is the pane of the session a tmux agent works a task worked in
// parallel in.
type PaneOf struct {
	Task    string    `json:"task"`
	State   PaneState `json:"state"`
	Session string    `json:"session"`
	Attach  []string  `json:"attach"`
	Working string    `json:"working,omitempty"`
}

// AgentContext is what a context probe learned of an agent's side: its
// OS, its CLI's version, and each tool's version or "missing".
type AgentContext struct {
	OS    string            `json:"os,omitempty"`
	CLI   string            `json:"cli,omitempty"`
	Tools map[string]string `json:"tools,omitempty" doc:"Each tool asked about: its version, or missing."`
	At    time.Time         `json:"at"`
	Raw   string            `json:"raw,omitempty" doc:"The answer as the agent gave it."`
}

// AgentList is the agents, and where the next task goes: GET /v1/agents.
type AgentList struct {
	Agents []Agent   `json:"agents"`
	Next   NextAgent `json:"next"`
}

// NextAgent says where the next task that names no agent would go, and
// why.
type NextAgent struct {
	Agent string `json:"agent" doc:"The agent the next task that names none goes to (\"\" when none is in service)."`
	Why   string `json:"why"`
}

// CreateAgent registers an agent: POST /v1/agents. The fields after
// Adapter are those of the agent's entry in wilco.yaml.
type CreateAgent struct {
	Name         string            `json:"name"`
	Adapter      Adapter           `json:"adapter"`
	Capabilities []string          `json:"capabilities,omitempty"`
	Preset       Preset            `json:"preset,omitempty"`
	Command      []string          `json:"command,omitempty"`
	Prompt       PromptMode        `json:"prompt,omitempty"`
	Handshake    Handshake         `json:"handshake,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	Timeout      Duration          `json:"timeout,omitzero"`
	IdleTimeout  Duration          `json:"idle_timeout,omitzero"`
	Role         Role              `json:"role,omitempty"`
	Tmux         *Tmux             `json:"tmux,omitempty"`
}

// Tmux is the tmux block of a tmux agent (wilco.yaml's agents[].tmux).
type Tmux struct {
	Session     string   `json:"session,omitempty"`
	Socket      string   `json:"socket,omitempty"`
	Ready       string   `json:"ready,omitempty"`
	Busy        string   `json:"busy,omitempty"`
	Permission  string   `json:"permission,omitempty"`
	Submit      string   `json:"submit,omitempty"`
	Interrupt   []string `json:"interrupt,omitempty"`
	Clear       []string `json:"clear,omitempty"`
	Approve     []string `json:"approve,omitempty"`
	Deny        []string `json:"deny,omitempty"`
	Allow       []string `json:"allow,omitempty"`
	Width       int      `json:"width,omitempty"`
	Height      int      `json:"height,omitempty"`
	Settle      Duration `json:"settle,omitzero"`
	SubmitTries int      `json:"submit_tries,omitempty"`
}

// CreatedAgent is the answer to registering an agent: the agent, and its
// token (shown once).
type CreatedAgent struct {
	Agent Agent  `json:"agent"`
	Token string `json:"token" doc:"The agent's token; shown once."`
}

// Token is an agent's new token: POST /v1/agents/{name}/token.
type Token struct {
	Token string `json:"token"`
}
