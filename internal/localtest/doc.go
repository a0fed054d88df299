// Package localtest hands the tests and examples of the root module the
// DynamoDB Local that `make test` and `make examples` started for them. It
// starts nothing: it reads the endpoint from the environment, as the AWS SDK's
// configuration does (AWS_ENDPOINT_URL; [EndpointFrom]), so the
// library's module depends neither on the harness (the module
// github.com/singletable/singletable/dynamolocal) nor, through it, on
// Testcontainers and Docker's modules.
//
// # In a test package
//
// The shape is the one of dynamolocal.Shared, so a test file moves from one to
// the other by its import:
//
//	var local localtest.Shared
//
//	func TestMain(m *testing.M) { os.Exit(leakcheck.After(local.Run(m))) }
//
//	func TestOrders(t *testing.T) {
//		client := local.Client(t)        // skips, or fails under CI=true, without an endpoint
//		table := localtest.TableName(t)  // unique per call; create it, delete it in t.Cleanup
//		...
//	}
//
// Without an endpoint the tests that ask for DynamoDB Local are skipped
// with a message saying how to get one, except when the environment variable CI
// is true: then they fail, so CI never passes by skipping them. The first test
// that gets the instance logs which DynamoDB Local it is (version and backend,
// as `dynamodb-local run` exported them, or that they are unknown).
//
// # Environment
//
// `dynamodb-local run -- COMMAND` (module dynamolocal; `make test` uses it)
// starts DynamoDB Local and exports to COMMAND:
//
//   - AWS_ENDPOINT_URL: the URL of the instance ("http://127.0.0.1:41235"), the
//     SDK's own variable, so that a program under test that loads the SDK's
//     configuration (config.LoadDefaultConfig) reaches it too; with
//     AWS_REGION and AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY when unset.
//   - DYNAMODB_LOCAL_VERSION: the release it runs, when known ("3.3.1").
//   - DYNAMODB_LOCAL_STARTED: the backend that started it ("testcontainers" or
//     "jar"); unset when the endpoint came from elsewhere, and then the version
//     is not trusted.
//   - DYNAMODB_LOCAL_DIR: the folder of DynamoDBLocal.jar of that release, for
//     tests that run a DynamoDB Local process of their own ([Jar]).
//
// Set AWS_ENDPOINT_URL yourself to run the tests against any DynamoDB Local,
// for example one started by `make dynamodb-local-serve` (it prints the line to
// export). AWS_ENDPOINT_URL_DYNAMODB wins over it, as in the SDK; the former
// name DYNAMODB_ENDPOINT is still read, after both.
package localtest
