#!/usr/bin/env bash
# Lints the Swift sources with the toolchain's swift-format and the repository's .swift-format.
# Exit status 1 when there is a finding (each is printed as file:line:column: [Rule] message).
# scripts/test.sh runs it as a step of the test run.
#
# .swift-format describes the code as it is (4-space indentation, lines up to 180 characters: the
# longest is 177), swift-format's default rules, plus AllPublicDeclarationsHaveDocumentation
# (every public declaration has a doc comment), minus five rules the code deliberately does not
# follow:
#   UseLetInEveryBoundCaseVariable  the code binds with `case let .x(a, b)`, not `case .x(let a, let b)`
#   OneVariableDeclarationPerLine   `var a = 0, b = 0` for closely related counters
#   DoNotUseSemicolons              two short statements in a one-line block: `{ a += 1; b -= 1 }`
#   OneCasePerLine                  `case pass, fail, skipped` for simple enums
#   ReplaceForEachWithForLoop       `defer { tasks.forEach { $0.cancel() } }` one-liners
#
# swift-format also reports what its pretty printer would change, and those categories cannot be
# turned off in the configuration (swiftlang/swift-format#764, #964). The code aligns continuation
# lines and end-of-line comments by hand, which the printer would re-indent and re-wrap in about
# 1,400 places; reformatting the tree would touch most files. So these categories are left out
# here: Indentation, AddLines, LineLength (the 180 limit is still the printer's width), Spacing
# (aligned comments) and TrailingComma (the code has both styles). TrailingWhitespace, RemoveLine
# (more than one blank line) and EndOfLineComment stay enforced.
set -euo pipefail
cd "$(dirname "$0")/.."

swift_dir=$(dirname "$(readlink -f "$(command -v swift)")")
formatter=${SWIFT_FORMAT:-$swift_dir/swift-format}
if [ ! -x "$formatter" ]; then formatter=$(command -v swift-format || true); fi
if [ -z "$formatter" ] || [ ! -x "$formatter" ]; then
  echo "lint.sh: swift-format not found beside $(command -v swift) nor on the PATH; set SWIFT_FORMAT to its path" >&2
  exit 1
fi

unmatched='\[(Indentation|AddLines|LineLength|Spacing|TrailingComma)\]'
set +e
output=$("$formatter" lint --configuration .swift-format --recursive --parallel Package.swift Sources Tests scripts 2>&1)
status=$?
set -e
# Everything else swift-format prints is a finding, or an error of its own (a file it cannot
# parse, a configuration it cannot read; those also make its status non-zero).
reported=$(printf '%s\n' "$output" | grep -vE "$unmatched" | grep -v '^$' || true)
if [ -n "$reported" ] || [ "$status" -ne 0 ]; then
  printf '%s\n' "${reported:-$output}"
  echo "lint.sh: $(printf '%s\n' "$reported" | grep -c . || true) finding(s) or error(s) above; fix them (swift-format lint, .swift-format)" >&2
  exit 1
fi
echo "lint.sh: no findings"
