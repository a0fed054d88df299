package main

import (
	"slices"
	"time"

	"github.com/singletable/singletable"
)

// indexByStatus is the global secondary index of a repository's issues by
// status, GSI4 as in reference 000 (and the GitHub model it comes from).
const indexByStatus = "GSI4"

// indexByPriority is the global secondary index of a repository's issues by
// priority, GSI5, which version 2 of the issue schema adds (reference 000's
// lazy migration).
const indexByPriority = "GSI5"

// Key map (reference 000):
//
//	entity  PK                   SK                   GSI4PK               GSI4SK                      GSI5PK               GSI5SK
//	Repo    REPO#{owner}#{name}  REPO#{owner}#{name}  -                    -                           -                    -
//	Issue   REPO#{owner}#{repo}  ISSUE#{number:08}    REPO#{owner}#{repo}  ISSUE#{status}#{number:08}  REPO#{owner}#{repo}  PRIORITY#{priority}#{number:08}
//
// A repository and its issues share the partition REPO#{owner}#{name}. Issue
// numbers are zero-padded (ISSUE#00000012) so that they sort as numbers:
// begins_with(SK, "ISSUE#") lists a repository's issues in number order, and
// "ISSUE#..." sorts before the repository's own "REPO#..." item.
//
// GSI4 groups the same partition by status: the reference's query is
// GSI4PK = REPO#{owner}#{name} AND begins_with(GSI4SK, "ISSUE#OPEN#"), read
// here with ScanIndexForward=false for the newest issues first. Closing an
// issue rewrites its GSI4SK from ISSUE#OPEN#... to ISSUE#CLOSED#..., which
// moves it from one list to the other. The repository has no GSI4 keys, so it
// is not in the index.
//
// Every GSI4 input other than the status is an input of the primary key too,
// so an update of the status needs nothing but the issue's key to recompute
// GSI4's keys.
//
// GSI5 groups the partition by priority the same way:
// GSI5PK = REPO#{owner}#{name} AND begins_with(GSI5SK, "PRIORITY#high#"),
// newest first, lists a repository's high priority issues. It is sparse: an
// issue without a priority has no GSI5 keys and is not in it.
//
// GSI4 and GSI5 are eventually consistent: on DynamoDB an issue shows there a
// moment after it is written (DynamoDB Local shows it at once; the tests
// inject the lag). A read that must see a write of its own waits for it with
// the entity's WaitIndexed or WaitMoved.
//
// # Schema versions
//
// The issue schema has two versions, kept in each item's "_schema" attribute
// (an item without it is at version 1):
//
//	version 1  no priority, no GSI5 keys: what the old program wrote
//	version 2  a priority (PriorityOf its labels) and GSI5PK/GSI5SK
//
// Issues are registered with one migration step, 1 -> 2 (issueMigration).
// Every read (GetIssue, ListIssues, IssuesByStatus...) of a version 1 issue
// gives it its priority in memory and writes it back at once, on the
// condition that the stored item is unchanged since the read: from then on it
// is at version 2 and in GSI5. The write-back costs one write per migrated
// issue, paid by the read that found it; a ListIssues of an old repository
// migrates every issue it lists. A sweep (Store.Issues.Sweep, step 9 of run)
// migrates the issues no one reads.
//
// Issues written whole (OpenIssue) are at version 2 from the start. An
// UpdateItem (CloseIssue) leaves the stored version as it is, but the library
// decodes the item it returns like any read: closing a version 1 issue
// migrates it too, one write more.

// Repo is a repository. IssueCount is the last issue number handed out.
type Repo struct {
	_           struct{}  `Type:"Repo" PK:"REPO#{owner}#{name}" SK:"REPO#{owner}#{name}"`
	Owner       string    `dynamodbav:"owner"`
	Name        string    `dynamodbav:"name"`
	Description string    `dynamodbav:"description,omitempty"`
	CreatedAt   time.Time `dynamodbav:"createdAt"`
	IssueCount  int64     `dynamodbav:"issueCount"`
}

// IssueStatus is whether an issue is open.
type IssueStatus string

// Issue statuses.
const (
	StatusOpen   IssueStatus = "OPEN"
	StatusClosed IssueStatus = "CLOSED"
)

