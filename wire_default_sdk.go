//go:build singletable_sdkdecoding

package singletable

// defaultWireDecoding is false when built with the tag singletable_sdkdecoding: reads
// decode items from the SDK's attribute values unless TableOptions.WireDecoding says
// otherwise.
const defaultWireDecoding = false
