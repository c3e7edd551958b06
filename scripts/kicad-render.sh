#!/usr/bin/env bash
# kicad-render.sh: open every generated schematic in real KiCad (Eeschema
# 6.0, under a virtual X server), fail if KiCad shows anything but the
# schematic (an error dialog), and plot the 4-PE sheet to
# docs/schematic-4pe.svg with KiCad's own SVG plotter.
#
# KiCad 6.0 has no command-line plotter for schematics (kicad-cli came with
# 7.0), so the script drives Eeschema's File → Plot dialog with xdotool.
#
# Needs (Debian 12): apt-get install -y kicad xvfb xdotool imagemagick
# Usage: scripts/kicad-render.sh [-k] [boards...]   (boards: 4 8 16 32; default all)
#   -k  keep the work directory (config, copies, screenshots) and print it
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
if ((keep)); then echo "kicad-render: work directory $work"; else trap 'rm -rf "$work"' EXIT; fi

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
# Runs inside xvfb-run: open one schematic, check, plot to SVG, quit.
set -euo pipefail
work=$1 base=$2
dir=$work/$base
export KICAD_CONFIG_HOME=$work/config
visible() { xdotool search --onlyvisible --name . getwindowname %@ 2>/dev/null | sort -u; }
eeschema "$dir/$base.kicad_sch" >"$dir/eeschema.log" 2>&1 &
pid=$!
fail() {
	import -window root "$dir/failure.png" || true
	echo "kicad-render: $base: $1 (windows: $(visible | tr '\n' '|'); screenshot $dir/failure.png)" >&2
	kill "$pid" 2>/dev/null || true
	exit 1
}
title="$base [$base/] — Schematic Editor"
for ((i = 0; ; i++)); do
	((i < 120)) || fail "Eeschema did not show the schematic within 60 s"
	kill -0 "$pid" 2>/dev/null || fail "Eeschema exited"
	[[ $(visible) == "$title" ]] && break
	sleep 0.5
done
sleep 2 # a dialog raised after loading (a parse error, a missing library) would show by now
[[ $(visible) == "$title" ]] || fail "KiCad showed a dialog after loading"
win=$(xdotool search --onlyvisible --name "Schematic Editor" | head -1)
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
xdotool key --window "$win" Home # zoom to fit, for the screenshot
sleep 2
import -window root "$dir/loaded.png"
xdotool key --window "$win" ctrl+q
for ((i = 0; i < 20; i++)); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.5; done
kill "$pid" # it would not quit (a save dialog?): the plot is done anyway
EOF
chmod +x "$work/drive.sh"

kv=$(dpkg-query -W -f '${Version}' kicad 2>/dev/null || echo "(version unknown)")
status=0
for n in "${boards[@]}"; do
	base=ttl_papers_${n}pe
	[[ -f kicad/$base/$base.kicad_sch ]] || { echo "kicad-render: kicad/$base/$base.kicad_sch missing" >&2; exit 1; }
	mkdir -p "$work/$base"
	# Work on copies: KiCad may write project-local settings next to them.
	cp "kicad/$base/$base.kicad_sch" "kicad/$base/$base.kicad_pro" "$work/$base/"
	if xvfb-run -a -s "-screen 0 1920x1080x24" "$work/drive.sh" "$work" "$base"; then
		echo "kicad-render: $base: opened in KiCad $kv without dialogs, plotted $(wc -c <"$work/$base/$base.svg") bytes of SVG"
	else
		status=1
		continue
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
