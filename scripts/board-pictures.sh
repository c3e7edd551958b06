#!/usr/bin/env bash
# board-pictures.sh: plot the pictures in docs/ with KiCad 9's kicad-cli:
# the 4-PE schematic sheet as SVG (docs/schematic-4pe.svg, and its core
# cropped by scripts/schematic-core.sh into docs/schematic-4pe-core.png,
# the README's picture), and the routed boards: the front (F.Cu, front
# silkscreen, outline) and the back (B.Cu, back silkscreen, outline;
# mirrored, as seen from below) as SVG, and a 3-D render of the top as PNG
# (kicad-cli renders headless, with the parts: the footprints link KiCad's
# 3-D models, from Debian's kicad-packages3d). The SVGs of an unchanged
# board come out byte for byte the same; the 3-D renders do not (KiCad's
# renderer), so `git checkout` those of boards that did not change.
#
# Needs: kicad-cli (KiCad 9; on Debian bookworm from bookworm-backports),
# kicad-packages3d (the same) for the parts in the renders, rsvg-convert
# (apt-get install librsvg2-bin) for the crop.
# Usage: scripts/board-pictures.sh   (from the repository root, after
# `go run ./cmd/papersctl kicad`)
set -euo pipefail
command -v kicad-cli >/dev/null || { echo "board-pictures: kicad-cli not found: install KiCad 9 (apt-get install -t bookworm-backports kicad)" >&2; exit 1; }
[[ -d kicad ]] || { echo "board-pictures: run from the repository root (no kicad/ here)" >&2; exit 1; }
models=${KICAD9_3DMODEL_DIR:-/usr/share/kicad/3dmodels}
[[ -d $models ]] || { echo "board-pictures: KiCad's 3-D models not found in $models: apt-get install -t bookworm-backports kicad-packages3d (or set KICAD9_3DMODEL_DIR), or the renders show bare boards" >&2; exit 1; }
work=$(mktemp -d /tmp/board-pictures.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The sheet, plotted with KiCad's default settings (an empty configuration
# directory), not the user's colour theme.
mkdir "$work/config"
KICAD_CONFIG_HOME=$work/config kicad-cli sch export svg --no-background-color -o "$work" kicad/ttl_papers_4pe/ttl_papers_4pe.kicad_sch >/dev/null
# KiCad stamps the plot's <title> with the date: drop it, so an unchanged
# sheet plots to an unchanged file.
sed -e 's#^<title>.*</title>$#<title>TTL_PAPERS 4-PE schematic, plotted by KiCad</title>#' "$work/ttl_papers_4pe.svg" >docs/schematic-4pe.svg
echo "board-pictures: wrote docs/schematic-4pe.svg"
"$(dirname "$0")"/schematic-core.sh

for name in 4pe 8pe 16pe 32pe pi; do
	base=ttl_papers_$name
	pcb=kicad/$base/$base.kicad_pcb
	[[ -f $pcb ]] || { echo "board-pictures: $pcb missing" >&2; exit 1; }
	plot() { # plot SIDE LAYERS [--mirror]
		kicad-cli pcb export svg --mode-single --page-size-mode 2 --exclude-drawing-sheet --layers "$2" ${3:-} -o "$work/$1.svg" "$pcb" >/dev/null
		# KiCad stamps the plot's <title> with the date: drop it, so an
		# unchanged board plots to an unchanged file.
		sed -e 's#^<title>.*</title>$#<title>'"$base $1"', plotted by KiCad</title>#' "$work/$1.svg" >"docs/board-$name-$1.svg"
	}
	plot front F.Cu,F.SilkS,Edge.Cuts
	plot back B.Cu,B.SilkS,Edge.Cuts --mirror
	# The power LED's footprint (LED_D5.0mm, the board's only one) links
	# KiCad's red LED model; the BOM's LED is blue, so the render shows
	# KiCad's blue one, on a copy of the board.
	sed -e 's#LED_THT.3dshapes/LED_D5.0mm.step#LED_THT.3dshapes/LED_D5.0mm_Blue.step#' "$pcb" >"$work/$base.kicad_pcb"
	KICAD9_3DMODEL_DIR=$models kicad-cli pcb render --side top --quality high --width 1600 --height 1000 --zoom 0.95 -o "docs/board-$name-3d.png" "$work/$base.kicad_pcb" >/dev/null
	echo "board-pictures: wrote docs/board-$name-{front,back}.svg and docs/board-$name-3d.png"
done
