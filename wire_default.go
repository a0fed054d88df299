//go:build !singletable_sdkdecoding

package singletable

// defaultWireDecoding is whether reads take the wire path when
// TableOptions.WireDecoding is nil: yes, unless the program is built with the tag
// singletable_sdkdecoding (`make test-sdk-decoding` runs every test so, the SDK's
// way).
const defaultWireDecoding = true
