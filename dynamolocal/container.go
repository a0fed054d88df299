package dynamolocal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcdynamodb "github.com/testcontainers/testcontainers-go/modules/dynamodb"
	"github.com/testcontainers/testcontainers-go/wait"
)

// probeTimeout bounds the check that a Docker API answers, so that a
// machine without one moves on to the jar at once.
const probeTimeout = 2 * time.Second

// Labels of the containers this package starts, besides Testcontainers' own:
// the process that started one, so that scripts/podman-setup.sh removes a
// container only when that process is gone (its run died before Close).
const (
	labelPID  = "io.singletable.dynamolocal.pid"
	labelHost = "io.singletable.dynamolocal.host"
)

// startContainer runs o.Image with Testcontainers' DynamoDB module, if a
// Docker API answers, publishing its port 8000 on o.Port (0: a free port).
func startContainer(ctx context.Context, o Options) (*Instance, error) {
	host, err := probeDocker(ctx, o.Getenv)
	if err != nil {
		return nil, err
	}
	o.Logf("Docker API answers at %s; starting %s", host, o.Image)
	rel, err := releaseOf(o.Version)
	if err != nil {
		return nil, err
	}
	hostname, _ := os.Hostname()
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithLogger(tcLogger(o.Logf)),
		testcontainers.WithCmdArgs("-inMemory", "-sharedDb"),
		testcontainers.WithLabels(map[string]string{labelPID: strconv.Itoa(os.Getpid()), labelHost: hostname}),
		// The internal check needs /bin/sh in the image; ListTables below is
		// the real test of readiness.
		testcontainers.WithWaitStrategyAndDeadline(o.StartTimeout,
			wait.ForListeningPort(containerPort).SkipInternalCheck()),
	}
	if rel.telemetryFlag {
		// The module's own option: -disableTelemetry after the other options.
		opts = append(opts, tcdynamodb.WithDisableTelemetry())
	}
	if o.Port != 0 {
		opts = append(opts, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = network.PortMap{
				network.MustParsePort(containerPort): {{HostPort: strconv.Itoa(o.Port)}},
			}
		}))
	}
	var ctr *tcdynamodb.DynamoDBContainer
	// A container engine under load fails a start now and then for reasons of
	// its own (podman: "write child: broken pipe"); a new container usually
	// starts. Three tries, a second apart.
	for attempt := 1; ; attempt++ {
		ctr, err = tcdynamodb.Run(ctx, o.Image, opts...)
		if err == nil {
			break
		}
		terminate(ctr)
		if strings.Contains(err.Error(), "ryuk") {
			return nil, fmt.Errorf("%w (with podman, or without a registry, set TESTCONTAINERS_RYUK_DISABLED=true)", err)
		}
		if attempt == 3 || ctx.Err() != nil {
			return nil, err
		}
		o.Logf("starting %s failed (attempt %d of 3), trying again: %v", o.Image, attempt, err)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Second):
		}
	}
	hostPort, err := ctr.ConnectionString(ctx)
	if err != nil {
		terminate(ctr)
		return nil, err
	}
	inst := newInstance("http://"+loopback(hostPort), BackendTestcontainers, func() error {
		return ctr.Terminate(context.Background())
	})
	if err := inst.waitReady(ctx, time.Hour, nil); err != nil {
		_ = inst.Close()
		return nil, err
	}
	inst.version = containerVersion(ctx, ctr)
	inst.command = containerCommand(ctx, ctr)
	if inst.version != "" && inst.version != o.Version && o.Image == ImageRepository+":"+o.Version {
		o.Logf("image %s is DynamoDB Local %s, not %s", o.Image, inst.version, o.Version)
	}
	return inst, nil
}

// containerPort is the port DynamoDB Local listens on in its container.
const containerPort = "8000/tcp"

// containerVersion returns the version DynamoDB Local printed at start in
// the container's log, or "" when it printed none or the log cannot be read.
func containerVersion(ctx context.Context, ctr *tcdynamodb.DynamoDBContainer) string {
	rc, err := ctr.Logs(ctx)
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 64<<10))
	return printedVersion(string(b))
}

// containerCommand returns the container's entrypoint and command as the
// engine reports them, or nil when it cannot be inspected.
func containerCommand(ctx context.Context, ctr *tcdynamodb.DynamoDBContainer) []string {
	info, err := ctr.Inspect(ctx)
	if err != nil || info.Config == nil {
		return nil
	}
	return append(slices.Clone(info.Config.Entrypoint), info.Config.Cmd...)
}

// loopback replaces the host of hostPort by 127.0.0.1 when it is
// "localhost" or an address of this machine, such as the gateway of the
// container network that Testcontainers reports when it runs inside a
// container: the port is published on every interface of the machine, and
// loopback keeps the traffic off any network.
func loopback(hostPort string) string {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return hostPort
	}
	if host == "localhost" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return hostPort
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return hostPort
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return net.JoinHostPort("127.0.0.1", port)
		}
	}
	return hostPort
}

func terminate(ctr *tcdynamodb.DynamoDBContainer) {
	if ctr != nil {
		_ = ctr.Terminate(context.Background())
	}
}

// tcLogger sends Testcontainers' lines to logf.
type tcLogger func(format string, args ...any)

func (l tcLogger) Printf(format string, args ...any) {
	l("%s", "testcontainers: "+strings.TrimSpace(fmt.Sprintf(format, args...)))
}

// probeDocker returns the Docker host that Testcontainers will find, once
// its API has answered a ping, or an error at once when there is none.
func probeDocker(ctx context.Context, getenv func(string) string) (string, error) {
	host := dockerHost(getenv)
	if host == "" {
		return "", errors.New("no Docker API: DOCKER_HOST is not set and no Docker socket exists")
	}
	cli, err := client.New(client.FromEnv, client.WithHost(host))
	if err != nil {
		return "", fmt.Errorf("docker host %s: %w", host, err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return "", fmt.Errorf("no Docker API answers at %s: %w", host, err)
	}
	return host, nil
}

// dockerHost returns the first Docker host among those Testcontainers
// looks at, in its order, or "" when none is set and no socket exists.
func dockerHost(getenv func(string) string) string {
	props := testcontainersProperties(getenv)
	if h := props["tc.host"]; h != "" {
		return h
	}
	if h := getenv("DOCKER_HOST"); h != "" {
		return h
	}
	if isSocket("/var/run/docker.sock") {
		return "unix:///var/run/docker.sock"
	}
	if h := props["docker.host"]; h != "" {
		return h
	}
	var rootless []string
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		rootless = append(rootless, filepath.Join(d, "docker.sock"))
	}
	if home := getenv("HOME"); home != "" {
		rootless = append(rootless,
			filepath.Join(home, ".docker", "run", "docker.sock"),
			filepath.Join(home, ".docker", "desktop", "docker.sock"))
	}
	rootless = append(rootless, filepath.Join("/run/user", strconv.Itoa(os.Getuid()), "docker.sock"))
	for _, s := range rootless {
		if isSocket(s) {
			return "unix://" + s
		}
	}
	return ""
}

func isSocket(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// testcontainersProperties reads the keys of ~/.testcontainers.properties
// that name a Docker host.
func testcontainersProperties(getenv func(string) string) map[string]string {
	home := getenv("HOME")
	if home == "" {
		return nil
	}
	f, err := os.Open(filepath.Join(home, ".testcontainers.properties"))
	if err != nil {
		return nil
	}
	defer f.Close()
	props := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		k = strings.TrimSpace(k)
		if ok && (k == "tc.host" || k == "docker.host") {
			props[k] = strings.TrimSpace(v)
		}
	}
	return props
}
