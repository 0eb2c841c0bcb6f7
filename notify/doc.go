// Package notify makes the attempts of wilco's notifications: it POSTs a
// notification to a webhook (wilco's JSON body signed with the hook's
// secret, or Slack's {"text": …}) or shows it on the desktop with
// notify-send, and reports how the attempt went.
//
// It decides nothing: which events become notifications, when an attempt
// is made again and when a notification has failed are the core's
// (core/notify.go). The runtime hands it core.Notify effects once the
// notification is durable; its reports go back to the core as
// core.NotificationResult commands. Attempts run in goroutines of their
// own, bounded in number and each by a timeout, so that nothing of a task
// waits on a hook.
package notify
