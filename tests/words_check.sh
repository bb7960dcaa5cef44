#!/usr/bin/env bash
# Words that belong to how shoal was made, not to what it is, kept out of
# the sources, tests and documents (README.md, CHANGELOG.md, docs/,
# include/, src/, tests/, benchmark/, cli/, experiments/, scenes/,
# examples/, python/):
# - a paper's file name (NNN_ and 16 hex digits) or "seed NNN" / "seeds/":
#   cite the paper by its authors and title instead;
# - a tracker number ("issue 5", "issue #5", "issues 16"): say what changed,
#   or give the commit and its date;
# - a work period: "work period", "session" (other than an interactive,
#   browser, terminal, ... session), "the work of" an issue or a session.
# Prints each offending line as file:line: text with the reason below it
# and exits 1 if there is any; prints nothing and exits 0 otherwise.
# Usage: words_check.sh [source-dir] (default: the folder above this one).
# Uses git grep (tracked and untracked files, not ignored ones) where the
# source dir is a git checkout, and grep -r otherwise.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
paths=(README.md CHANGELOG.md docs include src tests benchmark cli experiments scenes examples python)
existing=()
for p in "${paths[@]}"; do [ -e "$p" ] && existing+=("$p"); done
[ ${#existing[@]} -gt 0 ] || { echo "words_check: none of ${paths[*]} under $root"; exit 2; }
self=tests/words_check.sh

# Not a letter, digit or underscore, or the line's start / end: word edges
# that POSIX extended expressions (git grep -E, grep -E) all understand.
L='(^|[^[:alnum:]_])'
R='([^[:alnum:]_]|$)'

# Lines of $existing matching the extended expression $1, as path:line:text.
search() {
    if [ -e .git ] && command -v git > /dev/null 2>&1; then
        git grep --untracked -nIiE -e "$1" -- "${existing[@]}" ":(exclude)$self"
    else
        grep -rnIiE --exclude=words_check.sh --exclude-dir=build --exclude-dir=.git \
            --exclude-dir=__pycache__ --exclude-dir='*.egg-info' --exclude-dir=.venv \
            -e "$1" -- "${existing[@]}"
    fi
}

found=0
# report expression reason [allowed]: each line matching the expression,
# unless it matches only inside phrases of the expression `allowed`.
report() {
    local expr=$1 why=$2 allowed=${3:-} hit file rest line text
    while IFS= read -r hit; do
        file=${hit%%:*}
        rest=${hit#*:}
        line=${rest%%:*}
        text=${rest#*:}
        if [ -n "$allowed" ]; then
            printf '%s\n' "$text" | tr '[:upper:]' '[:lower:]' | sed -E "s/$allowed//g" |
                grep -qiE -e "$expr" || continue
        fi
        printf '%s:%s: %s\n    %s\n' "$file" "$line" "$text" "$why"
        found=1
    done < <(search "$expr")
}

report "${L}[0-9]{3}_[0-9a-f]{16}${R}" \
    "a paper's file name: cite the paper by its authors and title"
report "${L}seeds? ?0[0-9]{2}${R}|${L}seeds/" \
    "a paper by its file number (seed NNN, seeds/): cite it by its authors and title"
report "${L}issues? ?#?[0-9]+" \
    "a tracker number: say what changed, or give the commit and its date"
report "${L}work(ing)? periods?${R}" \
    "a work period: say what changed, or give the commit and its date"
report "${L}the work of[^.;:]{0,40}${L}(issues?|sessions?|periods?|sprints?|tickets?)${R}|${L}the work of [0-9]" \
    "a work period: say what changed, or give the commit and its date"
report "${L}sessions?${R}" \
    "a work period (session): say what changed, or give the commit and its date" \
    "(interactive|browser|http|https|ssh|terminal|tmux|screen|shell|login|user|debug|debugger|gdb|lldb|python|ipython|jupyter|repl|tls|ssl|x11|desktop|viewer|web|mpi) sessions?|sessions? (cookie|id|key|token|manager)s?"

exit $found
