// Package suggest finds, for a name that matches nothing, the candidate it was
// most likely a typo of, for the "did you mean" of error messages.
package suggest

import (
	"strconv"
	"strings"
)

// DidYouMean returns ` (did you mean "x"?)` for the candidate closest to name, or
// "" when none is close: within a third of the name's length in edits (at least
// one), ignoring case. Ties go to the earlier candidate.
func DidYouMean(name string, candidates []string) string {
	best, ok := closest(name, candidates)
	if !ok {
		return ""
	}
	return " (did you mean " + strconv.Quote(best) + "?)"
}

// closest returns the candidate nearest to name by edit distance, ignoring case,
// if it is near enough to be a likely typo (see DidYouMean).
func closest(name string, candidates []string) (string, bool) {
	limit := max(1, len(name)/3)
	lower := strings.ToLower(name)
	best, bestD := "", limit+1
	for _, c := range candidates {
		if c == name {
			continue
		}
		if d := editDistance(lower, strings.ToLower(c), bestD); d < bestD {
			best, bestD = c, d
		}
	}
	return best, best != ""
}

// editDistance is the Levenshtein distance between a and b, by bytes, with a
// transposition of two adjacent bytes counting as one edit (optimal string
// alignment). It returns limit as soon as the distance reaches it.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	// Three rows of the dynamic programme: before last, last and current.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
			rowMin = min(rowMin, d)
		}
		if rowMin >= limit {
			return limit
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(b)], limit)
}
