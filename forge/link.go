package forge

import "strings"

// Links reads an HTTP Link header (RFC 8288), as both forges paginate
// with it: `<https://…?page=2>; rel="next", <…>; rel="last"`, into the
// address of each relation. Malformed parts are skipped.
func Links(h string) map[string]string {
	out := map[string]string{}
	for h != "" {
		h = strings.TrimLeft(h, " \t,")
		if !strings.HasPrefix(h, "<") {
			// Skip to the next link.
			i := strings.Index(h, ",")
			if i < 0 {
				break
			}
			h = h[i+1:]
			continue
		}
		end := strings.IndexByte(h, '>')
		if end < 0 {
			break
		}
		target := h[1:end]
		h = h[end+1:]
		// The parameters up to the next link (a comma outside quotes).
		params, rest := cutParams(h)
		h = rest
		if strings.ContainsAny(target, "<> \t") {
			continue // no URI holds these
		}
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(k), "rel") {
				continue
			}
			v = strings.Trim(strings.TrimSpace(v), `"`)
			for _, rel := range strings.Fields(v) {
				rel = strings.ToLower(rel)
				if _, seen := out[rel]; !seen {
					out[rel] = target
				}
			}
		}
	}
	return out
}

// cutParams splits h at the first comma outside quotes.
func cutParams(h string) (params, rest string) {
	quoted := false
	for i := 0; i < len(h); i++ {
		switch h[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				return h[:i], h[i+1:]
			}
		}
	}
	return h, ""
}
