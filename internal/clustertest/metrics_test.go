package clustertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// A real coordinator and worker after a job: both answer their probes
// (and the coordinator the standard gRPC health service), their /metrics
// pass promtool check metrics, every series the Grafana dashboard queries
// is in what they serve, and docs/metrics.md lists exactly the trigrid_*
// series they serve, with their types.
func TestMetricsEndpoints(t *testing.T) {
	t.Parallel()
	c := startCoordinator(t)
	w := startWorker(t, c, "m1", "--metrics", "127.0.0.1:0")
	waddr, _ := w.logLine("worker health and metrics", 30*time.Second)["addr"].(string)
	if c.metrics == "" || waddr == "" {
		t.Fatalf("no metrics addresses: coordinator %q, worker %q", c.metrics, waddr)
	}
	r, stderr, err := submitWait(t, c, 2*time.Minute, "--partitions", "2", grqc(t))
	checkDone(t, r, err, stderr, grqcTriangles)

	for _, addr := range []string{c.metrics, waddr} {
		for _, path := range []string{"/healthz", "/readyz"} {
			if code, body := get(t, addr, path); code != http.StatusOK {
				t.Errorf("%s%s: %d %q", addr, path, code, body)
			}
		}
	}
	checkGRPCHealth(t, c.grpc)

	coordText := scrape(t, c.metrics)
	workerText := scrape(t, waddr)
	t.Run("promtool", func(t *testing.T) {
		promtool(t, "coordinator", coordText)
		promtool(t, "worker", workerText)
	})
	coordNames, workerNames := sampleNames(coordText), sampleNames(workerText)
	for _, want := range []string{`trigrid_coordinator_job_triangles{job_id="` + r.Job + `"} 48260`,
		`trigrid_coordinator_job_subtasks{job_id="` + r.Job + `",state="done"} `} {
		if !strings.Contains(coordText, want) {
			t.Errorf("coordinator /metrics lacks %s", want)
		}
	}
	if !strings.Contains(workerText, `trigrid_worker_subtasks_total{outcome="counted"} `) {
		t.Error("worker /metrics counts no subtasks")
	}

	t.Run("dashboard", func(t *testing.T) {
		exprs := dashboardExprs(t, repoFile("deploy", "grafana", "trigrid.json"))
		for _, e := range exprs {
			for _, name := range promqlNames(e) {
				var ok bool
				switch {
				case strings.HasPrefix(name, "trigrid_coordinator_"):
					ok = coordNames[name]
				case strings.HasPrefix(name, "trigrid_worker_"):
					ok = workerNames[name]
				default: // the runtime's and the process's, on both
					ok = coordNames[name] && workerNames[name]
				}
				if !ok {
					t.Errorf("the dashboard queries %s, which the coordinator and worker do not serve: %s", name, e)
				}
			}
		}
	})
	t.Run("docs", func(t *testing.T) {
		served := familyTypes(coordText)
		for name, typ := range familyTypes(workerText) {
			served[name] = typ
		}
		for name := range served {
			if !strings.HasPrefix(name, "trigrid_") {
				delete(served, name)
			}
		}
		documented := docTable(t, repoFile("docs", "metrics.md"))
		for name, typ := range served {
			if documented[name] != typ {
				t.Errorf("docs/metrics.md: %s is served as a %s, documented as %q", name, typ, documented[name])
			}
		}
		for name := range documented {
			if _, ok := served[name]; !ok {
				t.Errorf("docs/metrics.md lists %s, which is not served", name)
			}
		}
	})
}

func get(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatalf("GET %s%s: %v", addr, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	code, body := get(t, addr, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("%s/metrics: %d", addr, code)
	}
	return body
}

func checkGRPCHealth(t *testing.T, addr string) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "trigrid.v1.Cluster"})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("gRPC health of the cluster service: %v, %v", resp.GetStatus(), err)
	}
}

// promtool runs `promtool check metrics` on a scrape. Without promtool
// the check is skipped, except in CI (CI set), where it fails: .ci/run
// installs it (Debian's prometheus package).
func promtool(t *testing.T, what, text string) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("promtool is missing in CI (apt-get install prometheus): %v", err)
		}
		t.Skipf("no promtool here (Debian's prometheus package); CI runs this check: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("promtool check metrics on the %s's /metrics: %v\n%s", what, err, out.String())
	}
}

// sampleNames returns the names of a scrape's samples (histograms' as
// _bucket, _sum and _count).
func sampleNames(text string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			out[line[:i]] = true
		}
	}
	return out
}

// familyTypes returns a scrape's families by name with their # TYPE.
func familyTypes(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			out[f[2]] = f[3]
		}
	}
	return out
}

// docRow is a row of docs/metrics.md's tables: | `name` | type | ...
var docRow = regexp.MustCompile("^\\| `([a-z_:]+)` \\| (counter|gauge|histogram) \\|")

func docTable(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := docRow.FindStringSubmatch(line); m != nil {
			if _, dup := out[m[1]]; dup {
				t.Errorf("%s lists %s twice", path, m[1])
			}
			out[m[1]] = m[2]
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no table rows", path)
	}
	return out
}

