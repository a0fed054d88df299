// Command github is the repository and issues part of reference 000's GitHub
// model: a repository and its issues in one partition, GSI4, the issues of a
// repository by status, and GSI5, by priority, which version 2 of the issue
// schema adds.
//
// Steps 1 to 6 open issues, list and read them, and read the open issues on
// GSI4 right after opening one, waiting (with backoff) until the eventually
// consistent index shows it; then close an issue and wait until GSI4 shows it
// moved before reading both status lists. They print what each wait took.
//
// Steps 7 to 10 are reference 000's lazy migration. Issues written by version
// 1 of the program have no priority and no GSI5 keys, so GSI5 does not list
// them. Reading one migrates it: it gets the priority its labels call for and
// is written back at version 2, after which GSI5 lists it. A sweep migrates
// the rest, rate-limited, printing its progress; then GSI5 lists every
// critical issue.
//
// The key map and the schema versions are in model.go, one method per access
// pattern in store.go, what version 1 wrote in version1.go.
//
// Run it with
//
//	go run ./examples/github
//
// with DYNAMODB_ENDPOINT naming a DynamoDB Local: `make examples` starts one and
// runs every example with it set; without it, the example says how to get one. It
// creates a table of its own and deletes it when done. DynamoDB Local updates
// its indexes at once, so here each wait succeeds on its first read; the tests
// run the example again with an injected index lag.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable/singletable"
)

func main() {
	describe := flag.Bool("describe", false, "print the table design (Table.Describe) as Markdown and exit, without DynamoDB Local")
	flag.Parse()
	if *describe {
		s, err := NewStore(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "github")
		if err != nil {
			fmt.Fprintln(os.Stderr, "github:", err)
			os.Exit(1)
		}
		fmt.Print(s.Table.Describe().Markdown())
		return
	}
	if err := start(); err != nil {
		fmt.Fprintln(os.Stderr, "github:", err)
		os.Exit(1)
	}
}

// start runs the example against the DynamoDB Local at DYNAMODB_ENDPOINT, on
// a table of its own (runLocal, local.go). On AWS: dynamodb.NewFromConfig(cfg).
func start() error {
	return runLocal("github", func(ctx context.Context, endpoint, tableName string) error {
		return run(ctx, localClient(endpoint), tableName, os.Stdout)
	})
}

// t0 is the time the sample repository is created; the sample data is fixed so
// that the output is the same on every run, but for the waits' timings.
var t0 = time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)

// sampleRepo is the repository the example creates.
func sampleRepo() Repo {
	return Repo{Owner: "acme", Name: "rocket", Description: "A rocket, one issue at a time", CreatedAt: t0}
}

// sampleIssues are the drafts of the issues the example opens first, an hour
// apart; they become #1, #2 and #3.
func sampleIssues() []Issue {
	drafts := []struct {
		title, author string
		labels        []string
	}{
		{"Launch checklist is out of date", "ann", []string{"docs"}},
		{"Fuel gauge reads empty when full", "bob", []string{LabelBug, LabelCritical}},
		{"Add a countdown timer", "cy", nil},
	}
	issues := make([]Issue, len(drafts))
	for i, d := range drafts {
		issues[i] = Issue{Owner: "acme", Repo: "rocket", Title: d.title, Author: d.author, Labels: d.labels, CreatedAt: t0.Add(time.Duration(i+1) * time.Hour)}
	}
	return issues
}

// lateIssue is the issue opened right before the open issues are read on GSI4.
func lateIssue() Issue {
	return Issue{Owner: "acme", Repo: "rocket", Title: "Countdown skips 7", Author: "ann", Labels: []string{LabelBug}, CreatedAt: t0.Add(24 * time.Hour)}
}

// oldIssueCount is how many issues version 1 of the program left in
// oldRepo: enough for the sweep to take a few pages at its rate.
const oldIssueCount = 240

