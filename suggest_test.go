package singletable

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSuggestionsInMessages: a name in an option or a tag that matches nothing is
// refused with the closest name it could have meant.
func TestSuggestionsInMessages(t *testing.T) {
	tbl := offlineTable(t)
	orders := MustRegister[tOrder](tbl)

	_, err := NewCollection[struct {
		X []tOrder `singletable:"Ordr"`
	}](tbl)
	require.ErrorIs(t, err, ErrInvalidEntity)
	assert.Contains(t, err.Error(), `did you mean "Order"?`)

	_, err = orders.core().indexLookup("GSI", reflect.ValueOf(order("c1", 1)))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), `did you mean "GSI1"?`)
	_, err = orders.core().indexLookup("GSI3", reflect.ValueOf(order("c1", 1)))
	require.ErrorIs(t, err, ErrInvalidInput, "tOrder has no templates for GSI3")
	assert.Contains(t, err.Error(), "GSI1, GSI2")
}
