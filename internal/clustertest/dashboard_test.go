package clustertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// chromium returns Debian's headless-capable Chromium. Outside CI a
// machine without it skips the browser test; in CI (.ci/run installs the
// chromium package) its absence fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium on PATH: CI installs Debian's chromium package (.ci/run); the browser test must run there")
	}
	t.Skip("no chromium on PATH (Debian: apt-get install chromium); skipping the browser test of the dashboard")
	return ""
}

// browser starts headless Chromium for the test, bounded by timeout; the
// returned context runs chromedp actions in one tab, and dialogs records
// every JavaScript dialog the page opens (an alert would be a script
// injected through a name the page failed to escape).
func browser(t *testing.T, timeout time.Duration) (ctx context.Context, dialogs func() []string) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox refuses to start
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1050),
	)
	ctx, cancelTime := context.WithTimeout(context.Background(), timeout)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelTab(); cancelAlloc(); cancelTime() })
	// Start the browser now, so that the dialog subscription has a tab.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting %s: %v", chromium(t), err)
	}
	var mu sync.Mutex
	var seen []string
	events := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			mu.Lock()
			seen = append(seen, ev.Message)
			mu.Unlock()
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// The dashboard in a real browser while a real coordinator and two CPU
// workers (separate processes) count ca-GrQc: the page, loaded before the
// job exists and asked for the token, follows the job to 100% without a
// reload, shows the exact count and both workers; a graph whose file name
// is markup shows that name as text and runs nothing.
func TestDashboardInBrowser(t *testing.T) {
	ctx, dialogs := browser(t, 50*time.Second)
	const token = "dashboard-test-token"
	c := startCoordinator(t, "--token", token)
	startWorker(t, c, "w1", "--token", token)
	startWorker(t, c, "w2", "--token", token)
	want := wholeCount(t, grqc(t))
	if want != grqcTriangles {
		t.Fatalf("the whole-graph count is %d, SNAP publishes %d", want, grqcTriangles)
	}
	url := "http://" + c.metrics + "/"

	// The page asks for the token, then shows the dashboard, jobless.
	for i, step := range []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(`#login`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), token),
		chromedp.Click(chromedp.CSS(`#login button`)),
		chromedp.WaitVisible(chromedp.CSS(`#jobs`)),
		chromedp.WaitVisible(chromedp.CSS(`#workers tbody tr[data-worker="w2"]`)),
	} {
		if err := do(ctx, step); err != nil {
			t.Fatalf("the dashboard at %s, step %d: %v; the page shows:\n%s", url, i, err, pageText(ctx))
		}
	}

	job := submit(t, c, "--token", token, "-P", "4", grqc(t))
	done := `tr.job[data-job="` + job + `"][data-state="done"]`
	if err := do(ctx, chromedp.WaitVisible(chromedp.CSS(done)), chromedp.WaitVisible(chromedp.CSS(`#grid .cell`))); err != nil {
		t.Fatalf("waiting for job %s to show done: %v; the page shows:\n%s", job, err, pageText(ctx))
	}
	tri := text(t, ctx, done+` td.triangles`)
	progress := text(t, ctx, done+` td.progress`)
	workers, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#workers tbody tr[data-worker]")].map(r => r.dataset.worker + " " + r.dataset.state)`))
	if err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.TempDir(), "dashboard.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("TRIGRID_DASHBOARD_SCREENSHOT"); out != "" {
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if tri != strconv.FormatUint(want, 10) {
		t.Fatalf("the page shows %q triangles for job %s, want %d", tri, job, want)
	}
	if !strings.Contains(progress, "(100%)") {
		t.Fatalf("the page shows progress %q for a done job", progress)
	}
	slices.Sort(workers) // in join order on the page
	if len(workers) != 2 || !strings.HasPrefix(workers[0], "w1 ") || !strings.HasPrefix(workers[1], "w2 ") || strings.Contains(strings.Join(workers, " "), "lost") {
		t.Fatalf("the worker table shows %v, want w1 and w2 connected", workers)
	}

	// A graph named as markup: its name shows as text, nothing runs, and
	// it is counted exactly too.
	hostile := filepath.Join(t.TempDir(), `"><img src=x onerror=alert(1)><svg onload=alert(2)> &amp; <script>.txt.gz`)
	data, err := os.ReadFile(grqc(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hostile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	job2 := submit(t, c, "--token", token, "-P", "2", hostile)
	done2 := `tr.job[data-job="` + job2 + `"][data-state="done"]`
	if err := do(ctx, chromedp.WaitVisible(chromedp.CSS(done2))); err != nil {
		t.Fatalf("waiting for job %s to show done: %v; the page shows:\n%s", job2, err, pageText(ctx))
	}
	graph := text(t, ctx, done2+` td:nth-child(3)`)
	tri2 := text(t, ctx, done2+` td.triangles`)
	injected, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("img, svg, script:not([src]), [onerror], [onload]").length`))
	if err != nil {
		t.Fatal(err)
	}
	if graph != hostile || injected != 0 || len(dialogs()) != 0 {
		t.Fatalf("graph cell %q (want %q), %d injected elements, dialogs %v", graph, hostile, injected, dialogs())
	}
	if tri2 != strconv.FormatUint(want, 10) {
		t.Fatalf("the page shows %q triangles for job %s, want %d", tri2, job2, want)
	}
	t.Logf("screenshot: %s", shot)
}

// text is the text of the first element css selects.
func text(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("text of %s: %v", css, err)
	}
	return s
}

// stepTimeout bounds one wait on the page, leaving the browser's time for
// telling what the page showed instead.
const stepTimeout = 15 * time.Second

func do(ctx context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	return chromedp.Do(sctx, steps...)
}

// pageText is the page's visible text, for a failure's message.
func pageText(ctx context.Context) string {
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(sctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return s
}