// oldRepo is the repository that version 1 of the program wrote, with its
// oldIssueCount issues, a year before the sample repository.
func oldRepo() Repo {
	return Repo{Owner: "acme", Name: "launchpad", Description: "The launch pad, tracked since 2023", CreatedAt: t0.AddDate(-1, 0, 0), IssueCount: oldIssueCount}
}

// oldIssues are oldRepo's issues #1 to #oldIssueCount as version 1 read them
// (no priority), a day apart. Every 25th from #7 on is critical, every 4th
// from #1 on a bug, every 10th documentation; every 3rd is closed.
func oldIssues() []Issue {
	r := oldRepo()
	authors := []string{"ann", "bob", "cy", "dee"}
	issues := make([]Issue, oldIssueCount)
	for i := range issues {
		number := int64(i + 1)
		is := Issue{Owner: r.Owner, Repo: r.Name, Number: number, Author: authors[i%len(authors)], Status: StatusOpen, CreatedAt: r.CreatedAt.Add(time.Duration(number) * 24 * time.Hour)}
		switch {
		case number%25 == 7:
			is.Title, is.Labels = fmt.Sprintf("Clamp %d does not release", number), []string{LabelBug, LabelCritical}
		case number%4 == 1:
			is.Title, is.Labels = fmt.Sprintf("Sensor %d reads high", number), []string{LabelBug}
		case number%10 == 0:
			is.Title, is.Labels = fmt.Sprintf("Document procedure %d", number), []string{"docs"}
		default:
			is.Title = fmt.Sprintf("Idea %d", number)
		}
		if number%3 == 0 {
			is.Status = StatusClosed
		}
		issues[i] = is
	}
	return issues
}

// readFirst is the old issue that step 8 reads, a critical one.
const readFirst = 32

// sweepRate caps the sweep of step 9, in issues migrated a second: low
// enough that the cap shows against DynamoDB Local.
const sweepRate = 100

