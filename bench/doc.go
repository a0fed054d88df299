// Package bench holds singletable's comparative benchmarks, in a module of its own so
// that what only they use (guregu/dynamo) stays out of the library's go.mod.
//
// Each family compares against its baselines in the same run. A Benchmark...Time
// function times its variants interleaved call by call, so that a loaded machine slows
// them alike, and gives the table its ratios; its plain twin runs one sub-benchmark per
// variant for exact allocation counts and for benchstat:
//
//   - BenchmarkCodec and BenchmarkCodecTime: the compiled codec (internal/codec, which
//     this module may import because its path is under the library's) against
//     attributevalue, guregu/dynamo and a hand-written codec, for one 14-field Order.
//   - BenchmarkSDK and BenchmarkSDKTime: Entity.Get, Put and Query against the raw SDK
//     call (alone, with the hand-written codec, or with attributevalue; Put also with
//     the condition the library adds) through a canned HTTP client that answers
//     without a network, so every difference is client-side. The targets compare the
//     library with the raw call doing the same work with the hand-written codec.
//   - BenchmarkStub: the same against a stub Client with no SDK at all, the library's
//     own cost alone: the one to profile.
//   - BenchmarkLocal: the same three operations end to end against DynamoDB Local,
//     library and raw SDK interleaved call by call; skipped when none can be had
//     (failed under CI=true).
//
// TestCodecsAgree and TestSameWork check that the variants compared do the same work.
//
// `make bench` (go run ./cmd/benchtable) runs them with the key rendering benchmark of
// the root package and prints one Markdown table of figures, ratios and targets;
// RESULTS.md holds the last one measured, with the machine and the command.
package bench
