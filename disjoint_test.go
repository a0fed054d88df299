package singletable

import (
	"context"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/keytmpl"
)

var (
	phS = phLang{Kind: keytmpl.KindString}
	phI = phLang{Kind: keytmpl.KindInt}
	phU = phLang{Kind: keytmpl.KindUint}
	phT = phLang{Kind: keytmpl.KindTime}
)

func phShard(n int) phLang { return phLang{Kind: keytmpl.KindInt, Shards: n} }

// side is one template of a pair, with what its placeholders hold.
type side struct {
	text string
	phs  []phLang
}

func sideLang(t testing.TB, s side, delim byte) (*Template, *keyLang) {
	t.Helper()
	tm, err := ParseTemplate(s.text, delim)
	require.NoError(t, err, s.text)
	require.Len(t, s.phs, len(tm.k.Names), "%s: one phLang per placeholder", s.text)
	return tm, newKeyLang(tm, s.phs)
}

// rendersAs reports whether tm, its placeholders holding values as phs says,
// renders key: it parses key and renders what it parsed again.
func rendersAs(tm *Template, phs []phLang, key string) bool {
	raw, err := tm.Extract(key)
	if err != nil {
		return false
	}
	vals := map[string]any{}
	for i, name := range tm.k.Names {
		v := raw[name]
		s, isString := v.(string)
		switch ph := phs[i]; {
		case !isString: // a padded number or a time format, parsed already
		case ph.Kind == keytmpl.KindString:
		case ph.Kind == keytmpl.KindTime:
			tv, err := time.Parse(keytmpl.TimeLayout, s)
			if err != nil {
				return false
			}
			v = tv
		case ph.Kind == keytmpl.KindInt:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || (ph.Shards > 0 && (n < 1 || n > int64(ph.Shards))) {
				return false
			}
			v = n
		case ph.Kind == keytmpl.KindUint:
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return false
			}
			v = n
		}
		vals[name] = v
	}
	again, err := tm.Render(vals)
	return err == nil && again == key
}

