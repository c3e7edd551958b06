#!/usr/bin/env bash
# kicad-render.sh: open every generated schematic and board in real KiCad
# (Eeschema and Pcbnew 6.0, under a virtual X server), fail if KiCad shows
# anything but the design (an error dialog) or its electrical rules check
# finds a problem, and plot the 4-PE sheet to docs/schematic-4pe.svg with
# KiCad's own SVG plotter.
#
# KiCad 6.0 has no command-line plotter for schematics (kicad-cli came with
# 7.0), so the script drives Eeschema's File → Plot dialog with xdotool.
#
# Needs (Debian 12): apt-get install -y kicad xvfb xdotool imagemagick
# Usage: scripts/kicad-render.sh [-k] [boards...]   (boards: 4 8 16 32; default all)
#   -k  keep the work directory (config, copies, logs, screenshots) and print it
# Run from the repository root after `go run ./cmd/papersctl kicad`.
set -euo pipefail

keep=0
if [[ ${1:-} == -k ]]; then keep=1; shift; fi
boards=("${@:-4 8 16 32}")
boards=(${boards[*]})

for tool in eeschema xvfb-run xdotool import; do
	command -v "$tool" >/dev/null || { echo "kicad-render: $tool not found: apt-get install -y kicad xvfb xdotool imagemagick" >&2; exit 1; }
done
[[ -d kicad ]] || { echo "kicad-render: run from the repository root (no kicad/ here)" >&2; exit 1; }

work=$(mktemp -d /tmp/kicad-render.XXXXXX)
status=0
if ((keep)); then
	echo "kicad-render: work directory $work"
else # kept when something failed, for its screenshot and logs
	trap '((status)) || rm -rf "$work"' EXIT
fi

# A private KiCad configuration, so KiCad skips its first-run dialogs: the
# settings-path dialog appears when <config>/6.0/kicad_common.json is
# missing, the library-table dialogs when sym-lib-table / fp-lib-table are.
# The plot dialog opens with the format and colours eeschema.json names
# (format 5 = SVG).
cfg=$work/config/6.0
mkdir -p "$cfg"
echo '{}' >"$cfg/kicad_common.json"
cp /usr/share/kicad/template/sym-lib-table /usr/share/kicad/template/fp-lib-table "$cfg/"
cat >"$cfg/eeschema.json" <<'EOF'
{"plot": {"format": 5, "color": true, "color_theme": "_builtin_default", "frame_reference": true, "background_color": false},
 "window": {"maximized": true}}
EOF

