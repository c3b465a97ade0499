package ui_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/higmem/higmem"
)

// ChromiumEnv names the variable .ci/run sets to the Chromium binary.
// With it set, the browser tests cannot skip: a missing browser fails
// them. Without it they look for chromium on PATH and skip when there is
// none.
const chromiumEnv = "HIGMEM_TEST_CHROMIUM"

// ShotsEnv names a directory for the screenshots the browser tests take
// (default: higmem-ui-screenshots in the temp dir, kept for looking at and
// overwritten by the next run; each path is logged). docs/ui holds a copy.
const shotsEnv = "HIGMEM_UI_SCREENSHOTS"

func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(chromiumEnv); p != "" {
		path, err := exec.LookPath(p)
		if err != nil {
			t.Fatalf("%s=%s but it cannot be run: %v (install the Debian packages chromium and chromium-driver)", chromiumEnv, p, err)
		}
		return path
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skipf("no Chromium on PATH (and %s not set): browser tests skip; apt-get install chromium chromium-driver", chromiumEnv)
	return ""
}

// browser is one headless Chromium for a test, with a tab.
type browser struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots string
}

var shotsOnce sync.Once
var shotsDir string

func newBrowser(t *testing.T, base string) *browser {
	path := chromium(t)
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1000, 760))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", path, err)
	}
	shotsOnce.Do(func() {
		shotsDir = os.Getenv(shotsEnv)
		if shotsDir == "" {
			// One directory, overwritten by each run (not one more per run).
			shotsDir = filepath.Join(os.TempDir(), "higmem-ui-screenshots")
		}
		_ = os.MkdirAll(shotsDir, 0o755)
	})
	return &browser{t: t, ctx: ctx, base: base, shots: shotsDir}
}

// do runs actions with a time limit, failing the test on an error.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// open navigates to a path of the server.
func (b *browser) open(path string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.base+path))
}

// click clicks the element and waits for the page it leads to.
func (b *browser) click(sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		b.t.Fatalf("click %s: %v", sel, err)
	}
}

// submit types into the (empty) input and submits its form with Enter.
func (b *browser) submit(input, text string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.RunResponse(ctx, chromedp.SendKeys(chromedp.CSS(input), text+kb.Enter)); err != nil {
		b.t.Fatalf("submit %s: %v", input, err)
	}
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	return eval[string](b, fmt.Sprintf(`(document.querySelector(%q) || {innerText: ""}).innerText`, sel))
}