// grafanaPanel is what the test reads of a dashboard's panels.
type grafanaPanel struct {
	ID         int            `json:"id"`
	Type       string         `json:"type"`
	Title      string         `json:"title"`
	Datasource map[string]any `json:"datasource"`
	Targets    []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"` // a collapsed row's
}

// dashboardExprs reads a Grafana dashboard, checks its shape (a uid, a
// title, unique panel ids, every query panel on the ${datasource}
// variable with ref ids and expressions) and returns its PromQL: the
// panels' targets and the template variables' label_values queries.
func dashboardExprs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID        string         `json:"uid"`
		Title      string         `json:"title"`
		Panels     []grafanaPanel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
		t.Fatalf("%s: uid %q, title %q, %d panels", path, d.UID, d.Title, len(d.Panels))
	}
	var exprs []string
	ids := map[int]bool{}
	var walk func(ps []grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			if ids[p.ID] || p.ID == 0 {
				t.Errorf("%s: panel %q has id %d, not unique", path, p.Title, p.ID)
			}
			ids[p.ID] = true
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.Datasource["uid"] != "${datasource}" || len(p.Targets) == 0 {
				t.Errorf("%s: panel %q: datasource %v, %d queries", path, p.Title, p.Datasource, len(p.Targets))
			}
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				if tg.Expr == "" || tg.RefID == "" || refs[tg.RefID] {
					t.Errorf("%s: panel %q: query %q with ref id %q", path, p.Title, tg.Expr, tg.RefID)
				}
				refs[tg.RefID] = true
				exprs = append(exprs, tg.Expr)
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		s, _ := q["query"].(string)
		// label_values(SERIES, LABEL): the series is the expression.
		args, ok := strings.CutPrefix(s, "label_values(")
		comma := strings.LastIndexByte(args, ',')
		if !ok || comma < 0 {
			t.Errorf("%s: variable %s: query %v", path, v.Name, v.Query)
			continue
		}
		exprs = append(exprs, args[:comma])
	}
	return exprs
}

// promqlWords are PromQL's keywords, aggregations and functions that may
// stand without a parenthesis right after them.
var promqlWords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true,
	"sum": true, "min": true, "max": true, "avg": true, "count": true, "group": true, "stddev": true,
	"stdvar": true, "topk": true, "bottomk": true, "quantile": true, "count_values": true,
	"limitk": true, "limit_ratio": true,
}

// promqlNames returns the series names a PromQL expression reads, in
// order of first use: the identifiers outside strings, label matchers,
// grouping clauses and range brackets that are neither calls, keywords
// nor Grafana variables. It knows PromQL well enough for dashboards (the
// test checks it on a sample of every form the dashboard uses).
func promqlNames(expr string) []string {
	var names []string
	seen := map[string]bool{}
	skipTo := func(i int, open, close byte) int { // past the matching close
		depth := 0
		for ; i < len(expr); i++ {
			switch expr[i] {
			case '"':
				for i++; i < len(expr) && expr[i] != '"'; i++ {
					if expr[i] == '\\' {
						i++
					}
				}
			case open:
				depth++
			case close:
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	isWord := func(c byte) bool {
		return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '{':
			i = skipTo(i, '{', '}')
		case c == '[':
			i = skipTo(i, '[', ']')
		case c == '"':
			i = skipTo(i, '"', '"')
		case c == '$': // a Grafana variable
			for i++; i < len(expr) && isWord(expr[i]); i++ {
			}
		case c >= '0' && c <= '9' || c == '.':
			for i++; i < len(expr) && (isWord(expr[i]) || expr[i] == '.'); i++ {
			}
		case isWord(c):
			j := i
			for j < len(expr) && isWord(expr[j]) {
				j++
			}
			word := expr[i:j]
			k := j
			for k < len(expr) && expr[k] == ' ' {
				k++
			}
			switch {
			case word == "by" || word == "without" || word == "on" || word == "ignoring" || word == "group_left" || word == "group_right":
				if k < len(expr) && expr[k] == '(' {
					j = skipTo(k, '(', ')') // the label list
				}
			case k < len(expr) && expr[k] == '(': // a call
			case promqlWords[strings.ToLower(word)]:
			case !seen[word]:
				seen[word] = true
				names = append(names, word)
			}
			i = j
		default:
			i++
		}
	}
	return names
}

// The PromQL reader finds the series and only the series in every form
// the dashboard uses.
func TestPromQLNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`rate(trigrid_worker_subtasks_total{instance=~"$instance"}[$__rate_interval])`: {"trigrid_worker_subtasks_total"},
		`histogram_quantile(0.9, sum by (le) (rate(a_seconds_bucket{x="}{[("}[5m])))`:  {"a_seconds_bucket"},
		`sum by (job_id) (a{state="done"}) / sum by (job_id) (a) > 0`:                  {"a"},
		`sum(rate(b_sum[1m])) / sum(rate(b_count[1m])) and on (instance) c offset 5m`:  {"b_sum", "b_count", "c"},
		`time() - process_start_time_seconds{instance=~"$instance"}`:                   {"process_start_time_seconds"},
		`x * 1e-9 + y ignoring (a, b) group_left (c) z`:                                {"x", "y", "z"},
	} {
		got := promqlNames(expr)
		if !slices.Equal(got, want) {
			t.Errorf("promqlNames(%s) = %v, want %v", expr, got, want)
		}
	}
}