// TestCommonKey decides, for pairs of templates, whether they can render one key,
// and checks that the key it gives is rendered by both.
func TestCommonKey(t *testing.T) {
	cases := []struct {
		name    string
		a, b    side
		delim   byte
		witness string // "" when the two are disjoint
	}{
		// The pairs.
		{"a literal beside a string", side{"PROFILE", nil}, side{"{name}", []phLang{phS}}, '#', "PROFILE"},
		{"a string beside a padded number", side{"ITEM#{id}", []phLang{phS}}, side{"ITEM#{n:05}", []phLang{phI}}, '#', "ITEM#11111"},
		// Pairs that must stay allowed.
		{"prefixes that differ before the delimiter", side{"ORDER#{id}", []phLang{phS}}, side{"ORDERLINE#{id}", []phLang{phS}}, '#', ""},
		{"two parts beside one", side{"{a}#{b}", []phLang{phS, phS}}, side{"{c}", []phLang{phS}}, '#', ""},
		{"a parent beside its children", side{"ORDER#{id}", []phLang{phS}}, side{"ORDER#{id}#ITEM#{item}", []phLang{phS, phS}}, '#', ""},
		{"a key beside a longer one", side{"USER#{id}", []phLang{phS}}, side{"USER#{id}#{n:03}", []phLang{phS, phU}}, '#', ""},
		{"an integer beside a word", side{"{n}", []phLang{phI}}, side{"PROFILE", nil}, '#', ""},
		{"different literals", side{"META", nil}, side{"PROFILE", nil}, '#', ""},
		{"a time beside a date", side{"{t:time}", []phLang{phT}}, side{"{d:date}", []phLang{phT}}, '#', ""},
		{"unix seconds beside 9 digits", side{"{t:unix}", []phLang{phT}}, side{"{n:09}", []phLang{phU}}, '#', ""},
		{"an unsigned integer beside a negative literal", side{"{n}", []phLang{phU}}, side{"-5", nil}, '#', ""},
		{"negative numbers with the delimiter '-'", side{"{n}", []phLang{phI}}, side{"-1", nil}, '-', ""},
		{"a shard beyond the count", side{"E#{shard}", []phLang{phShard(8)}}, side{"E#9", nil}, '#', ""},
		{"a shard of three digits among 16", side{"E#{shard}", []phLang{phShard(16)}}, side{"E#100", nil}, '#', ""},
		{"a zero-padded integer beside an integer", side{"{n:03}", []phLang{phI}}, side{"007", nil}, '#', "007"},
		// Pairs that collide.
		{"the same literal", side{"META", nil}, side{"META", nil}, '#', "META"},
		{"two strings", side{"A#{x}", []phLang{phS}}, side{"A#{y}", []phLang{phS}}, '#', "A#a"},
		{"an integer beside a padded one", side{"{n}", []phLang{phI}}, side{"{m:05}", []phLang{phU}}, '#', "11111"},
		{"a negative literal", side{"{n}", []phLang{phI}}, side{"-5", nil}, '#', "-5"},
		{"zero", side{"{n}", []phLang{phU}}, side{"0", nil}, '#', "0"},
		{"a date beside a string", side{"{d:date}", []phLang{phT}}, side{"{s}", []phLang{phS}}, '#', "1111-11-11"},
		{"unix seconds beside 10 digits", side{"{t:unix}", []phLang{phT}}, side{"{n:010}", []phLang{phU}}, '#', "1111111111"},
		{"a shard within the count", side{"E#{shard}", []phLang{phShard(8)}}, side{"E#8", nil}, '#', "E#8"},
		{"a literal tail beside a second part", side{"{a}#X", []phLang{phS}}, side{"{b}#{c}", []phLang{phS, phS}}, '#', "a#X"},
		{"a plain time beside a fixed layout", side{"T#{t}", []phLang{phT}}, side{"T#{s}", []phLang{phS}}, '#', "T#1111-11-11T11:11:11.111111111Z"},
		{"text beyond ASCII", side{"é{x}", []phLang{phS}}, side{"{y}", []phLang{phS}}, '#', "éa"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ta, la := sideLang(t, c.a, c.delim)
			tb, lb := sideLang(t, c.b, c.delim)
			for _, order := range [][2]*keyLang{{la, lb}, {lb, la}} {
				key, ok := commonKey(order[0], order[1])
				if c.witness == "" {
					assert.False(t, ok, "disjoint, but got %q", key)
					continue
				}
				require.True(t, ok, "they collide")
				assert.Equal(t, c.witness, key)
			}
			if c.witness != "" {
				assert.True(t, rendersAs(ta, c.a.phs, c.witness), "%q renders %q", c.a.text, c.witness)
				assert.True(t, rendersAs(tb, c.b.phs, c.witness), "%q renders %q", c.b.text, c.witness)
			}
		})
	}
}

