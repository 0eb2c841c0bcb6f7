package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var assets embed.FS

// ContentSecurityPolicy is the page's policy: its own scripts and styles
// only, no inline script or style, no frame, requests to wilco only. Even
// if some text from an agent were ever taken for HTML, no script in it
// would run.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// asset is one embedded file, ready to serve.
type asset struct {
	name, contentType, etag string
	body, gzipped           []byte
}

// Page serves the page's files from memory.
type Page struct {
	files map[string]*asset
}

// New reads the embedded files and compresses them once.
func New() (*Page, error) {
	p := &Page{files: map[string]*asset{}}
	err := fs.WalkDir(assets, "assets", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := assets.ReadFile(name)
		if err != nil {
			return err
		}
		ct := mime.TypeByExtension(path.Ext(name))
		switch path.Ext(name) {
		case ".js":
			ct = "text/javascript; charset=utf-8"
		case ".svg":
			ct = "image/svg+xml"
		}
		if ct == "" {
			return fmt.Errorf("web: no content type for %s", name)
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		_, _ = zw.Write(body)
		if err := zw.Close(); err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		base := strings.TrimPrefix(name, "assets/")
		p.files[base] = &asset{name: base, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, body: body, gzipped: gz.Bytes()}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if p.files["index.html"] == nil {
		return nil, fmt.Errorf("web: index.html is not embedded")
	}
	return p, nil
}

// Names lists the files the page serves under /ui/.
func (p *Page) Names() []string {
	var out []string
	for n := range p.files {
		if n != "index.html" {
			out = append(out, n)
		}
	}
	return out
}

// ServeFile writes the page's file name ("index.html" for the page
// itself) and reports whether it has one by that name. It is what the
// server's page routes (GET / and GET /ui/{file}) call.
func (p *Page) ServeFile(w http.ResponseWriter, r *http.Request, name string) bool {
	if p.files[name] == nil {
		return false
	}
	p.serve(w, r, name)
	return true
}

func (p *Page) serve(w http.ResponseWriter, r *http.Request, name string) {
	a := p.files[name]
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	// Revalidated every time (a new wilco serves new files under the same
	// names); unchanged files cost a 304.
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	h.Add("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = a.gzipped
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

func acceptsGzip(r *http.Request) bool {
	for part := range strings.SplitSeq(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.TrimSpace(q) != "q=0" {
			return true
		}
	}
	return false
}
