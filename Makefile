# singletable: every command a newcomer needs.
#   make examples   run every example end to end (DynamoDB Local is started for you)
#   make test       no compiled binary tracked, go mod tidy -diff, vet, staticcheck, and every test
#                   (Examples included) with -race against DynamoDB Local, the root package's tests
#                   twice: reads decoded from the wire (the default) and the SDK's way
#
# The repository holds four modules: the library (.), the test harness (dynamolocal/,
# which alone depends on Testcontainers), the comparative benchmarks (bench/) and the
# OpenTelemetry tracer (otel/, which alone depends on OpenTelemetry). The
# library's tests and examples only read DYNAMODB_ENDPOINT: these targets run them
# under `dynamodb-local run`, which starts DynamoDB Local (Testcontainers when a
# Docker API answers, else the jar with Java), exports its endpoint, runs the
# command and stops it. DYNAMODB_LOCAL_VERSION=1.11.478 picks the old release,
# DYNAMODB_LOCAL_BACKEND=jar|testcontainers a backend, DYNAMODB_ENDPOINT your own.
# bash, so that a failing benchmark fails `make bench` through its grep (pipefail).
SHELL       := bash
GO          ?= go
BIN         := $(CURDIR)/.bin
STATICCHECK_VERSION ?= v0.8.2
# staticcheck reads the standard library of the Go that built it, so each Go release gets
# its own binary (GOTOOLCHAIN=go1.27.3 make test builds and uses .bin/staticcheck-v0.8.2-go1.27.3/staticcheck).
GOVERSION   := $(shell $(GO) env GOVERSION)
STATICCHECK := $(BIN)/staticcheck-$(STATICCHECK_VERSION)-$(GOVERSION)/staticcheck
# The newest Go release the tests run on besides the go directive's (make test-newest-go;
# the go command fetches it through the module proxy like any module). README "Install"
# and the CHANGELOG say when it changes.
GO_NEWEST   ?= go1.27.3
DYNAMODB_LOCAL := $(BIN)/dynamodb-local
FUZZTIME    ?= 60s
MODULES     := . dynamolocal bench otel

.PHONY: all test test-only test-newest-go lint binaries-check vet staticcheck tidy-check deps-check examples bench fuzz clean dynamodb-local-bin

all: test

test: lint test-only

# The library's tests against one DynamoDB Local started for them (the root package
# runs twice: reads decode items straight from the response's JSON by default, and the
# build tag singletable_sdkdecoding makes the SDK's attribute values the default); the harness's
# own tests, which start each of its backends; the OpenTelemetry module's tests, on the same
# DynamoDB Local; the benchmarks' tests (unit tests:
# the benchmarks themselves run under `make bench`).
test-only: dynamodb-local-bin
	$(DYNAMODB_LOCAL) run -- sh -c '$(GO) test -race -count=1 -parallel 4 -timeout 30m ./... && \
		echo "== the root package again, reads decoded the SDK way (-tags singletable_sdkdecoding)" && \
		$(GO) test -race -count=1 -parallel 4 -timeout 30m -tags singletable_sdkdecoding . && \
		echo "== the otel module" && \
		cd otel && $(GO) test -race -count=1 -timeout 15m ./...'
	cd dynamolocal && $(GO) test -race -count=1 -timeout 15m ./...
	cd bench && $(GO) test -race -count=1 -timeout 15m ./...

# Every package of every module on the newest Go release (GO_NEWEST) as well: go vet, the
# build, and every test without -race (the -race runs of `make test` on the go directive's
# Go hold the data races; this holds that every file, test files included, compiles and
# passes on the newest release too: a test file that needs a newer Go than the go
# directive must say so in its build constraint, e.g. //go:build go1.27). CI runs it
# after make test.
test-newest-go: dynamodb-local-bin
	@echo "== Go $(GO_NEWEST): go vet, go build and go test (no -race) in every module"
	GOTOOLCHAIN=$(GO_NEWEST) $(GO) version
	@for m in $(MODULES); do \
		echo "GOTOOLCHAIN=$(GO_NEWEST) go vet ./... && go build ./... ($$m)"; \
		(cd $$m && GOTOOLCHAIN=$(GO_NEWEST) $(GO) vet ./... && GOTOOLCHAIN=$(GO_NEWEST) $(GO) build ./...) || exit 1; \
	done
	GOTOOLCHAIN=$(GO_NEWEST) $(DYNAMODB_LOCAL) run -- sh -c '$(GO) test -count=1 -parallel 4 -timeout 30m ./... && \
		cd otel && $(GO) test -count=1 -timeout 15m ./...'
	cd dynamolocal && GOTOOLCHAIN=$(GO_NEWEST) $(GO) test -count=1 -timeout 15m ./...
	cd bench && GOTOOLCHAIN=$(GO_NEWEST) $(GO) test -count=1 -timeout 15m ./...