type (
	// The first pair: a user's profile and settings under one partition.
	djProfile struct {
		_    struct{} `Type:"Profile" PK:"USER#{id}" SK:"PROFILE"`
		ID   string   `dynamodbav:"id"`
		Name string   `dynamodbav:"name"`
	}
	djSetting struct {
		_      struct{} `Type:"Setting" PK:"USER#{userId}" SK:"{name}"`
		UserID string   `dynamodbav:"userId"`
		Name   string   `dynamodbav:"name"`
		Value  string   `dynamodbav:"value"`
	}
	djSettingFixed struct {
		_      struct{} `Type:"Setting" PK:"USER#{userId}" SK:"SETTING#{name}"`
		UserID string   `dynamodbav:"userId"`
		Name   string   `dynamodbav:"name"`
		Value  string   `dynamodbav:"value"`
	}
	// The second pair.
	djItem struct {
		_  struct{} `Type:"Item" PK:"P#{p}" SK:"ITEM#{id}"`
		P  string   `dynamodbav:"p"`
		ID string   `dynamodbav:"id"`
	}
	djNumbered struct {
		_ struct{} `Type:"Numbered" PK:"P#{p}" SK:"ITEM#{n:05}"`
		P string   `dynamodbav:"p"`
		N int      `dynamodbav:"n"`
	}
	// Disjoint neighbours.
	djOrder struct {
		_          struct{} `Type:"Order" PK:"CUST#{customerId}" SK:"ORDER#{orderId}"`
		CustomerID string   `dynamodbav:"customerId"`
		OrderID    string   `dynamodbav:"orderId"`
	}
	djOrderLine struct {
		_          struct{} `Type:"OrderLine" PK:"CUST#{customerId}" SK:"ORDERLINE#{orderId}"`
		CustomerID string   `dynamodbav:"customerId"`
		OrderID    string   `dynamodbav:"orderId"`
	}
	djLineItem struct {
		_          struct{} `Type:"LineItem" PK:"CUST#{customerId}" SK:"ORDER#{orderId}#ITEM#{n:03}"`
		CustomerID string   `dynamodbav:"customerId"`
		OrderID    string   `dynamodbav:"orderId"`
		N          int      `dynamodbav:"n"`
	}
	// Same sort keys, partitions that never meet: an integer cannot be a word.
	djByNumber struct {
		_  struct{} `Type:"ByNumber" PK:"{n}" SK:"META"`
		N  int64    `dynamodbav:"n"`
		At string   `dynamodbav:"at"`
	}
	djByWord struct {
		_    struct{} `Type:"ByWord" PK:"W{word}" SK:"META"`
		Word string   `dynamodbav:"word"`
	}
	// Sharded: shards 1-4 never render "SHARD9".
	djSharded struct {
		_     struct{} `Type:"Sharded" PK:"EV#SHARD{shard}" SK:"{id}" singletable:"shards=4"`
		ID    string   `dynamodbav:"id"`
		Shard int      `dynamodbav:"shard" singletable:"shard"`
	}
	djShardNine struct {
		_  struct{} `Type:"ShardNine" PK:"EV#SHARD9" SK:"{id}"`
		ID string   `dynamodbav:"id"`
	}
	djShardTwo struct {
		_  struct{} `Type:"ShardTwo" PK:"EV#SHARD2" SK:"{id}"`
		ID string   `dynamodbav:"id"`
	}
)

