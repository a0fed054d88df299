package localtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Jar returns a java binary and the folder of DynamoDBLocal.jar (with
// DynamoDBLocal_lib/) for a test that runs a DynamoDB Local process of its
// own, for example to kill it and start it again. The folder is
// DYNAMODB_LOCAL_DIR, which `dynamodb-local run` (and so `make test`) exports
// with the jar of the release it runs; java is $JAVA_HOME/bin/java when that
// exists, else java from PATH. When either is missing, Jar skips tb, or fails
// it when CI is true, as [Shared.Get] does. getenv nil means os.Getenv.
//
// Run the jar from that folder:
//
//	java -Djava.library.path=./DynamoDBLocal_lib -jar DynamoDBLocal.jar -inMemory -port PORT
func Jar(tb TB, getenv func(string) string) (java, dir string) {
	tb.Helper()
	if getenv == nil {
		getenv = os.Getenv
	}
	java, dir, err := jar(getenv)
	if err != nil {
		SkipOrFail(tb, getenv, fmt.Errorf("localtest: no DynamoDB Local jar to run: %w", err))
		return "", ""
	}
	return java, dir
}

func jar(getenv func(string) string) (java, dir string, err error) {
	dir = getenv(EnvJarDir)
	if dir == "" {
		return "", "", errors.New(EnvJarDir + " is not set: `make test` sets it (it runs the tests under `dynamodb-local run`); " +
			"or set it to the folder that `go -C dynamolocal run ./cmd/dynamodb-local fetch` prints")
	}
	if fi, err := os.Stat(filepath.Join(dir, "DynamoDBLocal.jar")); err != nil || !fi.Mode().IsRegular() {
		return "", "", fmt.Errorf("%s=%s holds no DynamoDBLocal.jar", EnvJarDir, dir)
	}
	java = "java"
	if home := getenv("JAVA_HOME"); home != "" {
		if p := filepath.Join(home, "bin", "java"); isFile(p) {
			java = p
		}
	}
	java, err = exec.LookPath(java)
	if err != nil {
		return "", "", fmt.Errorf("java: %w", err)
	}
	return java, dir, nil
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
