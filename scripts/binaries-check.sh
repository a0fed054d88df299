#!/usr/bin/env bash
# binaries-check.sh: fail when git tracks a compiled binary. `make test` runs it (its
# lint part, target binaries-check), and so CI does. A tracked file is a binary when its
# name ends in .test or .exe (what `go test -c` and Windows builds write), or when it
# starts with the magic bytes of an executable or object file:
#   ELF (7f 45 4c 46), Mach-O (fe ed fa ce/cf, ce/cf fa ed fe), a Mach-O universal binary
#   or Java class (ca fe ba be), or a PE image ("MZ" whose header points at "PE\0\0").
# Prints each one found and exits 1; prints the number of files checked and exits 0
# otherwise. Run from anywhere inside the repository; only tracked files are read.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

hex() { od -An -tx1 -v | tr -d ' \n'; }

checked=0
found=()
while IFS= read -r -d '' f; do
	[ -f "$f" ] && [ ! -L "$f" ] || continue # a deleted file, a link or a submodule
	checked=$((checked + 1))
	case $f in
	*.test | *.exe)
		found+=("$f (name)")
		continue
		;;
	esac
	magic=$(head -c 4 -- "$f" | hex) || magic=
	case $magic in
	7f454c46) found+=("$f (ELF)") ;;
	feedface | feedfacf | cefaedfe | cffaedfe) found+=("$f (Mach-O)") ;;
	cafebabe) found+=("$f (Mach-O universal or Java class)") ;;
	4d5a*)
		# A PE image: the 32-bit little-endian offset at 0x3c points at "PE\0\0".
		off=$(od -An -tu4 -j 60 -N 4 -- "$f" 2>/dev/null | tr -d ' \n') || off= # shorter than 64 bytes
		if [ -n "$off" ] && [ "$( (tail -c +"$((off + 1))" -- "$f" | head -c 4 | hex) 2>/dev/null || true)" = 50450000 ]; then
			found+=("$f (PE)")
		fi
		;;
	esac
done < <(git ls-files -z)

if [ "${#found[@]}" -gt 0 ]; then
	echo "binaries-check: git tracks ${#found[@]} compiled binary file(s); remove them (git rm --cached) and ignore them:" >&2
	printf '  %s\n' "${found[@]}" >&2
	exit 1
fi
echo "binaries-check: $checked tracked files, no compiled binary"
