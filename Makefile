# singletable: every command a newcomer needs.
#   make examples   run every example end to end (DynamoDB Local is started for you)
#   make test       vet, staticcheck, every test with -race against DynamoDB Local, and the
#                   root package's tests again with reads decoded the SDK's way (test-sdk-decoding)
GO          ?= go
STATICCHECK := $(CURDIR)/.bin/staticcheck
STATICCHECK_VERSION ?= v0.8.2
FUZZTIME    ?= 60s
PKGS        := ./...

.PHONY: all test test-only test-sdk-decoding vet lint staticcheck examples bench fuzz clean

all: test

test: lint test-only test-sdk-decoding

test-only:
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

# Reads decode items straight from the response's JSON by default (WithWireDecoding);
# the build tag singletable_sdkdecoding makes the SDK's attribute values the default,
# so that the root package's whole suite (the only package the tag changes) runs
# once that way too.
test-sdk-decoding:
	$(GO) test -race -count=1 -timeout 30m -tags singletable_sdkdecoding .

lint: vet staticcheck

vet:
	$(GO) vet $(PKGS)

$(STATICCHECK):
	GOBIN=$(CURDIR)/.bin $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) $(PKGS)

examples:
	@for d in examples/*/; do \
		echo "== $$d"; \
		$(GO) run ./$$d || exit 1; \
	done

# The comparative benchmarks of bench/ (a module of its own, for guregu/dynamo) and the
# key rendering one, printed as one Markdown table with targets; DynamoDB Local is
# found or started for the end-to-end rows. About 2½ minutes on 2 cores. Raw output:
# bench/bench.out. BENCHFLAGS adds flags, e.g. -skip-local, -count 3, -check (exit 1
# when a target is missed). Then the pattern benchmarks the README quotes: the sharded
# fan-out against the same queries one after another (ratios logged), the merge's cost
# per item, and decoding a mixed item collection.
bench:
	cd bench && $(GO) run ./cmd/benchtable -go $(GO) -label 'make bench' $(BENCHFLAGS)
	$(GO) test -run '^$$' -bench '^(BenchmarkFanout|BenchmarkMerge|BenchmarkCollectionDecode)$$' -benchtime 20x -v . | grep -E '^(Benchmark[^ ]+[[:space:]]+[0-9]|    .*(ratio|concurrent))'

# Each fuzz target runs FUZZTIME (default 60s); seed corpora live in testdata/fuzz.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzTemplate$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzKeyInjective$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzRoundTrip$$' -fuzztime $(FUZZTIME) ./internal/codec
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./internal/codec
	$(GO) test -run '^$$' -fuzz '^FuzzCursor$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeItem$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzParseKey$$' -fuzztime $(FUZZTIME) .
	$(GO) test -run '^$$' -fuzz '^FuzzResponse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s ./internal/wire

clean:
	rm -rf .bin

-include Makefile.harness
