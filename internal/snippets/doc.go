// Package snippets holds the Go snippets of README.md and docs/*.md to what the
// README tells people to run: its test extracts each into a package of its
// own, then builds, vets and staticchecks it, so that a snippet cannot rot. It
// has no code of its own.
package snippets
