package server

import "net/http"

// PageFiles serves the page's files (package web).
type PageFiles interface {
	// ServeFile writes the file name ("index.html" for the page itself)
	// and reports whether there is one by that name.
	ServeFile(w http.ResponseWriter, r *http.Request, name string) bool
}

// pageRoutes are the page's routes. They need no token: the files hold no
// data, and everything the page shows comes from the API, which needs the
// login. A server without Options.Page answers them 404.
func (s *Server) pageRoutes() []Route {
	return []Route{
		{Method: "GET", Path: "/{$}", Auth: Public, Summary: "The page: wilco in a browser. Log in with the one-time link wilco serve prints (wilco web prints another) or the admin token.",
			Handler:   func(w http.ResponseWriter, r *http.Request) error { return s.pageFile(w, r, "index.html") },
			Responses: map[int]any{200: "text/html"}},
		{Method: "GET", Path: "/ui/{file}", Auth: Public, Summary: "The page's files: its scripts (ES modules), styles and icon, embedded in wilco.",
			Examples: map[string]string{"file": "app.js"},
			Handler: func(w http.ResponseWriter, r *http.Request) error {
				name := r.PathValue("file")
				if name == "index.html" {
					return notFoundf("the page is at /")
				}
				return s.pageFile(w, r, name)
			},
			Responses: map[int]any{200: "text/javascript|text/css|image/svg+xml"}},
	}
}

func (s *Server) pageFile(w http.ResponseWriter, r *http.Request, name string) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	if s.opts.Page == nil {
		return notFoundf("this server has no page")
	}
	if !s.opts.Page.ServeFile(w, r, name) {
		return notFoundf("the page has no file %q", name)
	}
	return nil
}
