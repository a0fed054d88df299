package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEditDistance(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "abc", 0},
		{"abc", "", 3},
		{"GSI1", "GSI2", 1},
		{"GIS1", "GSI1", 1}, // a transposition is one edit
		{"createdat", "createdAt", 1},
		{"kitten", "sitting", 3},
		{"status", "statuses", 2},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, editDistance(c.a, c.b, 100), "%q %q", c.a, c.b)
		assert.Equal(t, c.want, editDistance(c.b, c.a, 100), "%q %q", c.b, c.a)
		assert.Equal(t, min(c.want, 1), editDistance(c.a, c.b, 1), "capped at the limit")
	}
}

func TestDidYouMean(t *testing.T) {
	names := []string{"customerId", "orderId", "createdAt", "status"}
	cases := []struct{ name, want string }{
		{"orderID", ` (did you mean "orderId"?)`},       // case is ignored
		{"createAt", ` (did you mean "createdAt"?)`},    // one edit
		{"costumerId", ` (did you mean "customerId"?)`}, // two edits in ten letters
		{"stauts", ` (did you mean "status"?)`},         // a transposition
		{"total", ""},                                   // nothing close
		{"id", ""},                                      // a short name needs a close match
		{"status", ""},                                  // an exact name is not a typo
	}
	for _, c := range cases {
		assert.Equal(t, c.want, DidYouMean(c.name, names), c.name)
	}
	assert.Empty(t, DidYouMean("x", nil))
}
