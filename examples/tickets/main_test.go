package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/examples/exampleenv"
)

// local is the DynamoDB Local of this test binary, started by the first test
// that asks for it. Under CI=true a missing one fails the tests instead of
// skipping them.
var local exampleenv.Shared

func TestMain(m *testing.M) { os.Exit(local.Run(m)) }

// TestRun runs the example end to end on DynamoDB Local and checks what each
// step shows: the index order (priorities as numbers, then opening time), the
// partial sort key, the range with Descending, the move of a closed ticket,
// the draft left out, and the two refusals before sending.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	name := exampleenv.TableName(t)
	require.NoError(t, run(t.Context(), local.Client(t), name, &out))
	got := strings.ReplaceAll(out.String(), name, "TABLE")
	assert.Equal(t, want, got)
}

const want = `created table TABLE with the native index ByTenantStatus: HASH tenant S, status S; RANGE priority N, opened N

1. Put 7 tickets: no index key is rendered; the item stores tenant, status, priority, opened

2. acme's open tickets: tenant = acme AND status = open (priority as a number: 10 after 2; the draft t7 is not in the index)
   t2  P1  10:00  checkout is down
   t4  P1  12:00  login fails for SSO users
   t1  P2  09:00  invoice shows the wrong VAT
   t3  P10 11:00  typo on the pricing page

3. acme's open P1 tickets, oldest first: ... AND priority = 1 (a partial sort key from the filled fields)
   t2  P1  10:00  checkout is down
   t4  P1  12:00  login fails for SSO users

4. acme's open tickets of priority 2 or more, highest number first: ... AND priority >= 2, descending
   t3  P10 11:00  typo on the pricing page
   t1  P2  09:00  invoice shows the wrong VAT

5. Close t2 (Update status): acme's closed tickets now
   t2  P1  10:00  checkout is down
   t5  P1  13:00  password reset mail missing

6. A query without the status (a partition attribute) is refused before sending:
   singletable: Query Ticket: native index ByTenantStatus: partition attribute status (Ticket.Status) is unset: DynamoDB needs an equality on every partition attribute (an empty string or a zero number is unset; a pointer field can hold 0): singletable: invalid input

7. A ticket whose tenant is "" is refused before sending, naming the field:
   singletable: Put Ticket: invalid Ticket.Tenant (attribute tenant): native index ByTenantStatus, key attribute "tenant" cannot hold an empty string, and DynamoDB refuses the whole write: give a value, or tag the field omitempty to keep such items out of the index

deleted table TABLE
`
