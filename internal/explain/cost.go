package explain

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable/singletable/internal/attrvalue"
)

// The cost model of Explain: DynamoDB's capacity units for a request, from the
// sizes it carries (a Put's item) and an assumed size for those it does not (the
// items a read finds, the item an Update or a Delete touches).
//
//   - Writes: 1 WCU per 1 KB of the item (rounded up, per item), the larger of
//     the item before and after; transactional writes (TransactWriteItems, its
//     condition checks too) 2 WCU per KB. A write also costs, in each index
//     holding the item, 1 WCU per KB of what the index projects (counted for a
//     Put, whose item is known). An Update or a Delete is reckoned for the
//     assumed item size in each index that can hold the entity's items: a
//     Delete one write, an Update two where it changes the index's key (the
//     entry deleted and put again), one where it changes an attribute the index
//     projects.
//   - Reads by key: 1 RCU per 4 KB of the item when strongly consistent, 0.5
//     eventually consistent (each item of a batch rounded up on its own);
//     transactional reads 2 RCU per 4 KB. A key without an item costs as an
//     item of up to 4 KB.
//   - A Query or Scan page: its items' sizes summed, then 1 RCU per 4 KB (0.5
//     eventually consistent; every read of a global index is), up to 1 MB a
//     page: Limit items at most, else 1 MB (256 RCU consistent, 128
//     eventually). Filters and Select COUNT do not lower it: they apply after
//     the read.
//   - A fan-out (QueryShards, AllShards) sends one Query per shard; a paginated
//     read one request per page; Explain shows the first page of each.

// Cost is what a request consumes in capacity units (the root package's Cost).
type Cost struct {
	ReadUnits, WriteUnits float64
	Basis                 string
}

// String renders the cost and its basis.
func (c Cost) String() string {
	return c.Total() + " (" + c.Basis + ")"
}

// Total renders the units alone.
func (c Cost) Total() string {
	switch {
	case c.ReadUnits > 0 && c.WriteUnits > 0:
		return unitsText(c.WriteUnits, "WCU") + " + " + unitsText(c.ReadUnits, "RCU")
	case c.ReadUnits > 0:
		return unitsText(c.ReadUnits, "RCU")
	}
	return unitsText(c.WriteUnits, "WCU")
}

func unitsText(n float64, unit string) string {
	return strconv.FormatFloat(n, 'f', -1, 64) + " " + unit
}

const (
	readBlock  = 4 << 10
	writeBlock = 1 << 10
	pageBytes  = 1 << 20 // the most a Query or Scan page reads
)

// blocks is how many units of block bytes n bytes take, at least 1.
func blocks(n, block int) float64 {
	if n <= 0 {
		return 1
	}
	return float64((n + block - 1) / block)
}

// Cost returns what the request consumes when each item it reads, updates or
// deletes without carrying it is itemSize bytes (0: up to 1 KB); a Put counts its
// own item. The figures are estimates where [Cost.Basis] says so.
func (r *Request) Cost(itemSize int) Cost {
	assumed := "items of up to 1 KB"
	if itemSize <= 0 {
		itemSize = writeBlock
	} else {
		assumed = "items of " + strconv.Itoa(itemSize) + " bytes"
	}
	read := func(consistent bool) float64 {
		if consistent {
			return blocks(itemSize, readBlock)
		}
		return blocks(itemSize, readBlock) / 2
	}
	rate := func(a Action) string {
		if a.Consistent {
			return "1 RCU per 4 KB (strongly consistent)"
		}
		return "0.5 RCU per 4 KB (eventually consistent)"
	}
	var c Cost
	switch r.API {
	case "GetItem", "BatchGetItem":
		for _, a := range r.Actions {
			c.ReadUnits += read(a.Consistent)
		}
		c.Basis = rate(r.Actions[0]) + " of each item, rounded up per item; estimated for " + assumed
	case "TransactGetItems":
		c.ReadUnits = 2 * blocks(itemSize, readBlock) * float64(len(r.Actions))
		c.Basis = "2 RCU per 4 KB of each item, transactional; estimated for " + assumed
	case "Query", "Scan":
		a := r.Actions[0]
		n, bound := a.Limit*itemSize, "Limit "+strconv.Itoa(a.Limit)+" × "+assumed
		if a.Limit == 0 || n > pageBytes {
			n, bound = pageBytes, "a full page of 1 MB"
		}
		c.ReadUnits = blocks(n, readBlock)
		if !a.Consistent {
			c.ReadUnits /= 2
		}
		c.Basis = "a page: " + rate(a) + " of the items read, summed; at most " + bound + ", filters do not lower it; each further page costs again"
	case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
		c.WriteUnits, c.Basis = r.writeUnits(itemSize, assumed)
	}
	return c
}

