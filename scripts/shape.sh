#!/bin/sh
# shape.sh measures the tree's shape as docs/testing.md reports it ("The
# tree's shape"): packages, package main's lines, code that reads an
# error's text, functions over 60 lines, exported names per package and
# files over 800 lines, all outside tests. Run it from the module's root.
set -e
module=github.com/ttlpapers/ttlpapers
echo "packages: $(go list ./... | wc -l)"
echo "package main (cmd/papersctl, non-test lines): $(cat $(ls cmd/papersctl/*.go | grep -v _test.go) | wc -l)"
echo "error-text sites (non-test):"
grep -rnE '(Contains|HasPrefix|HasSuffix|Index|Split|Cut|TrimPrefix|MatchString|FindString|FindStringSubmatch)\([^)]*Error\(\)|Error\(\) *[!=]=' --include=*.go . | grep -v '_test.go:' || true
echo "functions over 60 lines (non-test):"
for f in $(git ls-files '*.go' | grep -v '_test.go$'); do
	# gofmt puts a top-level function's closing brace alone at column 0.
	awk -v f="$f" '/^func .*}$/ { next } /^func / { start = FNR; name = $0 } /^}/ && start { if (FNR - start + 1 > 60) printf "%s:%d %d lines %s\n", f, start, FNR - start + 1, name; start = 0 }' "$f"
done
echo "exported names per package (go doc -short lines):"
for p in $(go list -f '{{if ne .Name "main"}}{{.ImportPath}}{{end}}' ./...); do
	printf '%4d %s\n' "$(go doc -short "$p" 2>/dev/null | wc -l)" "${p#$module/}"
done
echo "files over 800 lines:"
git ls-files '*.go' | xargs wc -l | awk '$2 != "total" && $1 > 800'
