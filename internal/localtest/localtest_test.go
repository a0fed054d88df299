package localtest

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/singletable/singletable/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.After(m.Run())) }

// fakeLocal answers every request as DynamoDB Local answers ListTables and
// ListStreams on an empty instance.
func fakeLocal(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		fmt.Fprint(w, `{"TableNames":[],"Streams":[]}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// recordTB stands in for a testing.TB to see whether a helper skips or fails.
type recordTB struct {
	skipped, failed bool
	logs            []string
}

func (r *recordTB) Helper()                       {}
func (r *recordTB) Name() string                  { return "TestRecord/sub test#1" }
func (r *recordTB) Logf(format string, a ...any)  { r.logs = append(r.logs, fmt.Sprintf(format, a...)) }
func (r *recordTB) Skipf(format string, a ...any) { r.skipped = true }
func (r *recordTB) Fatalf(format string, a ...any) {
	r.failed = true
}

func TestOpen(t *testing.T) {
	srv := fakeLocal(t)
	tests := []struct {
		name     string
		vars     map[string]string
		version  string
		describe string
	}{
		{"started by dynamodb-local run", map[string]string{EnvEndpoint: srv.URL, EnvStarted: "testcontainers", EnvVersion: "3.3.1"},
			"3.3.1", "DynamoDB Local 3.3.1 at " + srv.URL + ", started by dynamodb-local run (testcontainers backend)"},
		{"started, version unknown", map[string]string{EnvEndpoint: srv.URL, EnvStarted: "jar"},
			"", "version unknown (it printed none)"},
		{"not started here: the version is not trusted", map[string]string{EnvEndpoint: strings.TrimPrefix(srv.URL, "http://"), EnvVersion: "1.11.478"},
			"", "an endpoint this run did not start, version unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst, err := Open(t.Context(), env(tt.vars))
			if err != nil {
				t.Fatal(err)
			}
			defer inst.Close()
			if inst.Endpoint() != srv.URL || inst.Version() != tt.version || !strings.Contains(inst.Describe(), tt.describe) {
				t.Errorf("endpoint %q version %q describe %q", inst.Endpoint(), inst.Version(), inst.Describe())
			}
			if _, err := inst.Client().ListTables(t.Context(), &dynamodb.ListTablesInput{}); err != nil {
				t.Errorf("ListTables: %v", err)
			}
			if _, err := inst.StreamsClient().ListStreams(t.Context(), &dynamodbstreams.ListStreamsInput{}); err != nil {
				t.Errorf("ListStreams: %v", err)
			}
			if err := inst.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := inst.Client().ListTables(t.Context(), &dynamodb.ListTablesInput{}); !errors.Is(err, errClosed) {
				t.Errorf("client used after Close: %v, want errClosed", err)
			}
		})
	}

	_, err := Open(t.Context(), env(nil))
	if !errors.Is(err, ErrNoEndpoint) || !strings.Contains(err.Error(), "make test") {
		t.Errorf("Open without an endpoint: %v", err)
	}
}

func TestSharedSkipsOrFails(t *testing.T) {
	for _, ci := range []string{"", "false", "true", "1"} {
		t.Run("CI="+ci, func(t *testing.T) {
			s := Shared{Getenv: env(map[string]string{"CI": ci})}
			defer s.Close()
			rec := &recordTB{}
			if inst := s.Get(rec); inst != nil {
				t.Fatal("Get returned an instance without an endpoint")
			}
			wantFail := ci == "true" || ci == "1"
			if rec.failed != wantFail || rec.skipped == wantFail {
				t.Errorf("failed=%v skipped=%v, want failed=%v", rec.failed, rec.skipped, wantFail)
			}
		})
	}
}

func TestSharedLogsOnce(t *testing.T) {
	srv := fakeLocal(t)
	s := Shared{Getenv: env(map[string]string{EnvEndpoint: srv.URL, EnvStarted: "jar", EnvVersion: "3.3.1"})}
	a, b := &recordTB{}, &recordTB{}
	if s.Client(a) == nil || s.StreamsClient(b) == nil {
		t.Fatal("no client")
	}
	if len(a.logs) != 1 || !strings.Contains(a.logs[0], "DynamoDB Local 3.3.1") || len(b.logs) != 0 {
		t.Errorf("logs: first test %q, second %q", a.logs, b.logs)
	}
	if code := s.Run(runner(0)); code != 0 {
		t.Errorf("Run = %d", code)
	}
	if s.Get(&recordTB{}) != nil {
		t.Error("Get after Close returned an instance")
	}
}

type runner int

func (r runner) Run() int { return int(r) }

func TestTableName(t *testing.T) {
	valid := regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)
	for _, name := range []string{"plain", "with/sub test#1", "ünïcode✓", strings.Repeat("long", 100), ""} {
		a, b := TableName(named(name)), TableName(named(name))
		if !valid.MatchString(a) || a == b {
			t.Errorf("%q: %q and %q", name, a, b)
		}
	}
	if got := TableName(&recordTB{}); !strings.HasPrefix(got, "TestRecord.sub_test_1-") {
		t.Errorf("TableName = %q", got)
	}
}

type named string

func (n named) Name() string { return string(n) }

func TestJar(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		vars map[string]string
	}{
		{"no folder", nil},
		{"no jar in the folder", map[string]string{EnvJarDir: dir}},
	} {
		rec := &recordTB{}
		if java, got := Jar(rec, env(tt.vars)); java != "" || got != "" || !rec.skipped {
			t.Errorf("%s: %q %q skipped=%v", tt.name, java, got, rec.skipped)
		}
		rec = &recordTB{}
		tt.vars = map[string]string{EnvJarDir: tt.vars[EnvJarDir], "CI": "true"}
		if Jar(rec, env(tt.vars)); !rec.failed {
			t.Errorf("%s under CI: not failed", tt.name)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "DynamoDBLocal.jar"), []byte("jar"), 0o644); err != nil {
		t.Fatal(err)
	}
	java, got, err := jar(env(map[string]string{EnvJarDir: dir, "PATH": os.Getenv("PATH")}))
	if err == nil && (got != dir || java == "") {
		t.Errorf("jar: %q %q", java, got)
	}
	if err != nil && !strings.Contains(err.Error(), "java") {
		t.Errorf("jar: %v", err)
	}
}

// TestEndpointFrom: the SDK's variables first, the service's own before the
// general one, then the harness's former name.
func TestEndpointFrom(t *testing.T) {
	for _, tt := range []struct {
		env        map[string]string
		want, from string
	}{
		{map[string]string{}, "", ""},
		{map[string]string{EnvEndpointOld: "old:1"}, "old:1", EnvEndpointOld},
		{map[string]string{EnvEndpointOld: "old:1", EnvEndpoint: "http://a:2"}, "http://a:2", EnvEndpoint},
		{map[string]string{EnvEndpointOld: "old:1", EnvEndpoint: "http://a:2", EnvEndpointDynamoDB: " http://d:3 "}, "http://d:3", EnvEndpointDynamoDB},
		{map[string]string{EnvEndpoint: "  ", EnvEndpointOld: "old:1"}, "old:1", EnvEndpointOld},
	} {
		got, from := EndpointFrom(env(tt.env))
		if got != tt.want || from != tt.from {
			t.Errorf("%v: %q from %q, want %q from %q", tt.env, got, from, tt.want, tt.from)
		}
	}
}