// Priority is how urgent an issue is; see [PriorityOf].
type Priority string

// Issue priorities, as they appear in GSI5SK (PRIORITY#high#00000012).
const (
	PriorityHigh   Priority = "high"
	PriorityMedium Priority = "medium"
	PriorityLow    Priority = "low"
)

// Labels that decide an issue's priority.
const (
	LabelCritical = "critical"
	LabelBug      = "bug"
)

// PriorityOf is the priority that an issue's labels call for: high with the
// "critical" label, else medium with the "bug" label, else low (other labels,
// such as "docs" or "enhancement", do not count). Labels are matched exactly,
// case and all.
func PriorityOf(labels []string) Priority {
	switch {
	case slices.Contains(labels, LabelCritical):
		return PriorityHigh
	case slices.Contains(labels, LabelBug):
		return PriorityMedium
	}
	return PriorityLow
}

// Issue is an issue of a repository, numbered from 1 in its repository. It is
// at schema version 2; see the key map.
type Issue struct {
	_         struct{}    `Type:"Issue" PK:"REPO#{owner}#{repo}" SK:"ISSUE#{number:08}" GSI4PK:"REPO#{owner}#{repo}" GSI4SK:"ISSUE#{status}#{number:08}" GSI5PK:"REPO#{owner}#{repo}" GSI5SK:"PRIORITY#{priority}#{number:08}"`
	Owner     string      `dynamodbav:"owner"`
	Repo      string      `dynamodbav:"repo"`
	Number    int64       `dynamodbav:"number"`
	Title     string      `dynamodbav:"title"`
	Author    string      `dynamodbav:"author"`
	Status    IssueStatus `dynamodbav:"status"`
	Labels    []string    `dynamodbav:"labels,omitempty"`
	Priority  Priority    `dynamodbav:"priority,omitempty"` // version 2
	CreatedAt time.Time   `dynamodbav:"createdAt"`
}

// issueMigration is the issue schema's history: step 1 -> 2 gives a version 1
// issue the priority its labels call for; the library then recomputes its
// GSI5 keys from the priority. The step keeps a priority that is already set,
// so that it never undoes a newer write (an UpdateItem that set the priority
// of a version 1 issue leaves the item at version 1). Migrated issues are
// written back during the read (WriteBackSync).
func issueMigration(onError func(error)) singletable.Migration[Issue] {
	return singletable.Migration[Issue]{
		Steps: []singletable.Step[Issue]{{
			Typed: func(is *Issue) error {
				if is.Priority == "" {
					is.Priority = PriorityOf(is.Labels)
				}
				return nil
			},
		}},
		WriteBack: singletable.WriteBackSync,
		OnError:   onError,
	}
}

// Store is the GitHub model on one table: the entities and, in store.go, one
// method per access pattern. It is safe for concurrent use.
type Store struct {
	Table  *singletable.Table
	Repos  *singletable.Entity[Repo]
	Issues *singletable.Entity[Issue]
}

// StoreOptions configures [NewStore].
type StoreOptions struct {
	// OnMigrationError receives the migration errors that no call returns: a
	// failed write-back of an issue migrated by a read (the read still
	// returns the migrated issue), and the issues a sweep could not migrate.
	// It must be safe for concurrent use. Default: they are dropped.
	OnMigrationError func(error)
}

// NewStore describes the table (PK/SK, GSI4 and GSI5) and registers the
// entities, issues with their schema history (issueMigration). It sends
// nothing; call s.Table.CreateTable to create the table.
func NewStore(client singletable.Client, tableName string, opts ...func(*StoreOptions)) (*Store, error) {
	var o StoreOptions
	for _, f := range opts {
		f(&o)
	}
	table, err := singletable.NewTable(client, tableName,
		singletable.WithIndex(indexByStatus, "GSI4PK", "GSI4SK"),
		singletable.WithIndex(indexByPriority, "GSI5PK", "GSI5SK"),
	)
	if err != nil {
		return nil, err
	}
	s := &Store{Table: table}
	if s.Repos, err = singletable.Register[Repo](table); err != nil {
		return nil, err
	}
	if s.Issues, err = singletable.Register[Issue](table, singletable.Migrations(issueMigration(o.OnMigrationError))); err != nil {
		return nil, err
	}
	return s, nil
}
