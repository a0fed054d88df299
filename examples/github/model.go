package main

import (
	"time"

	"github.com/singletable/singletable"
)

// indexByStatus is the global secondary index of a repository's issues by
// status, GSI4 as in reference 000 (and the GitHub model it comes from).
const indexByStatus = "GSI4"

// Key map (reference 000):
//
//	entity  PK                   SK                   GSI4PK               GSI4SK
//	Repo    REPO#{owner}#{name}  REPO#{owner}#{name}  -                    -
//	Issue   REPO#{owner}#{repo}  ISSUE#{number:08}    REPO#{owner}#{repo}  ISSUE#{status}#{number:08}
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
// GSI4 is eventually consistent: on DynamoDB an issue shows there a moment
// after it is written (DynamoDB Local shows it at once; the tests inject the
// lag). A read that must see a write of its own waits for it with the entity's
// WaitIndexed or WaitMoved.

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

// Issue is an issue of a repository, numbered from 1 in its repository.
type Issue struct {
	_         struct{}    `Type:"Issue" PK:"REPO#{owner}#{repo}" SK:"ISSUE#{number:08}" GSI4PK:"REPO#{owner}#{repo}" GSI4SK:"ISSUE#{status}#{number:08}"`
	Owner     string      `dynamodbav:"owner"`
	Repo      string      `dynamodbav:"repo"`
	Number    int64       `dynamodbav:"number"`
	Title     string      `dynamodbav:"title"`
	Author    string      `dynamodbav:"author"`
	Status    IssueStatus `dynamodbav:"status"`
	CreatedAt time.Time   `dynamodbav:"createdAt"`
}

// Store is the GitHub model on one table: the entities and, in store.go, one
// method per access pattern. It is safe for concurrent use.
type Store struct {
	Table  *singletable.Table
	Repos  *singletable.Entity[Repo]
	Issues *singletable.Entity[Issue]
}

// NewStore describes the table (PK/SK and GSI4) and registers the entities. It
// sends nothing; call s.Table.CreateTable to create the table.
func NewStore(client singletable.Client, tableName string) (*Store, error) {
	table, err := singletable.NewTable(client, tableName,
		singletable.WithIndex(indexByStatus, "GSI4PK", "GSI4SK"),
	)
	if err != nil {
		return nil, err
	}
	s := &Store{Table: table}
	if s.Repos, err = singletable.Register[Repo](table); err != nil {
		return nil, err
	}
	if s.Issues, err = singletable.Register[Issue](table); err != nil {
		return nil, err
	}
	return s, nil
}
