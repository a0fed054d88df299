package localtest

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// TableName returns a table name unique to this call, made from tb.Name()
// and a random suffix: "TestOrders.by_status-5f0c2a91". It is a valid
// DynamoDB table name (3 to 255 characters of [a-zA-Z0-9_.-]): "/" between
// subtests becomes ".", any other character outside that set becomes "_",
// and a long test name is cut to 200 characters. It creates nothing.
func TableName(tb interface{ Name() string }) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		case r == '/':
			return '.'
		}
		return '_'
	}, tb.Name())
	if len(name) > 200 {
		name = name[:200]
	}
	if name == "" {
		name = "test"
	}
	return fmt.Sprintf("%s-%08x", name, rand.Uint32())
}
