// Command github is the repository and issues part of reference 000's GitHub
// model: a repository and its issues in one partition, and GSI4, the issues of
// a repository by status. It opens issues, lists and reads them, and reads
// the open issues on GSI4 right after opening one, waiting (with backoff)
// until the eventually consistent index shows it; then it closes an issue
// and waits until GSI4 shows it moved before reading both status lists. It
// prints what each wait took. The key map is in model.go, one method per
// access pattern in store.go.
//
// Run it with
//
//	go run ./examples/github
//
// It uses the DynamoDB Local at DYNAMODB_ENDPOINT when that is set, and otherwise
// starts one (Testcontainers, else the jar with Java) and stops it at the end. It
// creates a table of its own and deletes it when done. DynamoDB Local updates
// its indexes at once, so here each wait succeeds on its first read; the tests
// run the example again with an injected index lag.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/singletable/singletable"
	"github.com/singletable/singletable/dynamolocal"
)

func main() {
	if err := start(); err != nil {
		fmt.Fprintln(os.Stderr, "github:", err)
		os.Exit(1)
	}
}

// start finds or starts DynamoDB Local, runs the example, and stops what it started.
func start() (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()

	local, err := dynamolocal.Start(ctx) // DYNAMODB_ENDPOINT if set, else Testcontainers, else the jar
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, local.Close()) }()
	tableName := fmt.Sprintf("singletable-github-%08x", rand.Uint32())
	return run(ctx, local.Client(), tableName, os.Stdout)
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
	drafts := []struct{ title, author string }{
		{"Launch checklist is out of date", "ann"},
		{"Fuel gauge reads empty when full", "bob"},
		{"Add a countdown timer", "cy"},
	}
	issues := make([]Issue, len(drafts))
	for i, d := range drafts {
		issues[i] = Issue{Owner: "acme", Repo: "rocket", Title: d.title, Author: d.author, CreatedAt: t0.Add(time.Duration(i+1) * time.Hour)}
	}
	return issues
}

// lateIssue is the issue opened right before the open issues are read on GSI4.
func lateIssue() Issue {
	return Issue{Owner: "acme", Repo: "rocket", Title: "Countdown skips 7", Author: "ann", CreatedAt: t0.Add(24 * time.Hour)}
}

// run creates a table named tableName, runs every access pattern on it, printing
// each step to out, and deletes the table. It fails if a step goes wrong or shows
// something other than what the model promises.
func run(ctx context.Context, client singletable.Client, tableName string, out io.Writer) (err error) {
	s, err := NewStore(client, tableName)
	if err != nil {
		return err
	}
	if err := s.Table.CreateTable(ctx); err != nil {
		return err
	}
	defer func() {
		// Delete the table even when ctx has ended.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := s.Table.DeleteTable(ctx); derr != nil {
			err = errors.Join(err, derr)
			return
		}
		fmt.Fprintf(out, "\ndeleted table %s\n", tableName)
	}()
	p := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	p("created table %s: PK/SK, GSI4 (issues by status: GSI4PK = REPO#{owner}#{name}, GSI4SK = ISSUE#{status}#{number:08})", tableName)
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
	p("\n2. Open issues (UpdateItem ADD issueCount 1 on the repo for the number, then a conditional PutItem of the issue)")
	for _, d := range sampleIssues() {
		is, err := s.OpenIssue(ctx, d)
		if err != nil {
			return err
		}
		p("   #%d %-4s %q by %s (SK %s, GSI4SK %s)", is.Number, is.Status, is.Title, is.Author, issueSK(is), statusSK(is))
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

// issueSK and statusSK are an issue's SK and GSI4SK, as the table holds them.
func issueSK(is Issue) string  { return fmt.Sprintf("ISSUE#%08d", is.Number) }
func statusSK(is Issue) string { return fmt.Sprintf("ISSUE#%s#%08d", is.Status, is.Number) }

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
