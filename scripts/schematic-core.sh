#!/usr/bin/env bash
# schematic-core.sh: crop the core of the 4-PE sheet — the barrier's S0/S1
# NAND trees and flip-flops, and the interrupt trees — out of KiCad's plot
# docs/schematic-4pe.svg (scripts/board-pictures.sh runs it after plotting)
# into docs/schematic-4pe-core.png, the README's picture: the whole A1
# sheet is unreadable at a page's width.
#
# The crop is the two top-middle group boxes of the sheet with 1.27 mm
# around them, in the plot's units (mm, sheet coordinates, as in the
# .kicad_sch); if the layout of hw/kicad moves them, adjust VIEWBOX.
# Needs rsvg-convert (apt-get install librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")/.."
VIEWBOX="267.97 26.67 218.44 114.3" # x y width height
command -v rsvg-convert >/dev/null || { echo "schematic-core: rsvg-convert not found: apt-get install librsvg2-bin" >&2; exit 1; }
tmp=$(mktemp --suffix=.svg)
trap 'rm -f "$tmp"' EXIT
sed -E "0,/width=\"[^\"]*\" height=\"[^\"]*\" viewBox=\"[^\"]*\"/s//viewBox=\"$VIEWBOX\"/" docs/schematic-4pe.svg >"$tmp"
rsvg-convert -w 1800 -b white "$tmp" -o docs/schematic-4pe-core.png
echo "wrote docs/schematic-4pe-core.png"
