package intake

import (
	"strconv"
	"strings"

	"wilco/forge"
	"wilco/wire"
)

// Marker starts every comment wilco writes in an issue's thread (an HTML
// comment: the forge shows nothing of it); a comment that starts with it
// is wilco's own, never a command.
const Marker = "<!-- wilco -->"

// Submission is the task an issue asks for: its title the description's
// first line, its body the rest, its task-list items the acceptance
// criteria.
func Submission(i forge.Issue) wire.SubmitTask {
	title := strings.TrimSpace(i.Title)
	body := strings.TrimSpace(strings.ReplaceAll(i.Body, "\r\n", "\n"))
	var rest []string
	var criteria []string
	for _, line := range strings.Split(body, "\n") {
		if c, ok := checklistItem(line); ok {
			if c != "" {
				criteria = append(criteria, c)
			}
			continue
		}
		rest = append(rest, line)
	}
	desc := title
	if r := strings.TrimSpace(strings.Join(rest, "\n")); r != "" {
		desc += "\n\n" + r
	}
	if desc == "" {
		desc = "Issue #" + strconv.Itoa(i.Number)
	}
	return wire.SubmitTask{Description: desc, AcceptanceCriteria: criteria}
}

// checklistItem reads a task-list item: "- [ ] text", "* [x] text",
// "+ [ ] text", indented or not. ok is false for any other line.
func checklistItem(line string) (string, bool) {
	s := strings.TrimSpace(line)
	if len(s) < 2 || !strings.ContainsRune("-*+", rune(s[0])) || s[1] != ' ' {
		return "", false
	}
	s = strings.TrimLeft(s[1:], " ")
	if len(s) < 3 || s[0] != '[' || s[2] != ']' || !strings.ContainsRune(" xX", rune(s[1])) {
		return "", false
	}
	return strings.TrimSpace(s[3:]), true
}

// Command is what a comment asks of a task.
type Command struct {
	// Action is retry, skip, abort or fix (core's Respond actions); ""
	// for a plain reply (an answer to the agent's questions).
	Action string
	// Instruction is fix's instruction; Text a plain reply's text.
	Instruction, Text string
}

// Commands.
const commandPrefix = "/wilco"

// ParseCommand reads a comment: "/wilco retry|skip|abort" or "/wilco fix
// <instruction>" on its first non-empty line is a command (the
// instruction goes on to the end of the comment); anything else is a
// plain reply. ok is false for a "/wilco" line that names no known
// command, and for an empty comment.
func ParseCommand(body string) (Command, bool) {
	body = strings.TrimSpace(strings.ReplaceAll(body, "\r\n", "\n"))
	if body == "" {
		return Command{}, false
	}
	first, rest, _ := strings.Cut(body, "\n")
	first = strings.TrimSpace(first)
	word, args, _ := strings.Cut(first, " ")
	if !strings.EqualFold(word, commandPrefix) {
		return Command{Text: body}, true
	}
	verb, arg, _ := strings.Cut(strings.TrimSpace(args), " ")
	verb = strings.ToLower(strings.TrimSuffix(verb, ":"))
	switch verb {
	case "retry", "skip", "abort":
		return Command{Action: verb}, true
	case "fix":
		ins := strings.TrimSpace(strings.TrimSpace(arg) + "\n" + rest)
		if ins == "" {
			return Command{}, false
		}
		return Command{Action: verb, Instruction: ins}, true
	}
	return Command{}, false
}
