package tmux

// ScriptedAgent is the path of the scripted interactive agent
// (testdata/tuiagent) TestMain built, for the package's external tests.
func ScriptedAgent() string { return tuiAgent }