// Register refuses two entities whose primary keys are not provably disjoint,
// naming both, their templates, a key both render and a fix; disjoint neighbours
// register in any order.
func TestRegisterRefusesCollidingKeys(t *testing.T) {
	reg := func(tbl *Table, f func(*Table) error) error { return f(tbl) }
	profile := func(tbl *Table) error { _, err := Register[djProfile](tbl); return err }
	setting := func(tbl *Table) error { _, err := Register[djSetting](tbl); return err }
	item := func(tbl *Table) error { _, err := Register[djItem](tbl); return err }
	numbered := func(tbl *Table) error { _, err := Register[djNumbered](tbl); return err }

	refused := []struct {
		name        string
		first, then func(*Table) error
		names       []string // what the message must name
	}{
		{"a setting named PROFILE", profile, setting, []string{"djSetting", "djProfile", `"USER#{userId}" / "{name}"`, `"USER#{id}" / "PROFILE"`, `PK "USER#a", SK "PROFILE"`, `djSetting's SK "SETTING#{name}"`}},
		{"a profile beside settings", setting, profile, []string{"djProfile", "djSetting", `PK "USER#a", SK "PROFILE"`, `djSetting's SK "SETTING#{name}"`}},
		{"a number beside an id", item, numbered, []string{"djNumbered", "djItem", `"P#{p}" / "ITEM#{n:05}"`, `"P#{p}" / "ITEM#{id}"`, `SK "ITEM#11111"`, "static prefix"}},
		{"the same templates", func(tbl *Table) error { _, err := Register[rCollideA](tbl); return err },
			func(tbl *Table) error { _, err := Register[rCollideB](tbl); return err }, []string{"rCollideB", "rCollideA", `PK "X#a", SK "META"`}},
		{"a literal shard", func(tbl *Table) error { _, err := Register[djSharded](tbl); return err },
			func(tbl *Table) error { _, err := Register[djShardTwo](tbl); return err }, []string{"djShardTwo", "djSharded", `PK "EV#SHARD2"`}},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			tbl := offlineTable(t)
			require.NoError(t, reg(tbl, c.first))
			err := reg(tbl, c.then)
			require.ErrorIs(t, err, ErrInvalidEntity)
			var ee *EntityError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, c.names[0], ee.Entity)
			for _, name := range c.names {
				assert.Contains(t, err.Error(), name)
			}
			assert.Len(t, tbl.Describe().Entities, 1, "the second entity is not registered")
		})
	}

	allowed := map[string][]func(*Table) error{
		"orders, order lines and line items": {
			func(tbl *Table) error { _, err := Register[djOrder](tbl); return err },
			func(tbl *Table) error { _, err := Register[djOrderLine](tbl); return err },
			func(tbl *Table) error { _, err := Register[djLineItem](tbl); return err },
		},
		"settings with a prefix beside the profile": {
			profile, func(tbl *Table) error { _, err := Register[djSettingFixed](tbl); return err },
		},
		"integers beside words": {
			func(tbl *Table) error { _, err := Register[djByNumber](tbl); return err },
			func(tbl *Table) error { _, err := Register[djByWord](tbl); return err },
		},
		"a shard beyond the count": {
			func(tbl *Table) error { _, err := Register[djSharded](tbl); return err },
			func(tbl *Table) error { _, err := Register[djShardNine](tbl); return err },
		},
	}
	for name, regs := range allowed {
		t.Run(name, func(t *testing.T) {
			for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}} {
				tbl := offlineTable(t)
				for _, i := range order {
					if i < len(regs) {
						require.NoError(t, reg(tbl, regs[i]))
					}
				}
			}
		})
	}
}

