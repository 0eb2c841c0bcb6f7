package ack_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wilco/ack"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the seed entries of testdata/fuzz from seedCorpus")

// seedCorpus is the committed seed corpus of each fuzzer: every example of
// the ACK and operation protocols, and the lenient and broken forms the tests name. Each
// entry is the file testdata/fuzz/<FuzzName>/seed-<name>; TestSeedCorpus
// keeps the files and this list the same (go test ./ack -run
// TestSeedCorpus -update-corpus rewrites them). Beside them, under their hash
// names, sit the crashers the fuzzers found. Entries stay small: the fuzzer
// spends up to a minute minimising each new input grown from a large one.
func seedCorpus() map[string]map[string][]any {
	errorForm := func(code ack.ErrorCode) string {
		return `{"type": "task-acknowledgment-error", "task_id": "GH-42", "error_code": "` + string(code) +
			`", "error_message": "Cannot accept task", "timestamp": "2025-12-31T03:00:00Z", "retry_after_minutes": 15, "alternative_agents": ["agent-backend-02"]}`
	}
	_, ackRequired := ack.AckRequired("GH-42")
	_, correction := ack.Correction("GH-4", []string{"--sort flag"}, "Implement xls")
	_, wrongID := ack.WrongID("GH-42", "GH-4")
	execOutput := "[ACK] T-3 - RECEIVED\nUnderstanding: fix the parser\n\nRunning go test…\n```json\n" +
		`{"type": "task-complete", "task_id": "T-3", "status": "success", "summary": "fixed", "files_modified": ["ack/parse.go"], "verification": {"command": "go test ./...", "exit_code": 0}}` +
		"\n```\n"
	delegation := "## Task: GH-4-xls-implementation\n\nImplement xls.\n\n## Acceptance Criteria\n- [ ] --sort flag\n\n" +
		"## Git Workflow\nBranch: feat/xls\n\n## Verification Commands\ncargo test\n\n" + ack.Teach("GH-4-xls-implementation")

	parse := map[string][]any{
		"ack-ack-received":          {exampleAckReceived},
		"ack-ack-clarification":     {exampleAckClarification},
		"ack-ack-queued":            {exampleAckQueued},
		"ack-ack-format":            {"[ACK] {task_id} - {status}\nUnderstanding: {1-line summary of what agent will do}"},
		"ack-json-received":         {exampleJSONReceived},
		"ack-json-clarification":    {exampleJSONNeedsClarification},
		"ack-json-confirmed":        {exampleJSONConfirmed},
		"ack-json-error":            {exampleJSONError},
		"ack-json-checkpoint":       {exampleJSONCheckpoint},
		"ack-json-assignment":       {exampleJSONAssignment},
		"ack-json-task-clarif":      {exampleJSONClarification},
		"ack-ack-required":          {ackRequired},
		"op-response":               {opResponse},
		"op-content":                {opContent},
		"op-example-1":              {opExample1},
		"op-example-4":              {opExample4},
		"teach":                     {ack.Teach("GH-42")},
		"correction":                {correction},
		"wrong-id":                  {wrongID},
		"delegation":                {delegation},
		"lenient-markdown":          {"Sure!\n\n**[ACK]** T-3 – received\n**Understanding:** fix it\n\nStarting now."},
		"lenient-questions":         {"> `[ack] 03-01:task-3 — CLARIFICATION NEEDED`\n**Questions:**\n\n1. a?\n\n2) b?\n\nThanks"},
		"lenient-inline":            {"- ACK: T-3. REJECTED (no Rust toolchain)"},
		"lenient-continuation":      {"[ACK] T-3 - RECEIVED\nUnderstanding:\n  fix the parser\n  and its tests\n"},
		"broken-no-id":              {"[ACK] - RECEIVED"},
		"broken-status":             {"[ACK] T-3 - ACCEPTED"},
		"broken-no-status":          {"[ACK] T-3"},
		"broken-json":               {"```json\n{\"type\": \"task-acknowledgment\", \"task_id\": \"T-3\", \"status\": \"received\"\n```"},
		"broken-outer-json":         {`{from: agent, "content": {"type": "acknowledgment", "message": "ok"}}`},
		"two-acks":                  {"[ACK] T-3 - QUEUED\nNote: busy\n[ACK] T-4 - RECEIVED"},
		"exec-output":               {execOutput},
		"prose":                     {"Working on it — will report back {soon}."},
		"crlf":                      {"[ACK] T-3 - RECEIVED\r\nUnderstanding: x\r\n"},
		"braces":                    {strings.Repeat(`{"a":`, 50) + `{"type":"task-complete"`},
		"ack-json-error-resource":   {errorForm(ack.ResourceUnavailable)},
		"ack-json-error-capability": {errorForm(ack.CapabilityMismatch)},
		"ack-json-error-network":    {errorForm(ack.NetworkError)},
		"ack-json-error-invalid":    {errorForm(ack.InvalidTaskFormat)},
		"ack-json-error-shutdown":   {errorForm(ack.AgentShuttingDown)},
		"complete-status":           {"I wrote the fix.\n\nStatus: complete"},
		"complete-words":            {"Everything is in place.\nTASK COMPLETE"},
		"complete-bracket":          {"[COMPLETE] T-3 - the fix is in file.txt"},
		"complete-markdown":         {"## Result\n\n**Status:** Done — file.txt holds the fix.\n**Task:** `C-4`"},
		"complete-executor-yaml":    {"```yaml\nexecutor_output:\n  status: \"failure\"\n  error: \"Cannot find module 'uuid'\"\n```"},
		"blocked-reason":            {"I could not finish.\n\nStatus: blocked\nReason: the staging password is not set"},
		"blocked-line":              {"Looked into it.\nBLOCKED: no network access to the registry"},
		"impossible-line":           {"IMPOSSIBLE: the API was removed"},
		"complete-options":          {"Report status: success | failure | blocked"},
		"complete-checkpoint":       {"Checkpoint 1\nStatus: completed\nSummary: tests written"},
		"complete-retry-context":    {"<retry_context attempt=\"2\" max_attempts=\"12\">\n  BLOCKED: old\n</retry_context>\nStatus: done"},
		"ack-then-complete":         {"[ACK] T-3 - RECEIVED\nUnderstanding: fix it\n\nDone.\n\nTask: T-3\nStatus: blocked\nReason: no key"},
	}

	parseJSON := map[string][]any{
		"ack-received":          {"task-acknowledgment", []byte(exampleJSONReceived)},
		"ack-clarification":     {"task-acknowledgment", []byte(exampleJSONNeedsClarification)},
		"ack-confirmed":         {"", []byte(exampleJSONConfirmed)},
		"ack-error":             {"task-acknowledgment-error", []byte(exampleJSONError)},
		"ack-checkpoint":        {"checkpoint-ack", []byte(exampleJSONCheckpoint)},
		"ack-assignment":        {"", []byte(exampleJSONAssignment)},
		"ack-task-clarif":       {"", []byte(exampleJSONClarification)},
		"op-content":            {"acknowledgment", []byte(opContent)},
		"op-example-1":          {"", []byte(opExample1)},
		"op-example-4":          {"acknowledgment", []byte(opExample4)},
		"op-response":           {"", []byte(opResponse)},
		"002-task-complete":     {"task-complete", []byte(`{"task_id": "03-01:task-2", "status": "failure", "files_modified": ["src/domain/PlannerId.ts"], "verification": {"command": "npm test -- PlannerId", "exit_code": 1, "output_summary": "1 passed, 2 failed"}, "error": "Cannot find module 'uuid'"}`)},
		"missing-task-id":       {"task-acknowledgment", []byte(`{"status": "received"}`)},
		"type-mismatch":         {"task-complete", []byte(exampleJSONConfirmed)},
		"contradiction":         {"acknowledgment", []byte(`{"message": "ok", "ready": false}`)},
		"retry-fraction":        {"task-acknowledgment-error", []byte(`{"task_id": "T-3", "error_code": "network-error", "retry_after_minutes": 0.5}`)},
		"not-an-object":         {"", []byte(`[1, 2, 3]`)},
		"error-resource":        {"", []byte(errorForm(ack.ResourceUnavailable))},
		"error-capability":      {"", []byte(errorForm(ack.CapabilityMismatch))},
		"error-network":         {"", []byte(errorForm(ack.NetworkError))},
		"error-invalid-format":  {"", []byte(errorForm(ack.InvalidTaskFormat))},
		"error-shutting-down":   {"", []byte(errorForm(ack.AgentShuttingDown))},
		"checkpoint-float":      {"checkpoint-ack", []byte(`{"task_id": "T-3", "checkpoint": 2.0, "next_checkpoint": 3}`)},
		"ack-trailing-dot-id":   {"task-acknowledgment", []byte(`{"task_id": "T-3.", "status": "received"}`)},
		"ack-uppercase-type":    {"", []byte(`{"type": "Task_Acknowledgment", "task_id": "T-3", "status": "QUEUED", "notes": "after T-2"}`)},
		"operation-ready-only":  {"acknowledgment", []byte(`{"ready": true}`)},
		"operation-cancel-note": {"acknowledgment", []byte(`{"message": "cancel", "ready": false, "notes": "ok with me"}`)},
		"complete-claim":        {"task-complete", []byte(`{"task_id": "T-3", "summary": "wrote it"}`)},
		"complete-no-task-id":   {"task-complete", []byte(`{"status": "done"}`)},
		"complete-blocked":      {"", []byte(`{"type": "task-complete", "task_id": "T-3", "status": "blocked", "reason": "no key", "blocked_by": "x"}`)},
	}

	operation := map[string][]any{
		"op-ok":           {"ok"},
		"op-OK":           {"OK"},
		"op-ready":        {"ready"},
		"op-wait":         {"wait"},
		"op-not-ready":    {"not ready"},
		"op-cancel":       {"cancel"},
		"op-abort":        {"abort"},
		"op-other":        {"Other"},
		"op-notes":        {"Finished saving current work, ready for operation"},
		"op-need-time":    {"Need 30 more seconds to save state"},
		"op-json":         {opContent},
		"op-response":     {opResponse},
		"lenient-ok":      {"ok, ready to go!"},
		"lenient-bold":    {"**ok**"},
		"token":           {"token"},
		"look":            {"look"},
		"cannot-wait":     {"I cannot wait"},
		"not-ok":          {"not ok"},
		"question":        {"Is it ok if I finish first?"},
		"ok-but-wait":     {"ok, but wait 30s"},
		"almost-ready":    {"almost ready"},
		"dont-cancel":     {"don't cancel"},
		"curly-apostroph": {"I can’t wait"},
		"json-not-ready":  {`{"type": "acknowledgment", "message": "not ready", "ready": false}`},
	}

	classify := map[string][]any{
		"ack-task-heading":   {"## Task: GH-42-feature\nAdd the feature."},
		"ack-assignment":     {exampleJSONAssignment},
		"ack-clarification":  {exampleJSONClarification},
		"ack-ack-request":    {ack.Teach("GH-42")},
		"ack-question":       {"Should JWT tokens expire after 24h or 7 days?"},
		"ack-ack-received":   {exampleAckReceived},
		"ack-checklist":      {"- [ ] Task delegation sent to {agent}\n- [ ] ACK received within 5 minutes"},
		"delegation":         {delegation},
		"acceptance":         {"Add retries.\n\n### Acceptance Criteria\n1. retries are logged"},
		"git":                {"Add retries.\n\n**Branch:**\nfeature/retries"},
		"verify":             {"## Verification Commands\n```\ngo test ./...\n```"},
		"output-format":      {"Summarise the logs.\nOutput format: markdown table"},
		"placeholders":       {"Reply with {summary} and fill in {{owner}}."},
		"feedback":           {"Nice work on T-3. PR: looks good to me."},
		"status-inquiry":     {"How is T-3 going? What are the acceptance criteria you are still missing?"},
		"code":               {"```go\nfunc f() { m := map[string]int{} }\n```\n`fmt.Printf(\"{x}\")` ${HOME}"},
		"task-word":          {"Task: implement login — is anyone on it?"},
		"004-example-input":  {"Fix the authentication timeout bug in the login flow.\n\nConstraints:\n- Don't modify the session storage mechanism\n- Preserve backward compatibility with existing tokens\n\nNon-goals:\n- Don't refactor the auth module\n- Don't add new dependencies"},
		"unterminated-fence": {"```\nnot closed"},
	}

	completion := map[string][]any{
		"status":        {"Status: complete", "T-3"},
		"blocked":       {"Status: blocked\nReason: the key expired", "GH-42"},
		"blocked-line":  {"BLOCKED: the key expired", "03-01:task-2"},
		"bracket":       {"[COMPLETE] T-3 - done", "T-3"},
		"words":         {"TASK COMPLETE: GH-8", "fix-login"},
		"yaml":          {"executor_output:\n  status: failure\n  error: \"e\"", "T.1"},
		"options":       {"status: success | failure | blocked", "T-3"},
		"checkpoint":    {"Checkpoint 2\nStatus: completed", "T-3"},
		"another-task":  {"Task: GH-8\nStatus: complete", "GH-7"},
		"prose":         {"The task is complete, I think.", "x"},
		"markdown":      {"> **Status**: `BLOCKED`\n> **Reason:** the API key is expired", "a_b"},
		"plain-word-id": {"[DONE] refactor", "refactor"},
		"reason-before": {"Reason: no disk\nStatus: blocked", "T-3"},
		"blank-reason":  {"Status: blocked\nReason:\n  multi\n  line", "T-3"},
	}

	return map[string]map[string][]any{
		"FuzzCompletion":          completion,
		"FuzzParse":               parse,
		"FuzzParseJSON":           parseJSON,
		"FuzzParseOperationReply": operation,
		"FuzzClassify":            classify,
	}
}

// corpusFile encodes values in the "go test fuzz v1" format.
func corpusFile(values []any) string {
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, v := range values {
		switch v := v.(type) {
		case string:
			fmt.Fprintf(&b, "string(%q)\n", v)
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		default:
			panic(fmt.Sprintf("corpus value of type %T", v))
		}
	}
	return b.String()
}

func TestSeedCorpus(t *testing.T) {
	t.Parallel()
	for fuzzer, entries := range seedCorpus() {
		dir := filepath.Join("testdata", "fuzz", fuzzer)
		if *updateCorpus {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for name, values := range entries {
			path := filepath.Join(dir, "seed-"+name)
			want := corpusFile(values)
			if *updateCorpus {
				if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != want {
				t.Errorf("%s is missing or stale (go test ./ack -run TestSeedCorpus -update-corpus): %v", path, err)
			}
		}
	}
}