func (b *browser) count(sel string) int {
	b.t.Helper()
	return eval[int](b, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
}

// shot saves a screenshot of the viewport as name.png and logs its path.
func (b *browser) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(b.shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
}

func (b *browser) cookies() []*network.Cookie {
	b.t.Helper()
	res, err := chromedp.Run(b.ctx, chromedp.Action[network.GetCookiesResult](func(ctx context.Context, t *chromedp.Target) (network.GetCookiesResult, error) {
		return cdp.Call(ctx, t, network.GetCookies, network.GetCookiesParams{})
	}))
	if err != nil {
		b.t.Fatal(err)
	}
	return res.Cookies
}

// TestBrowser drives the pages in headless Chromium on a loopback server
// holding the example conversation (built with the scripted model, so that
// Ask records every retrieval stage and LLM calls).
func TestBrowser(t *testing.T) {
	e := newEnv(t, envOptions{llm: true})
	ctx := context.Background()
	hostile := higmem.Space{UserID: "priya", AgentID: "hostile"}
	if _, err := e.mem.Add(ctx, hostile, []higmem.TurnInput{
		{ID: "h1", SessionID: "1", Speaker: `<img src=x onerror="window.pwned=1">`, Text: `<script>window.pwned=2</script><b>bold?</b> my pottery class`, Time: "2024-03-02T10:00:00Z"},
	}); err != nil {
		t.Fatal(err)
	}
	// A space whose facts change, some read by the rules, some only by
	// the (scripted) model.
	moves := higmem.Space{UserID: "priya", AgentID: "moves"}
	if _, err := e.mem.Add(ctx, moves, []higmem.TurnInput{
		{ID: "m1", SessionID: "1", Speaker: "Jo", Text: "I live in Leeds and work as a nurse.", Time: "2023-01-05T08:00:00Z"},
		{ID: "m2", SessionID: "1", Speaker: "Jo", Text: "My boyfriend Raj cooks every Sunday.", Time: "2023-01-05T08:01:00Z"},
		{ID: "m3", SessionID: "2", Speaker: "Jo", Text: "The view from my new flat in York is lovely.", Time: "2023-04-05T08:00:00Z"},
		{ID: "m4", SessionID: "2", Speaker: "Jo", Text: "Ran into my ex Raj at the station, so awkward.", Time: "2023-04-05T08:02:00Z"},
	}); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, e.ts.URL)

	t.Run("wrong key refused", func(t *testing.T) {
		b.t = t
		b.open(demoPath("space"))
		if got := b.text("h1"); got != "Log in" {
			t.Fatalf("a page without login shows %q, want the login form", got)
		}
		b.submit("#key", "hgm_not-a-key")
		if msg := b.text(".error"); !strings.Contains(msg, "unknown API key") {
			t.Errorf("wrong key: error %q", msg)
		}
		for _, c := range b.cookies() {
			if c.Name == "higmem_session" {
				t.Errorf("wrong key got a session cookie")
			}
		}
		b.shot("login-refused")
	})

	t.Run("login", func(t *testing.T) {
		b.t = t
		b.submit("#key", e.keys["admin"])
		if got := b.text("h1"); got != "Timeline" {
			t.Fatalf("after login: %q, want the page asked for (Timeline)", got)
		}
		var sess *network.Cookie
		for _, c := range b.cookies() {
			if c.Name == "higmem_session" {
				sess = c
			}
		}
		if sess == nil || !sess.HTTPOnly || sess.SameSite != network.CookieSameSiteStrict {
			t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict", sess)
		}
		if eval[string](b, "document.cookie") != "" {
			t.Errorf("script can read cookies: %q", eval[string](b, "document.cookie"))
		}
		b.open("/ui/")
		if b.count("table a[href*='user=priya']") == 0 {
			t.Errorf("spaces page lists no priya space")
		}
		b.shot("spaces")
	})

	evs, err := e.mem.Events(ctx, demo)
	if err != nil || len(evs) == 0 {
		t.Fatalf("demo events: %d %v", len(evs), err)
	}

	t.Run("timeline shows events", func(t *testing.T) {
		b.t = t
		b.open(demoPath("space"))
		if n := b.count("svg a.ev rect.event"); n != len(evs) {
			t.Errorf("timeline draws %d event bars, want %d", n, len(evs))
		}
		if n := b.count("table.events tbody tr"); n != len(evs) {
			t.Errorf("timeline lists %d events, want %d", n, len(evs))
		}
		if n := b.count("svg rect.session"); n != 4 {
			t.Errorf("timeline draws %d sessions, want 4", n)
		}
		if got := b.text(".counts"); !strings.Contains(got, "34 turns") {
			t.Errorf("counts %q", got)
		}
		b.shot("timeline")
	})

	t.Run("open event shows turns", func(t *testing.T) {
		b.t = t
		b.click("table.events tbody tr a")
		title := b.text("h1")
		var ev *higmem.EventView
		for i := range evs {
			if evs[i].Event.Title == title {
				ev = &evs[i]
			}
		}
		if ev == nil {
			t.Fatalf("event page title %q is no event's", title)
		}
		if n := b.count("ol.turns li.turn"); n != len(ev.Turns) {
			t.Errorf("event page shows %d turns, want %d", n, len(ev.Turns))
		}
		for _, tu := range ev.Turns {
			if !strings.Contains(b.text("ol.turns"), tu.Text) {
				t.Errorf("event page lacks turn %s", tu.ID)
			}
		}
		b.shot("event")
	})

	t.Run("ask shows evidence and stages", func(t *testing.T) {
		b.t = t
		b.open(demoPath("ask"))
		b.submit("#q", "What is the name of Priya's dog and what breed is he?")
		if n := b.count("ol.evidence li"); n == 0 {
			t.Fatalf("no evidence shown")
		}
		if !strings.Contains(b.text("ol.evidence"), "S2:1") {
			t.Errorf("evidence lacks S2:1 (Biscuit the greyhound):\n%s", b.text("ol.evidence"))
		}
		stages := eval[[]string](b, `[...document.querySelectorAll('.stages .name')].map(e => e.innerText)`)
		for _, want := range []string{"search", "events", "shown", "selected", "final"} {
			if !slices.Contains(stages, want) {
				t.Errorf("stage picture %v lacks %s", stages, want)
			}
		}
		if n := b.count(".stage.notrun"); n != 0 {
			t.Errorf("%d stages not run in default mode", n)
		}
		if n := b.count("table.trace tr.kept"); n != b.count("ol.evidence li") {
			t.Errorf("trace marks %d turns kept, evidence has %d", n, b.count("ol.evidence li"))
		}
		if n := b.count("table.calls tbody tr"); n == 0 {
			t.Errorf("no LLM calls listed")
		}
		b.shot("ask")
		eval[bool](b, `document.getElementById('tr-h').scrollIntoView({block: 'start'}), true`)
		b.shot("ask-trace")
	})

	t.Run("profiles link values to their evidence", func(t *testing.T) {
		b.t = t
		b.open(demoPath("space"))
		b.click("nav a[href*='/ui/profiles?']")
		if got := b.text("h1"); got != "Profiles" {
			t.Fatalf("the nav's Profiles link opens %q", got)
		}
		people := eval[[]string](b, `[...document.querySelectorAll('table tbody tr td:first-child a')].map(e => e.innerText)`)
		for _, want := range []string{"Priya", "Tom", "Anna", "Jonas"} {
			if !slices.Contains(people, want) {
				t.Errorf("profiles list %v lacks %s", people, want)
			}
		}
		b.shot("profiles")
		b.click("table tbody tr td:first-child a[href*='entity=Tom']")
		if got := b.text("h1"); got != "Tom" {
			t.Fatalf("Tom's link opens %q", got)
		}
		row := b.text("section[aria-label='employer'] tbody tr")
		for _, want := range []string{"Windrose", "current", "llm:default:", "rules", "turn S3:3", "I got the Windrose job"} {
			if !strings.Contains(row, want) {
				t.Errorf("Tom's employer row %q lacks %q", row, want)
			}
		}
		b.shot("profile")
		b.click("section[aria-label='employer'] a[href*='/ui/event?']")
		if n := b.count("ol.turns li[id='turn-S3:3']"); n != 1 {
			t.Errorf("the evidence's event link opens %q without turn S3:3", b.text("h1"))
		}
		b.open(demoPath("profile", "entity", "Tom"))
		b.click("section[aria-label='employer'] a[href*='/ui/turn?']")
		if got := b.text("h1"); got != "Turn S3:3" {
			t.Errorf("the evidence link opens %q, want Turn S3:3", got)
		}
		// Values that changed: closed, with the turn (and the producer)
		// that closed them.
		b.open("/ui/profile?user=priya&agent=moves&entity=Jo")
		home := b.text("section[aria-label='home'] tbody")
		for _, want := range []string{"Leeds", "closed by turn m3", "York", "current", "llm:default:"} {
			if !strings.Contains(home, want) {
				t.Errorf("Jo's home %q lacks %q", home, want)
			}
		}
		if got := b.text("section[aria-label='partner'] tbody tr"); !strings.Contains(got, "closed by turn m4") {
			t.Errorf("Jo's partner row %q: want Raj closed by m4", got)
		}
		b.shot("profile-history")
		// As of a day before the job: no employer.
		b.open(demoPath("profile", "entity", "Tom"))
		b.submit("#as-of", "2024-05-01")
		if n := b.count("section[aria-label='employer']"); n != 0 {
			t.Errorf("as of 1 May 2024 Tom's page still shows an employer")
		}
	})

	t.Run("delete removes a turn", func(t *testing.T) {
		b.t = t
		b.open(demoPath("turn", "id", "S3:8"))
		if !strings.Contains(b.text(".effects"), "Event") {
			t.Errorf("the confirmation does not say which events change: %q", b.text(".effects"))
		}
		b.shot("delete-confirm")
		b.click("#delete")
		if got := b.text(".notice"); !strings.Contains(got, "S3:8 was deleted") {
			t.Errorf("after delete: notice %q", got)
		}
		if got := b.text(".counts"); !strings.Contains(got, "33 turns") {
			t.Errorf("after delete the counts say %q, want 33 turns", got)
		}
		b.open(demoPath("turns", "session", "3"))
		if strings.Contains(b.text("main"), "turn S3:8") {
			t.Errorf("the session still lists S3:8")
		}
		if _, err := e.mem.Get(ctx, demo, "S3:8"); err == nil {
			t.Errorf("S3:8 is still stored")
		}
	})

	t.Run("injection renders as text", func(t *testing.T) {
		b.t = t
		for _, p := range []string{"/ui/turns?user=priya&agent=hostile", "/ui/space?user=priya&agent=hostile", "/ui/turn?user=priya&agent=hostile&id=h1",
			"/ui/profiles?user=priya&agent=hostile"} {
			b.open(p)
			if n := b.count("main script, main img, main b"); n != 0 {
				t.Errorf("%s: %d injected elements in the page", p, n)
			}
			if v := eval[bool](b, "window.pwned === undefined"); !v {
				t.Errorf("%s: the injected script ran", p)
			}
		}
		b.open("/ui/turns?user=priya&agent=hostile")
		main := b.text("main")
		for _, want := range []string{`<script>window.pwned=2</script><b>bold?</b>`, `<img src=x onerror="window.pwned=1">`} {
			if !strings.Contains(main, want) {
				t.Errorf("the page does not show %q as text:\n%s", want, main)
			}
		}
		b.shot("injection")
	})

	t.Run("keyboard", func(t *testing.T) {
		b.t = t
		b.open(demoPath("space"))
		b.do("tab", chromedp.KeyEvent(kb.Tab))
		if got := eval[string](b, "document.activeElement.innerText"); got != "Skip to content" {
			t.Errorf("first Tab focuses %q, want the skip link", got)
		}
		if eval[string](b, "getComputedStyle(document.activeElement).outlineStyle") == "none" {
			t.Errorf("the focused link has no outline")
		}
		b.do("enter", chromedp.KeyEvent(kb.Enter))
		// From the content, Tab reaches an event of the timeline; Enter
		// opens it.
		reached := false
		for i := 0; i < 40 && !reached; i++ {
			b.do("tab", chromedp.KeyEvent(kb.Tab))
			reached = eval[bool](b, `(document.activeElement.getAttribute('href') || document.activeElement.getAttribute('xlink:href') || '').includes('/ui/event?')`)
		}
		if !reached {
			t.Fatalf("40 Tabs from the skip target reach no event link")
		}
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		defer cancel()
		if _, err := chromedp.RunResponse(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
			t.Fatalf("enter on an event link: %v", err)
		}
		if n := b.count("ol.turns li.turn"); n == 0 {
			t.Errorf("Enter on the focused event did not open an event page (%q)", b.text("h1"))
		}
		// The delete button is reached and pressed with the keyboard too.
		b.open(demoPath("turn", "id", "S4:7"))
		found := false
		for i := 0; i < 40 && !found; i++ {
			b.do("tab", chromedp.KeyEvent(kb.Tab))
			found = eval[string](b, "document.activeElement.id") == "delete"
		}
		if !found {
			t.Fatalf("Tab never reaches the delete button")
		}
		if eval[string](b, "getComputedStyle(document.activeElement).outlineStyle") == "none" {
			t.Errorf("the focused button has no outline")
		}
		if _, err := chromedp.RunResponse(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
			t.Fatalf("enter on delete: %v", err)
		}
		if got := b.text(".notice"); !strings.Contains(got, "S4:7 was deleted") {
			t.Errorf("delete by keyboard: notice %q", got)
		}
	})

	t.Run("without colour", func(t *testing.T) {
		b.t = t
		// Outcomes and stages are written out, not only coloured.
		b.open(demoPath("ask", "q", "Who looks after Biscuit when Priya travels to Lisbon?"))
		outcomes := eval[[]string](b, `[...document.querySelectorAll('table.trace tbody tr td:last-child')].map(e => e.innerText)`)
		if len(outcomes) == 0 {
			t.Fatalf("no trace rows")
		}
		for _, o := range outcomes {
			if !strings.Contains(o, "kept") && !strings.Contains(o, "dropped") {
				t.Errorf("trace outcome %q says neither kept nor dropped", o)
			}
		}
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		defer cancel()
		grey := func(kind emulation.SetEmulatedVisionDeficiencyType) chromedp.Action[chromedp.Void] {
			return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
				_, err := cdp.Call(ctx, t, emulation.SetEmulatedVisionDeficiency, emulation.SetEmulatedVisionDeficiencyParams{Type: kind})
				return err
			})
		}
		if err := chromedp.Do(ctx, grey(emulation.SetEmulatedVisionDeficiencyTypeAchromatopsia)); err != nil {
			t.Fatal(err)
		}
		eval[bool](b, `document.getElementById('tr-h').scrollIntoView({block: 'start'}), true`)
		b.shot("ask-trace-no-colour")
		if err := chromedp.Do(ctx, grey(emulation.SetEmulatedVisionDeficiencyTypeNone)); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("375px wide", func(t *testing.T) {
		b.t = t
		b.do("narrow", chromedp.EmulateViewport(375, 740))
		defer b.do("wide again", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, emulation.ClearDeviceMetricsOverride, cdp.Empty{})
			return err
		}))
		for _, p := range []struct{ name, path string }{
			{"spaces", "/ui/"},
			{"timeline", demoPath("space")},
			{"event", demoPath("event", "id", evs[0].Event.ID)},
			{"turns", demoPath("turns", "speaker", "Priya")},
			{"ask", demoPath("ask", "q", "Which company did Tom join, and when did he start?")},
			{"turn", demoPath("turn", "id", "S1:2")},
			{"profiles", demoPath("profiles")},
			{"profile", demoPath("profile", "entity", "Priya")},
			{"error", demoPath("event", "id", "no-such-event")},
		} {
			b.open(p.path)
			if b.text("h1") == "Log in" {
				t.Fatalf("not logged in (this subtest needs the ones before it)")
			}
			if w := eval[int](b, "window.innerWidth"); w != 375 {
				t.Fatalf("viewport %d px wide, want 375", w)
			}
			if sw := eval[int](b, "document.documentElement.scrollWidth"); sw > 375 {
				wide := eval[string](b, `[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 376 && !e.closest('.scroll')).slice(0, 5).map(e => e.tagName + '.' + e.className).join(' ')`)
				t.Errorf("%s at 375 px: the page is %d px wide (overflowing: %s)", p.name, sw, wide)
			}
			if p.name == "timeline" || p.name == "ask" || p.name == "profile" {
				b.shot(p.name + "-375")
			}
		}
	})
}
