package singletable

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// constSource is a random source that gives the same byte every read.
type constSource byte

func (c constSource) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

// TestGeneratedIDPerGoroutineIncreasing (issue 37, scenario 5): ids made one
// after another by one goroutine increase strictly while other goroutines make
// ids of the same entity, with the default clock.
func TestGeneratedIDPerGoroutineIncreasing(t *testing.T) {
	for _, kind := range []string{"ulid", "uuidv7"} {
		tbl := offlineTable(t)
		var info *entityInfo
		if kind == "ulid" {
			info = MustRegister[genOrder](tbl).x.info
		} else {
			info = MustRegister[genEvent](tbl).x.info
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var bad []string
		for range 8 {
			wg.Go(func() {
				last := ""
				for range 5000 {
					v := reflectNew(info)
					if kind == "uuidv7" {
						v.FieldByName("Str").SetString("s")
					}
					if _, err := info.planPut(v, kindCreate, writeOptions{}, nil); err != nil {
						mu.Lock()
						bad = append(bad, err.Error())
						mu.Unlock()
						return
					}
					id := v.FieldByName("ID").String()
					if id <= last {
						mu.Lock()
						bad = append(bad, last+" then "+id)
						mu.Unlock()
					}
					last = id
				}
			})
		}
		wg.Wait()
		assert.Empty(t, bad, "%s: a goroutine's ids decreased", kind)
	}
}

// TestGeneratedIDConstantSourceMovesOn (issue 37, scenario 6): with a constant
// id source (WithIDSource, for deterministic tests) and a fixed clock, Puts in
// one millisecond return, each with an id of its own, increasing.
func TestGeneratedIDConstantSourceMovesOn(t *testing.T) {
	ctx := context.Background()
	for _, src := range []constSource{0xFF, 0x00} {
		tbl, _ := newTestTable(t, WithClock(func() time.Time { return genClock }), WithIDSource(src))
		orders := MustRegister[genOrder](tbl)
		done := make(chan []string, 1)
		go func() {
			var ids []string
			for range 3 {
				o, err := orders.Put(ctx, genOrder{Total: 1})
				if err != nil {
					break
				}
				ids = append(ids, o.ID)
			}
			done <- ids
		}()
		select {
		case ids := <-done:
			require.Len(t, ids, 3, "source %#x", byte(src))
			assert.Less(t, ids[0], ids[1], "source %#x: never repeated", byte(src))
			assert.Less(t, ids[1], ids[2], "source %#x", byte(src))
		case <-time.After(20 * time.Second):
			t.Fatalf("source %#x: the second Put in one millisecond never returns", byte(src))
		}
		n, err := orders.ScanCount(ctx, Consistent())
		require.NoError(t, err)
		assert.EqualValues(t, 3, n.Items, "three items, not one written three times")
	}
}

// reflectNew is a new zero value of the entity's type, addressable.
func reflectNew(info *entityInfo) reflect.Value { return reflect.New(info.goType).Elem() }