// run creates a table named tableName, runs every access pattern on it, printing
// each step to out, and deletes the table. It fails if a step goes wrong or shows
// something other than what the model promises.
func run(ctx context.Context, client singletable.Client, tableName string, out io.Writer) (err error) {
	var migrationErrs errorList
	s, err := NewStore(client, tableName, func(o *StoreOptions) { o.OnMigrationError = migrationErrs.add })
	if err != nil {
		return err
	}
	if err := s.Table.CreateTable(ctx); err != nil {
		return err
	}
	defer deleteTable(ctx, s.Table, tableName, out, &err)
	p := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	p("created table %s: PK/SK, GSI4 (issues by status: GSI4PK = REPO#{owner}#{name}, GSI4SK = ISSUE#{status}#{number:08}),", tableName)
	p("  GSI5 (issues by priority: GSI5PK = REPO#{owner}#{name}, GSI5SK = PRIORITY#{priority}#{number:08})")
	const owner, name = "acme", "rocket"

	// 1. The repository.
	p("\n1. Create repo %s/%s (conditional PutItem, PK = SK = REPO#%s#%s)", owner, name, owner, name)
	repo, err := s.CreateRepo(ctx, sampleRepo())
	if err != nil {
		return err
	}
	p("   created: %q, %d issues", repo.Description, repo.IssueCount)
	if _, err := s.CreateRepo(ctx, sampleRepo()); !errors.Is(err, singletable.ErrAlreadyExists) {
		return fmt.Errorf("second create of %s/%s: want ErrAlreadyExists, got %v", owner, name, err)
	}
	p("   again: refused, it exists (errors.Is(err, singletable.ErrAlreadyExists))")

	// 2. Open issues.
	p("\n2. Open issues (UpdateItem ADD issueCount 1 on the repo for the number, then a conditional PutItem of the issue at schema version 2)")
	for _, d := range sampleIssues() {
		is, err := s.OpenIssue(ctx, d)
		if err != nil {
			return err
		}
		p("   #%d %-4s %q by %s (SK %s, GSI4SK %s), labels %v: %s (GSI5SK %s)", is.Number, is.Status, is.Title, is.Author, issueSK(is), statusSK(is), is.Labels, is.Priority, prioritySK(is))
	}
	if _, err := s.OpenIssue(ctx, Issue{Owner: owner, Repo: "no-such-repo", Title: "Hello?", Author: "zoe", CreatedAt: t0}); !errors.Is(err, singletable.ErrNotFound) {
		return fmt.Errorf("an issue in a missing repo: want ErrNotFound, got %v", err)
	}
	p("   an issue in %s/no-such-repo: refused, no such repo (errors.Is(err, singletable.ErrNotFound))", owner)

	// 3. List issues.
	p("\n3. Issues of %s/%s: Query PK = REPO#%s#%s AND begins_with(SK, \"ISSUE#\")", owner, name, owner, name)
	issues, err := s.ListIssues(ctx, owner, name)
	if err != nil {
		return err
	}
	for _, is := range issues {
		p("   #%d %-6s %q by %s, %s", is.Number, is.Status, is.Title, is.Author, is.CreatedAt.Format(time.DateTime))
	}

	// 4. Get an issue.
	p("\n4. Issue #2: GetItem PK = REPO#%s#%s, SK = ISSUE#00000002", owner, name)
	two, err := s.GetIssue(ctx, owner, name, 2)
	if err != nil {
		return err
	}
	p("   #%d %s %q by %s", two.Number, two.Status, two.Title, two.Author)

	// 5. Read your write on GSI4.
	p("\n5. Open an issue and list the open issues on GSI4 right away")
	late, err := s.OpenIssue(ctx, lateIssue())
	if err != nil {
		return err
	}
	p("   opened #%d %q", late.Number, late.Title)
	// GSI4 is eventually consistent: wait until it shows the new issue, as
	// written, before reading it.
	_, stats, err := s.Issues.WaitIndexed(ctx, indexByStatus, late)
	if err != nil {
		return err
	}
	p("   WaitIndexed(GSI4, #%d): %s", late.Number, describe(stats))
	open, err := s.IssuesByStatus(ctx, owner, name, StatusOpen)
	if err != nil {
		return err
	}
	p("   OPEN, newest first (GSI4PK = REPO#%s#%s AND begins_with(GSI4SK, \"ISSUE#OPEN#\")): %s", owner, name, numbers(open))
	if !slices.ContainsFunc(open, func(is Issue) bool { return is.Number == late.Number }) {
		return fmt.Errorf("GSI4 does not list #%d as open after the wait: %s", late.Number, numbers(open))
	}

	// 6. Close an issue: it moves from one status list to the other.
	p("\n6. Close #%d (UpdateItem status = CLOSED if OPEN; the same request rewrites GSI4SK %s -> ISSUE#CLOSED#%08d)", two.Number, statusSK(two), two.Number)
	closed, err := s.CloseIssue(ctx, owner, name, two.Number)
	if err != nil {
		return err
	}
	stats, err = s.Issues.WaitMoved(ctx, indexByStatus, two, closed)
	if err != nil {
		return err
	}
	p("   WaitMoved(GSI4, open #%d, closed #%d): %s", two.Number, closed.Number, describe(stats))
	open, err = s.IssuesByStatus(ctx, owner, name, StatusOpen)
	if err != nil {
		return err
	}
	closedList, err := s.IssuesByStatus(ctx, owner, name, StatusClosed)
	if err != nil {
		return err
	}
	p("   OPEN:   %s", numbers(open))
	p("   CLOSED: %s", numbers(closedList))
	if slices.ContainsFunc(open, func(is Issue) bool { return is.Number == two.Number }) || numbers(closedList) != fmt.Sprintf("#%d", two.Number) {
		return fmt.Errorf("after closing #%d: open %s, closed %s", two.Number, numbers(open), numbers(closedList))
	}
	if _, err := s.CloseIssue(ctx, owner, name, two.Number); !errors.Is(err, singletable.ErrCondition) {
		return fmt.Errorf("closing #%d twice: want ErrCondition, got %v", two.Number, err)
	}
	p("   closing #%d again: refused, it is not OPEN (errors.Is(err, singletable.ErrCondition))", two.Number)

	if err := migrate(ctx, s, p); err != nil {
		return err
	}
	return migrationErrs.err()
}

