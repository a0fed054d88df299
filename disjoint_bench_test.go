package singletable

import "testing"

type bdA struct {
	_       struct{} `Type:"BdA" PK:"ORDER#{id}" SK:"ORDER#{created:time}#{n:05}"`
	ID      string   `dynamodbav:"id"`
	Created int64    `dynamodbav:"created"`
	N       int64    `dynamodbav:"n"`
}

type bdB struct {
	_    struct{} `Type:"BdB" PK:"ORDER#{id}" SK:"LINE#{line}#{sku}"`
	ID   string   `dynamodbav:"id"`
	Line int      `dynamodbav:"line"`
	SKU  string   `dynamodbav:"sku"`
}

type bdC struct {
	_  struct{} `Type:"BdC" PK:"USER#{id}" SK:"PROFILE"`
	ID string   `dynamodbav:"id"`
}

type bdD struct {
	_     struct{} `Type:"BdD" PK:"USER#{id}" SK:"SESSION#{token}"`
	ID    string   `dynamodbav:"id"`
	Token string   `dynamodbav:"token"`
}

// BenchmarkRegisterDisjoint times registering four entities on one table, whose
// key templates Register proves disjoint pair by pair (checkDisjoint).
func BenchmarkRegisterDisjoint(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		tbl, err := NewTable(benchWriteClient{}, "bench")
		if err != nil {
			b.Fatal(err)
		}
		MustRegister[bdA](tbl)
		MustRegister[bdB](tbl)
		MustRegister[bdC](tbl)
		MustRegister[bdD](tbl)
	}
}

// BenchmarkCommonKey times the search for a key two templates both render.
func BenchmarkCommonKey(b *testing.B) {
	_, la := sideLang(b, side{"ORDER#{id}#{t:time}#{n:05}", []phLang{phS, phT, phU}}, '#')
	_, lb := sideLang(b, side{"ORDER#{id}#LINE#{line}", []phLang{phS, phI}}, '#')
	b.ReportAllocs()
	for b.Loop() {
		commonKey(la, lb)
	}
}
