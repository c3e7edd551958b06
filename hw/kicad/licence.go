package kicad

import _ "embed"

// licenceText is CERN-OHL-P-2.0, unmodified, as the licence requires; the
// generator writes it as kicad/LICENSE. (Kept here under a name that is not
// LICENSE, so that this Go package stays under the code's licence.)
//
//go:embed cern-ohl-p-2.0.txt
var licenceText []byte

// Notice is the licence notice every generated KiCad file carries in its
// title block.
const Notice = "Copyright the ttlpapers authors. Licensed under CERN-OHL-P-2.0 (kicad/LICENSE in the ttlpapers repository)."