cat >"$work/drive.sh" <<'EOF'
#!/usr/bin/env bash
# Runs inside xvfb-run: open one board's schematic, check it, plot it to
# SVG; then open its PCB and check that.
set -euo pipefail
work=$1 base=$2
dir=$work/$base
export KICAD_CONFIG_HOME=$work/config
visible() { xdotool search --onlyvisible --name . getwindowname %@ 2>/dev/null | sort -u; }
pid=
fail() {
	import -window root "$dir/failure.png" || true
	echo "kicad-render: $base: $1 (windows: $(visible | tr '\n' '|'); screenshot $dir/failure.png)" >&2
	[[ -z $pid ]] || kill "$pid" 2>/dev/null || true
	exit 1
}
# open PROGRAM FILE TITLE: start a KiCad editor on FILE and wait until its
# window, titled TITLE, is the only one on the screen.
open() {
	"$1" "$2" >"$dir/$1.log" 2>&1 &
	pid=$!
	for ((i = 0; ; i++)); do
		((i < 120)) || fail "$1 did not show $2 within 60 s"
		kill -0 "$pid" 2>/dev/null || fail "$1 exited"
		! visible | grep -qxE 'Error|Warning|Confirmation' || fail "$1 showed a message box while loading $2"
		[[ $(visible) == "$3" ]] && break
		sleep 0.5
	done
	sleep 2 # a dialog raised after loading (a parse error, a missing library) would show by now
	[[ $(visible) == "$3" ]] || fail "$1 showed a dialog after loading $2"
	win=$(xdotool search --onlyvisible --name "${3##* — }" | head -1) # "Schematic Editor": --name takes a regexp
}
# quit SHOT: zoom to fit, take a screenshot, leave.
quit() {
	xdotool key --window "$win" Home
	sleep 2
	import -window root "$dir/$1"
	xdotool key --window "$win" ctrl+q
	for ((i = 0; i < 20; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
	kill "$pid" # it would not quit (a save dialog?): the work is done anyway
}

open eeschema "$dir/$base.kicad_sch" "$base [$base/] — Schematic Editor"
xdotool key --window "$win" alt+f
sleep 1
xdotool key Up Up Return # File menu: Plot... is the entry above Quit
for ((i = 0; ; i++)); do
	((i < 40)) || fail "the Plot dialog did not open"
	visible | grep -qx "Plot Schematic Options" && break
	sleep 0.5
done
sleep 1
xdotool key Return # Plot All Pages, into the project directory
for ((i = 0; ; i++)); do
	((i < 120)) || fail "no SVG plotted within 60 s"
	[[ -s $dir/$base.svg ]] && grep -q '</svg>' "$dir/$base.svg" && break
	sleep 0.5
done
xdotool key Escape
sleep 0.5

# Inspect → Electrical Rules Checker, Run ERC, Save... the report.
xdotool key --window "$win" alt+i
sleep 1
xdotool key Return
waitfor() { # waitfor TITLE WHAT
	for ((i = 0; ; i++)); do
		((i < 40)) || fail "$2 did not open"
		visible | grep -qx "$1" && break
		sleep 0.5
	done
	sleep 1
}
waitfor "Electrical Rules Checker" "the ERC dialog"
xdotool key Return # Run ERC
# Save... has no shortcut: click it, at its place in the dialog, until the
# file dialog opens (the click is lost while ERC still runs).
erc=$(xdotool search --onlyvisible --name "^Electrical Rules Checker$" | head -1)
eval "$(xdotool getwindowgeometry --shell "$erc")"
for ((j = 0; ; j++)); do
	((j < 30)) || fail "the ERC report's file dialog did not open"
	sleep 2
	xdotool mousemove $((X + WIDTH - 62)) $((Y + HEIGHT - 77)) click 1
	sleep 1
	visible | grep -qx "Save Report to File" && break
done
xdotool key ctrl+a
xdotool type --delay 10 "$dir/erc.rpt"
xdotool key Return
for ((i = 0; ; i++)); do
	((i < 40)) || fail "no ERC report written"
	grep -q 'ERC messages' "$dir/erc.rpt" 2>/dev/null && break
	sleep 0.5
done
xdotool key Escape
sleep 0.5
quit schematic.png

open pcbnew "$dir/$base.kicad_pcb" "$base — PCB Editor"
quit pcb.png
EOF
chmod +x "$work/drive.sh"

kv=$(dpkg-query -W -f '${Version}' kicad 2>/dev/null || echo "(version unknown)")
for n in "${boards[@]}"; do
	base=ttl_papers_${n}pe
	[[ -f kicad/$base/$base.kicad_sch ]] || { echo "kicad-render: kicad/$base/$base.kicad_sch missing" >&2; exit 1; }
	mkdir -p "$work/$base"
	# Work on copies: KiCad may write project-local settings next to them.
	cp "kicad/$base/$base".{kicad_sch,kicad_pcb,kicad_pro} "$work/$base/"
	if ! xvfb-run -a -s "-screen 0 1920x1080x24" "$work/drive.sh" "$work" "$base"; then
		status=1
		continue
	fi
	erc=$(grep -o 'ERC messages: .*' "$work/$base/erc.rpt")
	echo "kicad-render: $base: schematic and PCB opened in KiCad $kv without dialogs; plotted $(wc -c <"$work/$base/$base.svg") bytes of SVG; $erc"
	# Warnings are expected: our symbols are our own drawings under the
	# lib_ids of KiCad's standard parts, which ERC reports as "modified in
	# library". Errors are not.
	if [[ $erc != *" Errors 0 "* ]]; then
		echo "kicad-render: $base: KiCad's electrical rules check found errors: see $work/$base/erc.rpt" >&2
		status=1
	fi
	if grep '^\[' "$work/$base/erc.rpt" | grep -qv '^\[lib_symbol_issues\]'; then
		echo "kicad-render: $base: ERC warnings other than our own symbol drawings:" >&2
		grep '^\[' "$work/$base/erc.rpt" | grep -v '^\[lib_symbol_issues\]' | sort | uniq -c >&2
		status=1
	fi
	if [[ $n == 4 ]]; then
		# The plot's <title> carries the date: drop it so re-rendering an
		# unchanged schematic gives an identical file.
		sed -e 's#^<title>SVG Picture created as .*</title>$#<title>TTL_PAPERS 4-PE schematic, plotted by KiCad Eeschema</title>#' \
			"$work/$base/$base.svg" >docs/schematic-4pe.svg
		echo "kicad-render: wrote docs/schematic-4pe.svg"
	fi
done
exit $status
