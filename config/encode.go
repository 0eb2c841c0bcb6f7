package config

import (
	"bytes"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Encode writes c as wilco.yaml: every key, durations as Go
// duration strings ("5m", not "5m0s"). Load reads the result back to the
// same Config.
func (c *Config) Encode() ([]byte, error) {
	return marshal(c.file())
}

// file is c in the file's shape.
func (c *Config) file() file {
	f := file{
		Version: c.Version, Listen: c.Listen, Store: c.Store, Orchestrator: c.Orchestrator,
		Policy: c.filePolicy(),
		Logs: fileLogs{
			RetryLogRetention:   dur(c.Logs.RetryLogRetention),
			RetryJSONLRetention: dur(c.Logs.RetryJSONLRetention),
		},
		Compat:    fileCompat{AIMaestro: c.Compat.AIMaestro},
		Done:      fileDone{MaxFiles: c.Done.MaxFiles, MaxLines: c.Done.MaxLines, Size: string(c.Done.Size), Tests: string(c.Done.Tests)},
		Package:   c.Package,
		Probe:     c.Probe,
		Transport: c.Transport,
		Land:      fileLand{To: c.Land.To, How: c.Land.How, Order: c.Land.Order, Merge: c.Land.Merge, MergeMethod: c.Land.MergeMethod, CITimeout: dur(c.Land.CITimeout), Poll: dur(c.Land.Poll)},
		Parallel:  c.Parallel,
		Notify: fileNotify{
			Desktop: c.Notify.Desktop, BaseURL: c.Notify.BaseURL,
			Retry: fileNotifyRetry{
				MaxAttempts: c.Notify.Retry.MaxAttempts,
				Backoff:     fileBackoff{Base: dur(c.Notify.Retry.BackoffBase), Max: dur(c.Notify.Retry.BackoffMax)},
				Timeout:     dur(c.Notify.Retry.Timeout),
			},
		},
	}
	if fg := c.Forge; fg != nil {
		f.Forge = &fileForge{Kind: fg.Kind, API: fg.API, Repo: fg.Repo, Remote: fg.Remote, Token: fg.Token, WebhookSecret: fg.WebhookSecret}
	}
	if in := c.Intake; in != nil {
		f.Intake = &fileIntake{Label: in.Label, Poll: dur(in.Poll)}
	}
	if c.Review.Agent != "" {
		f.Review = &fileReview{Agent: c.Review.Agent, Timeout: dur(c.Review.Timeout)}
	}
	for _, w := range c.Notify.Webhooks {
		fw := fileWebhook{Name: w.Name, URL: w.URL, Secret: w.Secret, Format: w.Format}
		for _, e := range w.Events {
			fw.Events = append(fw.Events, string(e))
		}
		f.Notify.Webhooks = append(f.Notify.Webhooks, fw)
	}
	for name, p := range c.Prices {
		if f.Prices == nil {
			f.Prices = map[string]filePrice{}
		}
		f.Prices[name] = filePrice{InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok, CachedPerMTok: p.CachedPerMTok}
	}
	for _, a := range c.Agents {
		f.Agents = append(f.Agents, fileAgentOf(a))
	}
	if len(c.Verify.Steps) > 0 {
		f.Verify = &fileVerify{}
		for _, s := range c.Verify.Steps {
			f.Verify.Steps = append(f.Verify.Steps, fileStep{Name: s.Name, Run: s.Run, Timeout: dur(s.Timeout)})
		}
	}
	return f
}

// filePolicy is the file's form of the policies.
func (c *Config) filePolicy() filePolicy {
	return filePolicy{
		Ack: fileAck{
			Timeouts: durs(c.Policy.Ack.Timeouts),
			Backoff: fileBackoff{
				Base: dur(c.Policy.Ack.BackoffBase), Max: dur(c.Policy.Ack.BackoffMax),
			},
			OnUnresponsive: string(c.Policy.Ack.OnUnresponsive),
			MaxCorrections: c.Policy.Ack.MaxCorrections,
			QueuedFollowup: dur(c.Policy.Ack.QueuedFollowup),
		},
		Instruction: fileInstruction{MaxRetries: c.Policy.Instruction.MaxRetries},
		Loop: fileLoop{
			ReplanAfter: c.Policy.Loop.ReplanAfter, HardStop: c.Policy.Loop.HardStop,
			MaxReplans: c.Policy.Loop.MaxReplans, EscalateAfter: c.Policy.Loop.EscalateAfter,
		},
		Budget: fileBudgets{
			Task: fileBudget{MaxCostUSD: c.Policy.Budget.Task.MaxCostUSD, MaxTokens: c.Policy.Budget.Task.MaxTokens},
			Day:  fileBudget{MaxCostUSD: c.Policy.Budget.Day.MaxCostUSD, MaxTokens: c.Policy.Budget.Day.MaxTokens},
		},
		Operation: fileOperation{
			Timeout: dur(c.Policy.Operation.Timeout), Reminders: durs(c.Policy.Operation.Reminders),
			Extension: dur(c.Policy.Operation.Extension), ProceedOnTimeout: c.Policy.Operation.ProceedOnTimeout,
			Quorum: string(c.Policy.Operation.Quorum),
		},
	}
}

// fileAgentOf is the file's form of an agent.
func fileAgentOf(a Agent) fileAgent {
	fa := fileAgent{
		Name: a.Name, Adapter: a.Adapter, Preset: a.Preset, Command: a.Command, Env: a.Env,
		Capabilities: a.Capabilities, Timeout: dur(a.Timeout), IdleTimeout: dur(a.IdleTimeout), Role: a.Role,
		Instances: a.Instances,
	}
	if a.Adapter == "exec" {
		fa.Prompt, fa.Handshake = a.Prompt, a.Handshake
	}
	if t := a.Tmux; t != nil && a.Adapter == "tmux" {
		fa.Tmux = &fileTmux{Session: t.Session, Socket: t.Socket, Ready: t.Ready, Busy: t.Busy, Permission: t.Permission,
			Submit: t.Submit, Interrupt: t.Interrupt, Clear: t.Clear, Approve: t.Approve, Deny: t.Deny, Allow: t.Allow,
			Width: t.Width, Height: t.Height, Settle: dur(t.Settle), SubmitTries: t.SubmitTries}
	}
	return fa
}

// marshal writes v (a value or a *yaml.Node) as YAML indented by two.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// FormatDuration writes d as a Go duration string without zero units:
// "5m", "1h30m", "250ms".
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func dur(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return FormatDuration(d)
}

func durs(ds []time.Duration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = FormatDuration(d)
	}
	return out
}

