package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// No script of the page ever parses a string as HTML or code: text from
// agents (transcripts, messages, diffs) can only ever be text. A change
// that reaches for innerHTML fails here.
func TestThePageNeverParsesHTMLFromStrings(t *testing.T) {
	t.Parallel()
	forbidden := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\s*\(|new\s+Function\b|srcdoc|DOMParser|createContextualFragment|setTimeout\(\s*['"\x60]|setAttribute\(\s*['"]on|javascript:`)
	scripts := 0
	err := fs.WalkDir(assets, "assets", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".js") {
			return err
		}
		scripts++
		src, err := assets.ReadFile(name)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, "//") {
				continue
			}
			if m := forbidden.FindString(line); m != "" {
				t.Errorf("%s:%d uses %s: build elements with h() and text nodes", name, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scripts < 5 {
		t.Fatalf("found %d scripts", scripts)
	}
}

// Every module a script imports is one the page serves, and the page
// loads its entry point and styles from /ui/.
func TestEveryImportedModuleIsEmbedded(t *testing.T) {
	t.Parallel()
	p, err := New()
	if err != nil {
		t.Fatal(err)
	}
	imp := regexp.MustCompile(`(?m)^import .* from '\./([a-z]+\.js)';$`)
	for _, name := range p.Names() {
		if !strings.HasSuffix(name, ".js") {
			continue
		}
		for _, m := range imp.FindAllStringSubmatch(string(p.files[name].body), -1) {
			if p.files[m[1]] == nil {
				t.Errorf("%s imports %s, which is not embedded", name, m[1])
			}
		}
	}
	index := string(p.files["index.html"].body)
	for _, want := range []string{`src="/ui/app.js"`, `href="/ui/style.css"`, `type="module"`} {
		if !strings.Contains(index, want) {
			t.Errorf("index.html lacks %s", want)
		}
	}
	if strings.Contains(index, "<script>") || strings.Contains(index, "style=") {
		t.Error("index.html has an inline script or style: the Content-Security-Policy forbids them")
	}
}

// A file is served with its type, the page's security headers and an
// ETag; gzipped when the browser takes it; 304 when unchanged.
func TestFilesAreServedCompressedWithSecurityHeadersAndETags(t *testing.T) {
	t.Parallel()
	p, err := New()
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string, header ...string) *http.Response {
		r := httptest.NewRequest("GET", "/ui/"+name, nil)
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		if !p.ServeFile(w, r, name) {
			t.Fatalf("no file %s", name)
		}
		return w.Result()
	}
	plain := get("app.js")
	body, _ := io.ReadAll(plain.Body)
	if plain.StatusCode != 200 || plain.Header.Get("Content-Type") != "text/javascript; charset=utf-8" || !bytes.Equal(body, p.files["app.js"].body) {
		t.Fatalf("app.js: %d %s", plain.StatusCode, plain.Header.Get("Content-Type"))
	}
	for _, h := range []string{"Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
		if plain.Header.Get(h) == "" {
			t.Errorf("no %s", h)
		}
	}
	if csp := plain.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q", csp)
	}
	zipped := get("app.js", "Accept-Encoding", "gzip, deflate, br")
	if zipped.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("not gzipped: %v", zipped.Header)
	}
	zr, err := gzip.NewReader(zipped.Body)
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	if !bytes.Equal(unzipped, body) || len(p.files["app.js"].gzipped) >= len(body) {
		t.Fatalf("gzip: %d bytes for %d", len(p.files["app.js"].gzipped), len(body))
	}
	if again := get("app.js", "If-None-Match", plain.Header.Get("ETag")); again.StatusCode != http.StatusNotModified {
		t.Fatalf("unchanged: %d", again.StatusCode)
	}
	if p.ServeFile(httptest.NewRecorder(), httptest.NewRequest("GET", "/ui/nope.js", nil), "nope.js") {
		t.Fatal("served a file that does not exist")
	}
	if ct := get("style.css").Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/css") {
		t.Fatalf("style.css: %s", ct)
	}
	if ct := get("index.html").Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("index.html: %s", ct)
	}
}