// writeUnits reckons the write units of a write request.
func (r *Request) writeUnits(itemSize int, assumed string) (float64, string) {
	n, puts, others := 0.0, false, false
	for i, a := range r.Actions {
		switch a.Op {
		case "Put":
			puts = true
			size, ix := a.Bytes, 0.0
			if i < len(r.Size) {
				size, ix = r.Size[i], r.IxCost[i]
			}
			n += blocks(size, writeBlock) + ix
		default:
			others = true
			n += blocks(itemSize, writeBlock)
			if i < len(r.IxWhole) {
				n += float64(r.IxWhole[i])*blocks(itemSize, writeBlock) + float64(r.IxPart[i])
			}
		}
	}
	basis := "1 WCU per KB of each item"
	if r.API == "TransactWriteItems" {
		n *= 2
		basis = "2 WCU per KB of each item, transactional"
	}
	if puts {
		basis += "; a Put's from its item, and from what each index holding it projects, more if it replaces a larger item"
	}
	if others {
		basis += "; an Update's, Delete's or condition check's estimated for " + assumed +
			", and in each index that can hold the item: a Delete 1 write, an Update 2 where it changes the index's key, 1 where it changes an attribute the index projects (the whole item's size where it projects ALL, 1 WCU otherwise)"
	}
	return n, basis
}

// Total returns the cost of every request, summed (see [Request.Cost]).
func Total(reqs []Request, itemSize int) Cost {
	var c Cost
	for i := range reqs {
		rc := reqs[i].Cost(itemSize)
		c.ReadUnits += rc.ReadUnits
		c.WriteUnits += rc.WriteUnits
	}
	c.Basis = fmt.Sprintf("the sum of %d requests' costs", len(reqs))
	return c
}

// indexWriteUnits returns the write units item costs in the table's indexes
// that hold it: those whose key attributes it has, 1 WCU per KB of what each
// projects (ALL: the whole item; KEYS_ONLY: the table's and the index's keys;
// INCLUDE: those and the attributes named, the type and schema attributes among
// them).
func (s *Schema) indexWriteUnits(item map[string]types.AttributeValue) float64 {
	n := 0.0
	for _, ix := range s.Indexes {
		keys := ix.Keys
		holds := true
		for _, k := range keys {
			if _, ok := item[k]; k != "" && !ok {
				holds = false
			}
		}
		if !holds {
			continue
		}
		if ix.Projection == "" || ix.Projection == types.ProjectionTypeAll {
			n += blocks(attrvalue.Size(item), writeBlock)
			continue
		}
		proj := map[string]types.AttributeValue{}
		names := append(append(append([]string(nil), s.Keys...), keys...), ix.NonKey...)
		if ix.Projection == types.ProjectionTypeInclude {
			names = append(names, s.TypeAttr, s.SchemaAttr)
		}
		for _, k := range names {
			if av, ok := item[k]; ok {
				proj[k] = av
			}
		}
		n += blocks(attrvalue.Size(proj), writeBlock)
	}
	return n
}