// The scenario against DynamoDB Local: a setting named PROFILE, written
// by BatchPut, overwrote the user's profile. Now the setting cannot register; with
// the prefix the error suggests, it registers and the profile survives.
func TestCollidingKeysCannotOverwrite(t *testing.T) {
	tbl, client := newTestTable(t)
	ctx := context.Background()
	profiles := MustRegister[djProfile](tbl)
	_, err := profiles.Put(ctx, djProfile{ID: "u1", Name: "Ada"})
	require.NoError(t, err)

	_, err = Register[djSetting](tbl)
	require.ErrorIs(t, err, ErrInvalidEntity)
	assert.Contains(t, err.Error(), `SK "SETTING#{name}"`)

	settings := MustRegister[djSettingFixed](tbl)
	writes := client.count("BatchWriteItem")
	_, err = settings.BatchPut(ctx, []djSettingFixed{{UserID: "u1", Name: "PROFILE", Value: "dark"}, {UserID: "u1", Name: "theme", Value: "x"}})
	require.NoError(t, err)
	assert.Equal(t, writes+1, client.count("BatchWriteItem"))
	got, err := profiles.Get(ctx, djProfile{ID: "u1"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, djProfile{ID: "u1", Name: "Ada"}, got)
	s, err := settings.Get(ctx, djSettingFixed{UserID: "u1", Name: "PROFILE"}, Consistent())
	require.NoError(t, err)
	assert.Equal(t, "dark", s.Value)
	_, err = settings.BatchDelete(ctx, []djSettingFixed{{UserID: "u1", Name: "PROFILE"}})
	require.NoError(t, err)
	_, err = profiles.Get(ctx, djProfile{ID: "u1"}, Consistent())
	require.NoError(t, err, "deleting the setting left the profile")
}

// exactLangs reports whether newKeyLang is exact for tm: no time and no shard.
func exactLangs(tm *Template, phs []phLang) bool {
	pi := 0
	for _, s := range tm.k.Segs {
		if s.Name == "" {
			continue
		}
		if s.Format.IsTime() || phs[pi].Kind == keytmpl.KindTime || phs[pi].Shards > 0 {
			return false
		}
		pi++
	}
	return true
}

// fuzzPhLangs gives tm's placeholders kinds from the bytes of kinds, as far as
// their formats allow.
func fuzzPhLangs(tm *Template, kinds string) []phLang {
	out := make([]phLang, 0, len(tm.k.Names))
	pi := 0
	for _, s := range tm.k.Segs {
		if s.Name == "" {
			continue
		}
		var k byte
		if pi < len(kinds) {
			k = kinds[pi]
		}
		pi++
		switch {
		case s.Format == keytmpl.Pad:
			out = append(out, []phLang{phI, phU, phShard(int(k%20) + 1)}[k%3])
		case s.Format.IsTime():
			out = append(out, phT)
		default:
			out = append(out, []phLang{phS, phI, phU, phT, phShard(int(k/5%20) + 1)}[k%5])
		}
	}
	return out
}

// fuzzCandidates returns small values for a placeholder of kind ph, drawn from
// the text of both templates so that they can meet each other's literals.
func fuzzCandidates(ph phLang, texts []string, delim byte) []any {
	var words []string
	for _, text := range texts {
		for w := range strings.FieldsFuncSeq(text, func(r rune) bool { return r == rune(delim) || r == '{' || r == '}' }) {
			words = append(words, w)
			for i := 1; i < len(w) && i < 4; i++ {
				words = append(words, w[:i], w[len(w)-i:])
			}
		}
	}
	words = append(words, "a", "0", "1", "00", "-1", "10")
	var out []any
	seen := map[string]bool{}
	add := func(key string, v any) {
		if !seen[key] && len(out) < 24 {
			seen[key] = true
			out = append(out, v)
		}
	}
	switch {
	case ph.Shards > 0:
		for n := 1; n <= ph.Shards && n <= 24; n++ {
			add(strconv.Itoa(n), n)
		}
	case ph.Kind == keytmpl.KindString:
		for _, w := range words {
			if w != "" && utf8.ValidString(w) && strings.IndexByte(w, delim) < 0 {
				add(w, w)
			}
		}
	case ph.Kind == keytmpl.KindInt || ph.Kind == keytmpl.KindUint:
		for _, w := range append(words, "0", "7", "42", "99999", "12345", "1000000000") {
			if n, err := strconv.ParseInt(w, 10, 64); err == nil && (ph.Kind == keytmpl.KindInt || n >= 0) {
				add(strconv.FormatInt(n, 10), n)
			}
		}
	case ph.Kind == keytmpl.KindTime:
		for _, tm := range []time.Time{time.Unix(0, 0), time.Date(2024, 5, 1, 9, 30, 0, 0, time.UTC), time.Date(2001, 9, 9, 1, 46, 40, 0, time.UTC)} {
			add(tm.String(), tm)
		}
	}
	return out
}

// renderings renders tm with every combination of candidate values (at most a
// few thousand).
func renderings(tm *Template, phs []phLang, texts []string) map[string]bool {
	cands := make([][]any, len(phs))
	total := 1
	for i, ph := range phs {
		cands[i] = fuzzCandidates(ph, texts, tm.k.Delim)
		total *= max(len(cands[i]), 1)
		if total > 5000 {
			cands[i] = cands[i][:1]
		}
	}
	out := map[string]bool{}
	vals := map[string]any{}
	var rec func(i int)
	rec = func(i int) {
		if i == len(phs) {
			if k, err := tm.Render(vals); err == nil {
				out[k] = true
			}
			return
		}
		for _, v := range cands[i] {
			vals[tm.k.Names[i]] = v
			rec(i + 1)
		}
	}
	rec(0)
	return out
}

// FuzzDisjointKeys checks commonKey against brute force: when it says two
// templates are disjoint, no rendering of small values collides; when it gives a
// key, both templates render that key.
func FuzzDisjointKeys(f *testing.F) {
	f.Add("PROFILE", "{name}", "", "\x00")
	f.Add("ITEM#{id}", "ITEM#{n:05}", "\x00", "\x01")
	f.Add("ORDER#{id}", "ORDERLINE#{id}", "", "")
	f.Add("{a}#{b}", "{c}", "", "")
	f.Add("{n}", "{m:05}", "\x01", "\x02")
	f.Add("E#{s}", "E#7", "\x04", "")
	f.Add("{t:unix}", "{n:010}", "", "\x02")
	f.Add("{x}", "-12", "\x01", "")
	f.Fuzz(func(t *testing.T, textA, textB, kindsA, kindsB string) {
		ta, errA := ParseTemplate(textA, '#')
		tb, errB := ParseTemplate(textB, '#')
		if errA != nil || errB != nil || len(ta.k.Names) > 3 || len(tb.k.Names) > 3 || len(textA) > 64 || len(textB) > 64 {
			return
		}
		pa, pb := fuzzPhLangs(ta, kindsA), fuzzPhLangs(tb, kindsB)
		key, meet := commonKey(newKeyLang(ta, pa), newKeyLang(tb, pb))
		if meet {
			// Strings, integers and padded numbers are exact: both render the key.
			// Times and shards over-approximate (month 13, shard 9 of 4): both
			// templates at least parse it.
			if exactLangs(ta, pa) && exactLangs(tb, pb) {
				if !rendersAs(ta, pa, key) || !rendersAs(tb, pb, key) {
					t.Fatalf("%q %v and %q %v: the common key %q is not rendered by both", textA, pa, textB, pb, key)
				}
			} else if _, err := ta.Extract(key); err != nil {
				t.Fatalf("%q %v: the common key %q: %v", textA, pa, key, err)
			} else if _, err := tb.Extract(key); err != nil {
				t.Fatalf("%q %v: the common key %q: %v", textB, pb, key, err)
			}
			return
		}
		texts := []string{textA, textB}
		ra := renderings(ta, pa, texts)
		for k := range renderings(tb, pb, texts) {
			if ra[k] {
				t.Fatalf("%q %v and %q %v are called disjoint, but both render %q", textA, pa, textB, pb, k)
			}
		}
	})
}

type (
	djNumA struct {
		_   struct{} `Type:"NumA" PK:"{id}" SK:"{seq}"`
		ID  int      `dynamodbav:"id"`
		Seq int      `dynamodbav:"seq"`
	}
	djNumB struct {
		_    struct{} `Type:"NumB" PK:"{acct}" SK:"{n}"`
		Acct int      `dynamodbav:"acct"`
		N    int      `dynamodbav:"n"`
	}
)

// On a table whose key attributes hold numbers no prefix can separate two
// entities: the error says so rather than suggesting one.
func TestRegisterRefusesCollidingNumberKeys(t *testing.T) {
	tbl, err := NewTable(newCountingClient(nil), "number-keys", WithKeyType("PK", types.ScalarAttributeTypeN), WithKeyType("SK", types.ScalarAttributeTypeN))
	require.NoError(t, err)
	_, err = Register[djNumA](tbl)
	require.NoError(t, err)
	_, err = Register[djNumB](tbl)
	require.ErrorIs(t, err, ErrInvalidEntity)
	assert.Contains(t, err.Error(), `collide with djNumA's "{id}" / "{seq}"`)
	assert.Contains(t, err.Error(), "a number or binary key holds no prefix")
	assert.NotContains(t, err.Error(), "e.g.")
}