// The file's shape, for Encode.
type (
	file struct {
		Version      int         `yaml:"version"`
		Listen       string      `yaml:"listen"`
		Store        string      `yaml:"store,omitempty"`
		Orchestrator string      `yaml:"orchestrator"`
		Agents       []fileAgent `yaml:"agents"`
		Verify       *fileVerify `yaml:"verify,omitempty"`
		Policy       filePolicy  `yaml:"policy"`
		Logs         fileLogs    `yaml:"logs"`
		Notify       fileNotify  `yaml:"notify"`
		Compat       fileCompat  `yaml:"compat"`
		// Prices are the user's, by model or agent name, like an agent's
		// env.
		Prices map[string]filePrice `yaml:"prices,omitempty"`
		Done   fileDone             `yaml:"done"`
		Review *fileReview          `yaml:"review,omitempty"`
		// Package is "" in a repository that is not a monorepo.
		Package string `yaml:"package,omitempty"`
		Probe   bool   `yaml:"probe"`
		// Transport is "" when the mailbox is HTTP only.
		Transport string   `yaml:"transport,omitempty"`
		Land      fileLand `yaml:"land"`
		Parallel  int      `yaml:"parallel"`
		// Forge and Intake are nil when the file has none.
		Forge  *fileForge  `yaml:"forge,omitempty"`
		Intake *fileIntake `yaml:"intake,omitempty"`
	}
	fileLand struct {
		// To is "" for the branch checked out when wilco starts.
		To          string `yaml:"to,omitempty"`
		How         string `yaml:"how"`
		Order       string `yaml:"order"`
		Merge       string `yaml:"merge"`
		MergeMethod string `yaml:"merge_method"`
		CITimeout   string `yaml:"ci_timeout"`
		Poll        string `yaml:"poll"`
	}
	fileForge struct {
		Kind string `yaml:"kind"`
		API  string `yaml:"api"`
		// Repo is "" when it is read from the remote's URL.
		Repo   string `yaml:"repo,omitempty"`
		Remote string `yaml:"remote"`
		Token  string `yaml:"token"`
		// WebhookSecret is "" when webhooks are not verified (none).
		WebhookSecret string `yaml:"webhook_secret,omitempty"`
	}
	fileIntake struct {
		Label string `yaml:"label"`
		Poll  string `yaml:"poll"`
	}
	fileDone struct {
		MaxFiles int    `yaml:"max_files"`
		MaxLines int    `yaml:"max_lines"`
		Size     string `yaml:"size"`
		Tests    string `yaml:"tests"`
	}
	fileReview struct {
		Agent   string `yaml:"agent"`
		Timeout string `yaml:"timeout,omitempty"`
	}
	filePrice struct {
		InputPerMTok  float64 `yaml:"input_per_mtok"`
		OutputPerMTok float64 `yaml:"output_per_mtok"`
		CachedPerMTok float64 `yaml:"cached_per_mtok,omitempty"`
	}
	fileAgent struct {
		Name         string            `yaml:"name"`
		Adapter      string            `yaml:"adapter"`
		Preset       string            `yaml:"preset,omitempty"`
		Command      []string          `yaml:"command,omitempty,flow"`
		Prompt       string            `yaml:"prompt,omitempty"`
		Handshake    string            `yaml:"handshake,omitempty"`
		Env          map[string]string `yaml:"env,omitempty"`
		Capabilities []string          `yaml:"capabilities,omitempty,flow"`
		Timeout      string            `yaml:"timeout,omitempty"`
		IdleTimeout  string            `yaml:"idle_timeout,omitempty"`
		Role         string            `yaml:"role,omitempty"`
		Instances    int               `yaml:"instances,omitempty"`
		Tmux         *fileTmux         `yaml:"tmux,omitempty"`
	}
	fileTmux struct {
		Session     string   `yaml:"session,omitempty"`
		Socket      string   `yaml:"socket,omitempty"`
		Ready       string   `yaml:"ready,omitempty"`
		Busy        string   `yaml:"busy,omitempty"`
		Permission  string   `yaml:"permission,omitempty"`
		Submit      string   `yaml:"submit,omitempty"`
		Interrupt   []string `yaml:"interrupt,omitempty,flow"`
		Clear       []string `yaml:"clear,omitempty,flow"`
		Approve     []string `yaml:"approve,omitempty,flow"`
		Deny        []string `yaml:"deny,omitempty,flow"`
		Allow       []string `yaml:"allow,omitempty,flow"`
		Width       int      `yaml:"width,omitempty"`
		Height      int      `yaml:"height,omitempty"`
		Settle      string   `yaml:"settle,omitempty"`
		SubmitTries int      `yaml:"submit_tries,omitempty"`
	}
	fileVerify struct {
		Steps []fileStep `yaml:"steps"`
	}
	fileStep struct {
		Name    string `yaml:"name"`
		Run     string `yaml:"run"`
		Timeout string `yaml:"timeout,omitempty"`
	}
	filePolicy struct {
		Ack         fileAck         `yaml:"ack"`
		Instruction fileInstruction `yaml:"instruction"`
		Loop        fileLoop        `yaml:"loop"`
		Operation   fileOperation   `yaml:"operation"`
		Budget      fileBudgets     `yaml:"budget"`
	}
	fileBudgets struct {
		Task fileBudget `yaml:"task"`
		Day  fileBudget `yaml:"day"`
	}
	fileBudget struct {
		MaxCostUSD float64 `yaml:"max_cost_usd"`
		MaxTokens  int64   `yaml:"max_tokens"`
	}
	fileAck struct {
		Timeouts       []string    `yaml:"timeouts,flow"`
		Backoff        fileBackoff `yaml:"backoff"`
		OnUnresponsive string      `yaml:"on_unresponsive"`
		MaxCorrections int         `yaml:"max_corrections"`
		QueuedFollowup string      `yaml:"queued_followup"`
	}
	fileBackoff struct {
		Base string `yaml:"base"`
		Max  string `yaml:"max"`
	}
	fileInstruction struct {
		MaxRetries int `yaml:"max_retries"`
	}
	fileLoop struct {
		ReplanAfter   int `yaml:"replan_after"`
		HardStop      int `yaml:"hard_stop"`
		MaxReplans    int `yaml:"max_replans"`
		EscalateAfter int `yaml:"escalate_after"`
	}
	fileOperation struct {
		Timeout          string   `yaml:"timeout"`
		Reminders        []string `yaml:"reminders,flow"`
		Extension        string   `yaml:"extension"`
		ProceedOnTimeout bool     `yaml:"proceed_on_timeout"`
		Quorum           string   `yaml:"quorum"`
	}
	fileLogs struct {
		RetryLogRetention   string `yaml:"retry_log_retention"`
		RetryJSONLRetention string `yaml:"retry_jsonl_retention"`
	}
	fileNotify struct {
		Webhooks []fileWebhook   `yaml:"webhooks,omitempty"`
		Desktop  bool            `yaml:"desktop"`
		BaseURL  string          `yaml:"base_url,omitempty"`
		Retry    fileNotifyRetry `yaml:"retry"`
	}
	fileWebhook struct {
		Name   string   `yaml:"name"`
		URL    string   `yaml:"url"`
		Secret string   `yaml:"secret,omitempty"`
		Events []string `yaml:"events,flow"`
		Format string   `yaml:"format"`
	}
	fileNotifyRetry struct {
		MaxAttempts int         `yaml:"max_attempts"`
		Backoff     fileBackoff `yaml:"backoff"`
		Timeout     string      `yaml:"timeout"`
	}
	fileCompat struct {
		AIMaestro bool `yaml:"aimaestro"`
	}
)
