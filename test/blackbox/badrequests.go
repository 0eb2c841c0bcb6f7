package blackbox

// rotate gives an agent a new token.
func (in *Instance) Rotate(name string) string {
	in.T.Helper()
	var out struct{ Token string }
	in.Must(200, in.Call("POST", "/v1/agents/"+name+"/token", AdminToken, nil), &out)
	return out.Token
}
