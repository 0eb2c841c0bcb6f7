package test

// Driving the page in a real headless Chromium (Debian's chromium
// package), with chromedp: what the browser tests share.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"wilco/test/blackbox"
)

// webScreenshots is where the browser test writes its screenshots of the
// main views: docs/screenshots keeps the current ones.
var webScreenshots = flag.String("web.screenshots", "", "write the page's screenshots into this directory (the repository keeps them in docs/screenshots)")

var (
	chromiumOnce sync.Once
	chromiumBin  string
	chromiumWhy  string
)

// chromium is the browser's program: found on the PATH, else installed
// with apt-get (Debian's chromium package) when this machine allows it.
func chromium(t testing.TB) string {
	t.Helper()
	chromiumOnce.Do(func() {
		find := func() string {
			for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
				if p, err := exec.LookPath(name); err == nil {
					return p
				}
			}
			return ""
		}
		if chromiumBin = find(); chromiumBin != "" {
			return
		}
		if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
			chromiumWhy = "chromium is not installed, and apt-get cannot install it here (not root, or no apt-get): apt-get install chromium"
			return
		}
		cmd := exec.Command("sh", "-c", "apt-get update && apt-get install -y --no-install-recommends chromium")
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if chromiumBin = find(); chromiumBin == "" {
			chromiumWhy = fmt.Sprintf("chromium is not installed and apt-get could not install it: %v\n%s", err, lastLines(string(out), 10))
		}
	})
	if chromiumBin == "" {
		t.Skip(chromiumWhy)
	}
	return chromiumBin
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// browser is one headless Chromium with one tab.
type browser struct {
	t   testing.TB
	ctx context.Context

	mu         sync.Mutex
	exceptions []string
}

// openBrowser starts a headless Chromium with a fresh profile, stopped at
// the end of the test.
func openBrowser(t testing.TB) *browser {
	t.Helper()
	bin := chromium(t)
	profile, err := os.MkdirTemp("", "wilco-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 860),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	b := &browser{t: t, ctx: ctx}
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		// Chromium may still be writing its profile for a moment.
		blackbox.Eventually(2*time.Second, 100*time.Millisecond, func() bool { return os.RemoveAll(profile) == nil })
	})
	// The viewport of the screenshots.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("start chromium (%s): %v", bin, err)
	}
	exceptions := chromedp.Events(ctx, cdpruntime.ExceptionThrown)
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			d := ev.ExceptionDetails
			text := d.Text
			if d.Exception != nil {
				text += " " + d.Exception.Description
			}
			b.mu.Lock()
			b.exceptions = append(b.exceptions, fmt.Sprintf("%s (%s:%d)", text, d.URL, d.LineNumber))
			b.mu.Unlock()
		}
	}()
	return b
}

// noExceptions fails the test if a script of the page threw.
func (b *browser) noExceptions() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.exceptions) > 0 {
		b.t.Fatalf("the page threw:\n%s", strings.Join(b.exceptions, "\n"))
	}
}

// do runs actions with a bound on their time.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\n%s", what, err, b.snapshot())
	}
}

func (b *browser) navigate(url string) {
	b.t.Helper()
	b.do("navigate to "+url, chromedp.Navigate(url))
}

// js quotes s as a JavaScript string.
func js(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// eval evaluates expr (a promise is awaited) and decodes its value into out.
func (b *browser) eval(expr string, out any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			b.t.Fatalf("evaluate %s: %v (%s)", expr, err, raw)
		}
	}
}

func (b *browser) str(expr string) string {
	b.t.Helper()
	var s string
	b.eval("String("+expr+")", &s)
	return s
}

func (b *browser) truth(expr string) bool {
	b.t.Helper()
	var ok bool
	b.eval("!!("+expr+")", &ok)
	return ok
}

// waitFor polls a JavaScript condition until it holds.
func (b *browser) waitFor(what, cond string, timeout time.Duration) {
	b.t.Helper()
	if !blackbox.Eventually(timeout, 50*time.Millisecond, func() bool { return b.truth(cond) }) {
		b.t.Fatalf("timed out after %s waiting for %s (%s)\n%s", timeout, what, cond, b.snapshot())
	}
}

// snapshot is what the page shows, for a failure's message.
func (b *browser) snapshot() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText.slice(0, 3000)`))
	if err != nil {
		return "(the page cannot be read: " + err.Error() + ")"
	}
	return "the page:\n" + text
}

// click clicks the element with the mouse, as a user does. A live
// update may draw the element again between finding it and clicking it:
// then it is found again.
func (b *browser) click(sel string) {
	b.t.Helper()
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
		cancel()
		if err == nil {
			return
		}
		if try == 5 || !strings.Contains(err.Error(), "Could not find node") && !strings.Contains(err.Error(), "not attached") {
			b.t.Fatalf("click %s: %v\n%s", sel, err, b.snapshot())
		}
	}
}

// typeIn types text into an input or textarea, key by key.
func (b *browser) typeIn(sel, text string) {
	b.t.Helper()
	b.setValue(sel, "")
	b.do("type into "+sel, chromedp.SendKeys(chromedp.CSS(sel), text))
}

// setValue sets a field's value (a select's choice) as a script would.
func (b *browser) setValue(sel, value string) {
	b.t.Helper()
	var ok bool
	b.eval(`((el) => { if (!el) return false; el.value = `+js(value)+`; el.dispatchEvent(new Event('input', {bubbles: true}));
		el.dispatchEvent(new Event('change', {bubbles: true})); return el.value === `+js(value)+`; })(document.querySelector(`+js(sel)+`))`, &ok)
	if !ok {
		b.t.Fatalf("cannot set %s to %q\n%s", sel, value, b.snapshot())
	}
}

// go changes the page's view (the URL's fragment): no reload.
func (b *browser) goTo(hash string) {
	b.t.Helper()
	b.eval("location.hash = "+js(hash), nil)
}

// screenshot writes the viewport as NAME.png into -web.screenshots.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	if *webScreenshots == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	// The page's fonts are in before it is taken.
	b.waitFor("the fonts", "document.fonts.status === 'loaded'", 10*time.Second)
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(*webScreenshots, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*webScreenshots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// latency is what the page measured of the event stream (live.js).
type latency struct {
	Received       []float64 `json:"received"`
	Rendered       []float64 `json:"rendered"`
	MedianReceived *float64  `json:"median_received"`
	MedianRendered *float64  `json:"median_rendered"`
}

func (b *browser) latency() latency {
	b.t.Helper()
	var l latency
	b.eval("window.wilco.latency()", &l)
	return l
}

func ms(p *float64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatFloat(*p, 'f', 0, 64) + " ms"
}
