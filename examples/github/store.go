package main

import (
	"context"
	"fmt"
	"iter"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/singletable/singletable"
)

// One method per access pattern of reference 000's GitHub model. Reads of the
// base table (ListIssues, GetIssue) see every acknowledged write at once on
// DynamoDB Local and a moment later on DynamoDB (use singletable.Consistent for
// at once there too); reads of GSI4 (IssuesByStatus) and GSI5
// (IssuesByPriority) are eventually consistent everywhere but DynamoDB Local:
// wait for a write of your own first with s.Issues.WaitIndexed or WaitMoved,
// as run does.
//
// Every read of issues migrates the version 1 issues it finds to version 2
// and writes them back (one conditional PutItem each, during the read); see
// the key map in model.go.

// CreateRepo creates a repository with no issues unless one exists at its key
// (a conditional PutItem); if one does, the error matches
// [singletable.ErrAlreadyExists]. It returns what was stored.
func (s *Store) CreateRepo(ctx context.Context, r Repo) (Repo, error) {
	r.IssueCount = 0
	return s.Repos.Create(ctx, r)
}

// GetRepo reads a repository (GetItem PK = SK = REPO#{owner}#{name}).
func (s *Store) GetRepo(ctx context.Context, owner, name string) (Repo, error) {
	return s.Repos.Get(ctx, Repo{Owner: owner, Name: name})
}

// OpenIssue opens an issue in the repository draft.Owner/draft.Repo, giving it
// the repository's next number, in two requests: an UpdateItem that adds 1 to
// the repository's IssueCount and returns it (which fails with
// [singletable.ErrNotFound] when the repository does not exist), then a
// conditional PutItem of ISSUE#{number:08} with the status OPEN and the
// priority its labels call for ([PriorityOf]), at schema version 2, so in GSI4
// and GSI5. Concurrent openers get different numbers. If the second request
// fails, or the first is retried after a lost response, a number is skipped,
// never given twice. draft's Title, Author, Labels and CreatedAt are kept; its
// Number, Status and Priority are ignored. It returns the issue as stored;
// draft is not modified.
func (s *Store) OpenIssue(ctx context.Context, draft Issue) (Issue, error) {
	repo, err := s.Repos.Update(ctx, Repo{Owner: draft.Owner, Name: draft.Repo}, singletable.Add("issueCount", 1))
	if err != nil {
		return Issue{}, fmt.Errorf("open issue in %s/%s: %w", draft.Owner, draft.Repo, err)
	}
	draft.Number, draft.Status, draft.Priority = repo.IssueCount, StatusOpen, PriorityOf(draft.Labels)
	return s.Issues.Create(ctx, draft)
}

// GetIssue reads an issue by number (GetItem PK = REPO#{owner}#{repo},
// SK = ISSUE#{number:08}). A version 1 issue is returned migrated, and written
// back before GetIssue returns: one more write, a conditional PutItem.
func (s *Store) GetIssue(ctx context.Context, owner, repo string, number int64) (Issue, error) {
	return s.Issues.Get(ctx, Issue{Owner: owner, Repo: repo, Number: number})
}

// ListIssues lists a repository's issues, open and closed, in number order:
// Query PK = REPO#{owner}#{repo} AND begins_with(SK, "ISSUE#"), every page.
// With no sort key condition given, the library keeps an entity query to the
// literal prefix of its sort key template, so the repository item is not read.
func (s *Store) ListIssues(ctx context.Context, owner, repo string) ([]Issue, error) {
	return collect(s.Issues.All(ctx, Issue{Owner: owner, Repo: repo}))
}

// IssuesByStatus lists a repository's issues in one status, newest first, from
// GSI4: Query GSI4PK = REPO#{owner}#{repo} AND begins_with(GSI4SK,
// "ISSUE#{status}#") with ScanIndexForward=false, every page. The sort key
// condition is a partly filled Issue: its template renders up to the first
// missing input, the number. Eventually consistent.
func (s *Store) IssuesByStatus(ctx context.Context, owner, repo string, status IssueStatus) ([]Issue, error) {
	return collect(s.Issues.All(ctx, Issue{Owner: owner, Repo: repo},
		singletable.On(indexByStatus),
		singletable.SKBeginsWith(Issue{Status: status}),
		singletable.Descending()))
}

// IssuesByPriority lists a repository's issues of one priority, newest first,
// from GSI5: Query GSI5PK = REPO#{owner}#{repo} AND begins_with(GSI5SK,
// "PRIORITY#{priority}#") with ScanIndexForward=false, every page. Version 1
// issues are not in GSI5 until they are migrated (by a read or a sweep).
// Eventually consistent.
func (s *Store) IssuesByPriority(ctx context.Context, owner, repo string, priority Priority) ([]Issue, error) {
	return collect(s.Issues.All(ctx, Issue{Owner: owner, Repo: repo},
		singletable.On(indexByPriority),
		singletable.SKBeginsWith(Issue{Priority: priority}),
		singletable.Descending()))
}

// CloseIssue closes an open issue (UpdateItem SET status = CLOSED on the
// condition status = OPEN); the same request rewrites its GSI4SK from
// ISSUE#OPEN#... to ISSUE#CLOSED#..., which moves it between the two status
// lists. It returns the issue as stored. An issue that is not open matches
// [singletable.ErrCondition]; a missing one [singletable.ErrNotFound]. A
// version 1 issue is returned migrated in memory; it stays at version 1 in the
// table until a read writes it back.
func (s *Store) CloseIssue(ctx context.Context, owner, repo string, number int64) (Issue, error) {
	return s.Issues.Update(ctx, Issue{Owner: owner, Repo: repo, Number: number},
		singletable.Set("status", StatusClosed),
		singletable.If(expression.Name("status").Equal(expression.Value(StatusOpen))))
}

// collect gathers what an iterator yields, stopping at its first error.
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	out := []T{}
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