// migrate runs steps 7 to 10: it writes oldRepo's issues as version 1 did,
// migrates one by reading it, and sweeps the rest.
func migrate(ctx context.Context, s *Store, p func(string, ...any)) error {
	old := oldRepo()
	owner, name := old.Owner, old.Name
	census := func() (string, error) {
		vs, err := schemaVersions(ctx, s.Table, owner, name)
		if err != nil {
			return "", err
		}
		return describeVersions(vs), nil
	}
	highQuery := fmt.Sprintf("GSI5PK = REPO#%s#%s AND begins_with(GSI5SK, \"PRIORITY#high#\")", owner, name)

	// 7. What version 1 left.
	p("\n7. Version 1 of the program wrote repo %s/%s and %d issues: a PutItem each through the client, no _schema, no priority, no GSI5 keys", owner, name, oldIssueCount)
	if err := putVersion1(ctx, s.Table.Client(), s.Table.Name(), old, oldIssues()); err != nil {
		return err
	}
	versions, err := census()
	if err != nil {
		return err
	}
	p("   issues by schema version (Query of the table, projecting _schema): %s", versions)
	high, err := s.IssuesByPriority(ctx, owner, name, PriorityHigh)
	if err != nil {
		return err
	}
	p("   high priority on GSI5 (%s): %s", highQuery, numbers(high))
	if len(high) != 0 {
		return fmt.Errorf("GSI5 lists version 1 issues of %s/%s: %s", owner, name, numbers(high))
	}

	// 8. A read migrates.
	p("\n8. Issue #%d: GetItem; it is at version 1, so it is migrated on read and written back (conditional PutItem)", readFirst)
	first, err := s.GetIssue(ctx, owner, name, readFirst)
	if err != nil {
		return err
	}
	p("   #%d %q, labels %v: %s (GSI5SK %s)", first.Number, first.Title, first.Labels, first.Priority, prioritySK(first))
	_, stats, err := s.Issues.WaitIndexed(ctx, indexByPriority, first)
	if err != nil {
		return err
	}
	p("   WaitIndexed(GSI5, #%d): %s", first.Number, describe(stats))
	high, err = s.IssuesByPriority(ctx, owner, name, PriorityHigh)
	if err != nil {
		return err
	}
	p("   high priority on GSI5: %s", numbers(high))
	if numbers(high) != fmt.Sprintf("#%d", readFirst) {
		return fmt.Errorf("GSI5 after reading #%d: %s", readFirst, numbers(high))
	}
	if versions, err = census(); err != nil {
		return err
	}
	p("   issues by schema version: %s", versions)

	// 9. The sweep migrates the rest.
	p("\n9. Sweep: parallel Scan (4 segments, pages of 50) filtered to Type = Issue AND _schema < 2 or missing;")
	p("   each issue migrated and written back as a read would, at most %d a second", sweepRate)
	// The old issues share a partition, so one segment finds them all; the
	// others' pages migrate nothing, and are not printed. Progress is
	// called one page at a time, so printed needs no lock.
	var printed int64
	swept, err := s.Issues.Sweep(ctx, singletable.Segments(4), singletable.PageSize(50), singletable.SweepRate(sweepRate),
		singletable.OnSweepProgress(func(st singletable.SweepStats) {
			if st.Migrated > printed {
				printed = st.Migrated
				p("   progress: seen %3d, migrated %3d in %5s: %3.0f/s", st.Seen, st.Migrated, st.Elapsed.Round(10*time.Millisecond), st.PerSecond())
			}
		}))
	if err != nil {
		return err
	}
	p("   swept: %s", describeSweep(swept))
	if want := int64(oldIssueCount - 1); swept.Migrated != want || swept.Failed != 0 {
		return fmt.Errorf("sweep: %s, want %d migrated", describeSweep(swept), want)
	}
	if versions, err = census(); err != nil {
		return err
	}
	p("   issues by schema version: %s", versions)
	again, err := s.Issues.Sweep(ctx)
	if err != nil {
		return err
	}
	p("   again: %s", describeSweep(again))
	if again.Migrated != 0 {
		return fmt.Errorf("second sweep: %s, want none migrated", describeSweep(again))
	}

	// 10. GSI5 lists every critical issue.
	var want []int64
	for _, is := range slices.Backward(oldIssues()) {
		if PriorityOf(is.Labels) == PriorityHigh {
			want = append(want, is.Number)
		}
	}
	p("\n10. High priority issues of %s/%s on GSI5, newest first (%s)", owner, name, highQuery)
	// The sweep's writes reach GSI5 a moment later on DynamoDB: wait until it
	// lists as many as were written.
	high, stats, err = singletable.WaitFor(ctx,
		func(ctx context.Context) ([]Issue, error) { return s.IssuesByPriority(ctx, owner, name, PriorityHigh) },
		func(high []Issue) bool { return len(high) == len(want) })
	if err != nil {
		return err
	}
	p("   WaitFor(GSI5 lists %d): %s", len(want), describe(stats))
	p("   %s", numbers(high))
	if got := issueNumbers(high); !slices.Equal(got, want) {
		return fmt.Errorf("GSI5 high priority after the sweep: %s", numbers(high))
	}
	for _, pr := range []Priority{PriorityMedium, PriorityLow} {
		list, err := s.IssuesByPriority(ctx, owner, name, pr)
		if err != nil {
			return err
		}
		p("   %-7s %d issues", pr+":", len(list))
	}
	return nil
}

