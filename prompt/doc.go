// Package prompt renders what wilco writes for agents and people about a
// task: the task prompt, the <retry_context> block placed before it on every
// retry (with a <user_intervention> block for a user's fix), the REPLAN
// prompt, the escalation message, the stuck report and the success summary.
// It is pure: text in, text out.
package prompt