lint: binaries-check tidy-check deps-check vet staticcheck

# git tracks no compiled binary: no *.test or *.exe, nothing that starts like an ELF,
# Mach-O or PE file (scripts/binaries-check.sh names each one found).
binaries-check:
	@bash scripts/binaries-check.sh

# The library's module graph holds no Testcontainers, Docker or OpenTelemetry module:
# the harness and the tracer live in modules of their own (dynamolocal/, otel/), so
# users' builds never see them.
deps-check:
	@n=$$($(GO) mod graph | grep -c -E 'testcontainers|docker|go\.opentelemetry\.io'); \
	echo "go mod graph | grep -c -E 'testcontainers|docker|go.opentelemetry.io' (.): $$n"; \
	[ "$$n" = 0 ]

# go.mod and go.sum of every module are what `go mod tidy` makes of them.
tidy-check:
	@for m in $(MODULES); do \
		echo "go mod tidy -diff ($$m)"; \
		(cd $$m && $(GO) mod tidy -diff) || exit 1; \
	done

vet:
	@for m in $(MODULES); do \
		echo "go vet ./... ($$m)"; \
		(cd $$m && $(GO) vet ./...) || exit 1; \
	done

$(STATICCHECK):
	GOBIN=$(dir $(STATICCHECK)) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

staticcheck: $(STATICCHECK)
	@for m in $(MODULES); do \
		echo "staticcheck ./... ($$m)"; \
		(cd $$m && $(STATICCHECK) ./...) || exit 1; \
	done

# The harness's command, built from its module (go caches the build).
dynamodb-local-bin:
	$(GO) -C dynamolocal build -o $(DYNAMODB_LOCAL) ./cmd/dynamodb-local

examples: dynamodb-local-bin
	$(DYNAMODB_LOCAL) run -- sh -c 'for d in examples/*/; do \
		echo "== $$d"; \
		$(GO) run "./$$d" || exit 1; \
	done'

# The comparative benchmarks of bench/ (a module of its own, for guregu/dynamo) and the
# key rendering one, printed as one Markdown table with targets; DynamoDB Local is
# started for the end-to-end rows. About 2½ minutes on 2 cores. Raw output:
# bench/bench.out. BENCHFLAGS adds flags, e.g. -skip-local, -count 3, -check (exit 1
# when a target is missed). Then the pattern benchmarks the README quotes: the sharded
# fan-out against the same queries one after another (ratios logged), the merge's cost
# per item, and decoding a mixed item collection. Last, what each entity type adds to a
# user's build (bench/cmd/compilecost: programs of 1 and 41 entity types through the
# library and through the raw SDK, dependencies cached; about 2 minutes).
bench: dynamodb-local-bin
	cd bench && $(GO) run ./cmd/benchtable -go $(GO) -label 'make bench' $(BENCHFLAGS)
	set -o pipefail; $(DYNAMODB_LOCAL) run -- $(GO) test -run '^$$' -bench '^(BenchmarkFanout|BenchmarkMerge|BenchmarkCollectionDecode)$$' -benchtime 20x -v . | grep -E '^(Benchmark[^ ]+[[:space:]]+[0-9]|    .*(ratio|concurrent|DynamoDB Local))'
	cd bench && $(GO) run ./cmd/compilecost -go $(GO)

# Each fuzz target runs FUZZTIME (default 60s); seed corpora live in testdata/fuzz.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzTemplate$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzKeyInjective$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzDisjointKeys$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzRoundTrip$$' -fuzztime $(FUZZTIME) ./internal/codec
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./internal/codec
	$(GO) test -run '^$$' -fuzz '^FuzzCursor$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeItem$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzParseKey$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzDocPath$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzResponse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s ./internal/wire

clean:
	rm -rf .bin

-include Makefile.harness
