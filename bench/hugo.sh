#!/usr/bin/env bash
# bench/hugo.sh [N ...]: build one synthetic book of N chapters with bookgen
# and with Hugo, alternately, and print each tool's median wall time, CPU
# time, peak RSS and output size, ms per page, and the ratios.
#
#   bench/hugo.sh 100 1000 4000          # sizes (default: 100 1000)
#   RUNS=5 bench/hugo.sh 1000            # runs per tool and size (default 3)
#
# The book is bench/gencorpus's (see bench/README.md):
# the same Markdown for both tools, Go listings highlighted by chroma in both,
# a full sidebar on every page. Needs hugo on PATH (Debian: apt-get install
# hugo) and GNU time (/usr/bin/time). Machines are shared: quote medians and
# ratios from one run, never an absolute time from another.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=${RUNS:-3}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100 1000)
command -v hugo >/dev/null || { echo "bench/hugo.sh: hugo is not on PATH (apt-get install hugo)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/hugo.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/bookgen" ./cmd/bookgen

# measure LABEL CMD...: runs CMD once, appends "wall cpu rss_kb" to $work/LABEL.
measure() {
	local label=$1; shift
	/usr/bin/time -f "%e %U %S %M" -o "$work/t" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
	awk '{printf "%s %.2f %s\n", $1, $2+$3, $4}' "$work/t" >>"$work/$label"
}
# median FILE COL
median() { sort -n -k"$2" "$1" | awk -v c="$2" '{a[NR]=$c} END {print a[int((NR+1)/2)]}'; }

printf '%-6s %-8s %9s %9s %10s %9s %9s\n' pages tool wall_s cpu_s rss_MiB out_MiB ms/page
for n in "${sizes[@]}"; do
	corpus=$work/corpus-$n
	go run ./bench/gencorpus -pages "$n" -out "$corpus" >/dev/null
	bash bench/to-bookgen.sh "$corpus" "$work/bg-$n" >/dev/null
	rm -f "$work/bookgen-$n" "$work/hugo-$n"
	for _ in $(seq "$runs"); do
		measure "bookgen-$n" "$work/bookgen" build --root "$work/bg-$n" -o "$work/bg-$n-out"
		measure "hugo-$n" hugo --source "$corpus/hugo" --destination "$work/h-$n-out" --quiet
	done
	for tool in bookgen hugo; do
		out=$work/bg-$n-out; [ $tool = hugo ] && out=$work/h-$n-out
		wall=$(median "$work/$tool-$n" 1); cpu=$(median "$work/$tool-$n" 2); rss=$(median "$work/$tool-$n" 3)
		size=$(du -sm "$out" | cut -f1)
		printf '%-6s %-8s %9s %9s %10d %9s %9.2f\n' "$n" "$tool" "$wall" "$cpu" $((rss / 1024)) "$size" "$(awk -v w="$wall" -v n="$n" 'BEGIN{print w*1000/n}')"
		eval "${tool}_wall=$wall ${tool}_rss=$rss"
	done
	printf '%-6s bookgen/hugo: wall %.2fx, peak RSS %.2fx (load %s)\n' "$n" \
		"$(awk -v a="$bookgen_wall" -v b="$hugo_wall" 'BEGIN{print a/b}')" "$(awk -v a="$bookgen_rss" -v b="$hugo_rss" 'BEGIN{print a/b}')" "$(cut -d' ' -f1-3 /proc/loadavg)"
done