// describe says what a wait took.
func describe(s singletable.WaitStats) string {
	reads := "index reads"
	if s.Attempts == 1 {
		reads = "index read"
	}
	return fmt.Sprintf("%d %s in %s", s.Attempts, reads, s.Elapsed.Round(time.Millisecond))
}

// issueSK, statusSK and prioritySK are an issue's SK, GSI4SK and GSI5SK, as
// the table holds them.
func issueSK(is Issue) string    { return fmt.Sprintf("ISSUE#%08d", is.Number) }
func statusSK(is Issue) string   { return fmt.Sprintf("ISSUE#%s#%08d", is.Status, is.Number) }
func prioritySK(is Issue) string { return fmt.Sprintf("PRIORITY#%s#%08d", is.Priority, is.Number) }

// describeSweep says what a sweep did.
func describeSweep(s singletable.SweepStats) string {
	return fmt.Sprintf("seen %d, migrated %d, lost %d, failed %d in %s (%.0f/s)", s.Seen, s.Migrated, s.Lost, s.Failed, s.Elapsed.Round(time.Millisecond), s.PerSecond())
}

// describeVersions says how many items are at each schema version.
func describeVersions(vs map[int]int) string {
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(vs)) {
		parts = append(parts, fmt.Sprintf("%d at version %d", vs[v], v))
	}
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, ", ")
}

// errorList collects errors; it is safe for concurrent use.
type errorList struct {
	mu   sync.Mutex // protects errs
	errs []error
}

func (l *errorList) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *errorList) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return errors.Join(l.errs...)
}

func issueNumbers(issues []Issue) []int64 {
	out := make([]int64, len(issues))
	for i, is := range issues {
		out[i] = is.Number
	}
	return out
}

func numbers(issues []Issue) string {
	if len(issues) == 0 {
		return "(none)"
	}
	ns := make([]string, len(issues))
	for i, is := range issues {
		ns[i] = fmt.Sprintf("#%d", is.Number)
	}
	return strings.Join(ns, " ")
}
